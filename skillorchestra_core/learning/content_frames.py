"""A version's content as the frames every competence and cost computation reads (no evidence: see profile)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skillorchestra_core.handbook.content import HandbookContent


@dataclass(frozen=True)
class ContentFrames:
    attributions: pd.DataFrame  # query_id, mode, skill, weight, attributed_by
    skills: pd.DataFrame  # skill, mode, parent, name
    agents: pd.DataFrame  # agent, mode, model, prices, imported_cost_usd
    imported: pd.DataFrame  # agent, mode, skill, alpha, beta


def content_frames(c: HandbookContent) -> ContentFrames:
    attributions = pd.DataFrame(
        [(q, m, k, w, by) for (q, m, k), (w, by) in c.attributions.items()],
        columns=["query_id", "mode", "skill", "weight", "attributed_by"],
    )
    skills = pd.DataFrame([(k.key, k.mode, k.parent_key, k.name or k.key) for k in c.skills.values()],
                          columns=["skill", "mode", "parent", "name"])
    agents = pd.DataFrame(
        [(a.name, a.mode, a.model,
          np.nan if a.input_price_per_m is None else a.input_price_per_m,
          np.nan if a.output_price_per_m is None else a.output_price_per_m,
          _imported_cost(a.profile), _number(a.profile, "total_successes"), _number(a.profile, "total_attempts"))
         for a in c.agents.values()],
        columns=["agent", "mode", "model", "input_price_per_m", "output_price_per_m", "imported_cost_usd",
                 "imported_successes", "imported_attempts"],
    )
    imported = pd.DataFrame([(i.agent, i.mode, i.skill_key, i.alpha, i.beta) for i in c.imported.values()],
                            columns=["agent", "mode", "skill", "alpha", "beta"])
    return ContentFrames(attributions, skills, agents, imported)


def _number(profile_: dict, key: str) -> float:
    value = profile_.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _imported_cost(profile_: dict) -> float:
    value = (profile_.get("cost_stats") or {}).get("avg_cost_usd")
    return np.nan if value is None else float(value)
