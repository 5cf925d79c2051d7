"""The former per-row evidence index (five pandas lookups per trajectory): the reference the vectorised index is
tested against and the baseline of the build benchmark."""

from __future__ import annotations

import numpy as np
import pandas as pd

from skillorchestra_core.evidence.costs import trajectory_costs


def per_row_outcomes(o: pd.DataFrame, agents: pd.DataFrame) -> dict:
    """(query id, mode, agent) -> (score, cost or None, trajectory id): import evidence first, then oldest first."""
    out: dict = {}
    cost = trajectory_costs(o, agents)
    order = np.lexsort((o["trajectory_id"].to_numpy(), (o["source"] != "import").to_numpy()))
    for i in order:
        key = (int(o["query_id"].iat[i]), str(o["mode"].iat[i]), str(o["agent"].iat[i]))
        if key not in out:
            ci = float(cost[i])
            out[key] = (float(o["score"].iat[i]), None if np.isnan(ci) else ci, int(o["trajectory_id"].iat[i]))
    return out
