"""Per-(agent, skill) cost estimates C(A, s) from the learn-split evidence.

One mean cost per (agent, mode) prices a cheap question and a long proof alike; the cost of the calls attributed to a
skill tells them apart. For agent A and skill s of a mode:

    W(A, s)  = sum of w(q, s) over A's trajectories in the mode          (attribution-weighted calls)
    WC(A, s) = sum of w(q, s) * cost(trajectory)
    C(A, s)  = (WC + m * C(A, mode)) / (W + m)

A parent skill counts its subtree (as competence does), and the m pseudo-calls (SHRINK_CALLS) at the agent's mode
cost keep a skill seen a handful of times near the mode cost; a skill never seen costs exactly C(A, mode).
Trajectories without a usable cost (no recorded cost, no tokens or no price) are left out of both sums.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from skillorchestra_core.evidence.costs import trajectory_costs

SHRINK_CALLS = 5.0  # pseudo-calls at the agent's mode cost
COLUMNS = ["agent", "mode", "skill", "cost", "n_cost"]


def skill_costs(outcomes: pd.DataFrame, attributions: pd.DataFrame, skills: pd.DataFrame, agents: pd.DataFrame,
                mode_cost: pd.DataFrame, shrink: float = SHRINK_CALLS,
                imported: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (agent, skill) of the same mode: `cost` C(A, s) in USD per call and `n_cost` W(A, s).

    `outcomes`: query_id, agent, mode, cost_usd, prompt_tokens, completion_tokens (the learn splits only);
    `attributions`: query_id, mode, skill, weight; `skills`: skill, mode, parent; `agents`: agent, mode and prices;
    `mode_cost`: agent, mode, cost (`costs.mode_costs`); `imported`: agent, mode, skill, calls, cost_usd, the
    per-skill costs a handbook file carried (already summed over each subtree, so added as they are)."""
    from skillorchestra_core.learning.competence import ancestor_pairs

    if shrink < 0:
        raise ValueError(f"shrinkage must be >= 0 pseudo-calls, got {shrink}")
    grid = agents[["agent", "mode"]].drop_duplicates().merge(skills[["skill", "mode"]], on="mode")
    sums = pd.DataFrame(columns=["agent", "mode", "skill", "W", "WC"])
    if len(outcomes) and len(attributions):
        t = outcomes[["query_id", "agent", "mode"]].assign(_cost=trajectory_costs(outcomes, agents))
        t = t[~np.isnan(t["_cost"].to_numpy(float))]
        rolled = attributions.merge(ancestor_pairs(skills), on="skill").groupby(
            ["query_id", "mode", "target"], as_index=False, sort=False)["weight"].sum()
        joined = t.merge(rolled, on=["query_id", "mode"])
        joined["WC"] = joined["weight"] * joined["_cost"]
        sums = (joined.rename(columns={"weight": "W", "target": "skill"})
                .groupby(["agent", "mode", "skill"], as_index=False, sort=False)[["W", "WC"]].sum())
    if imported is not None and len(imported):
        extra = imported.assign(W=imported["calls"].astype(float),
                                WC=imported["calls"].astype(float) * imported["cost_usd"].astype(float))
        sums = pd.concat([sums, extra[["agent", "mode", "skill", "W", "WC"]]]).groupby(
            ["agent", "mode", "skill"], as_index=False, sort=False)[["W", "WC"]].sum()
    grid = grid.merge(sums, on=["agent", "mode", "skill"], how="left")
    grid = grid.merge(mode_cost[["agent", "mode", "cost"]].rename(columns={"cost": "_mode"}),
                      on=["agent", "mode"], how="left")
    w = grid["W"].astype(float).fillna(0.0).to_numpy()
    wc = grid["WC"].astype(float).fillna(0.0).to_numpy()
    base = grid["_mode"].astype(float).fillna(0.0).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        cost = np.where(w + shrink > 0, (wc + shrink * base) / np.where(w + shrink > 0, w + shrink, 1.0), base)
    grid["cost"], grid["n_cost"] = cost, w
    return grid[COLUMNS].sort_values(["mode", "skill", "agent"], kind="stable").reset_index(drop=True)



def imported_skill_costs(agents) -> pd.DataFrame:
    """The per-skill costs a handbook file carried in its agents' profiles (`profile["skill_costs"]`:
    {skill: {"calls": W, "cost_usd": mean}}) as agent, mode, skill, calls, cost_usd rows. `agents`: AgentSpecs."""
    rows = []
    for a in agents:
        for skill, entry in sorted((a.profile.get("skill_costs") or {}).items()):
            if isinstance(entry, dict):
                rows.append((a.name, a.mode, skill, float(entry.get("calls") or 0.0),
                             float(entry.get("cost_usd") or 0.0)))
    return pd.DataFrame(rows, columns=["agent", "mode", "skill", "calls", "cost_usd"])
