"""Competence derived from evidence: one Beta posterior per (agent, skill) of a version.

S = sum of w(q, s) * score and F = sum of w(q, s) * (1 - score) over the agent's trajectories in the skill's mode;
posterior Beta(a0 + S + S_imported, b0 + F + F_imported). A skill with children also counts its descendants'
evidence, so a parent summarises its subtree and nothing is counted twice within one level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skillorchestra_core import posterior

COLUMNS = [
    "agent", "mode", "skill", "S", "F", "n", "s_imported", "f_imported", "n_imported", "a0", "b0", "alpha", "beta",
    "mean", "ci_low", "ci_high", "empirical_rate", "basis",
]


@dataclass(frozen=True)
class PriorConfig:
    kind: str = "hierarchical"  # or "flat"
    strength: float = 2.0

    def __post_init__(self) -> None:
        if self.kind not in ("hierarchical", "flat"):
            raise ValueError(f"unknown prior {self.kind!r}; use 'hierarchical' or 'flat'")


def ancestor_pairs(skills: pd.DataFrame) -> pd.DataFrame:
    """(skill, target) for every skill and each of its ancestors, itself included. `skills`: skill, parent."""
    parent = dict(zip(skills["skill"], skills["parent"]))
    rows = []
    for key in parent:
        node, seen = key, set()
        while node is not None and node in parent and node not in seen:
            rows.append((key, node))
            seen.add(node)
            node = parent[node] if isinstance(parent[node], str) else None
    return pd.DataFrame(rows, columns=["skill", "target"])


def weighted_counts(outcomes: pd.DataFrame, attributions: pd.DataFrame, skills: pd.DataFrame) -> pd.DataFrame:
    """S and F per (agent, mode, skill). `outcomes`: query_id, agent, mode, score; `attributions`: query_id, mode,
    skill, weight; `skills`: skill, parent."""
    if outcomes.empty or attributions.empty:
        return pd.DataFrame(columns=["agent", "mode", "skill", "S", "F"])
    rolled = attributions.merge(ancestor_pairs(skills), on="skill").groupby(
        ["query_id", "mode", "target"], as_index=False, sort=False)["weight"].sum()
    joined = outcomes[["query_id", "agent", "mode", "score"]].merge(rolled, on=["query_id", "mode"])
    joined["S"] = joined["weight"] * joined["score"]
    joined["F"] = joined["weight"] * (1.0 - joined["score"])
    out = joined.groupby(["agent", "mode", "target"], as_index=False, sort=False)[["S", "F"]].sum()
    return out.rename(columns={"target": "skill"})


def competence_table(
    outcomes: pd.DataFrame,
    attributions: pd.DataFrame,
    skills: pd.DataFrame,
    agents: pd.DataFrame,
    imported: pd.DataFrame | None = None,
    prior: PriorConfig = PriorConfig(),
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per (agent, skill) of the same mode with counts, prior, posterior mean, interval and empirical rate.

    `skills`: skill, mode, parent. `agents`: agent, mode. `imported`: agent, mode, skill, alpha, beta (reference
    handbook counts, which include the reference code's Beta(1,1) prior; only the excess over 1 is kept).
    """
    grid = agents[["agent", "mode"]].merge(skills[["skill", "mode"]], on="mode")
    counts = weighted_counts(outcomes, attributions, skills)
    grid = grid.merge(counts, on=["agent", "mode", "skill"], how="left")
    if imported is not None and not imported.empty:
        imp = imported.assign(s_imported=(imported["alpha"] - 1.0).clip(lower=0.0),
                              f_imported=(imported["beta"] - 1.0).clip(lower=0.0))
        grid = grid.merge(imp[["agent", "mode", "skill", "s_imported", "f_imported"]],
                          on=["agent", "mode", "skill"], how="left")
    else:
        grid["s_imported"] = 0.0
        grid["f_imported"] = 0.0
    for col in ("S", "F", "s_imported", "f_imported"):
        grid[col] = grid[col].astype(float).fillna(0.0)
    grid["n"] = grid["S"] + grid["F"]
    grid["n_imported"] = grid["s_imported"] + grid["f_imported"]

    if prior.kind == "flat":
        a0, b0 = posterior.flat_prior(len(grid))
    else:
        pooled = _pooled_mode_rates(outcomes, _leaf_rows(imported, skills))
        g = grid.merge(pooled, on=["agent", "mode"], how="left").fillna({"s_mode": 0.0, "n_mode": 0.0})
        a0, b0 = posterior.hierarchical_prior(g["s_mode"], g["n_mode"], prior.strength)
    grid["a0"], grid["b0"] = a0, b0
    grid["alpha"], grid["beta"] = posterior.posterior_params(grid["S"] + grid["s_imported"],
                                                             grid["F"] + grid["f_imported"], a0, b0)
    grid["mean"] = posterior.posterior_mean(grid["alpha"], grid["beta"])
    grid["ci_low"], grid["ci_high"] = posterior.credible_interval(grid["alpha"], grid["beta"], level)
    grid["empirical_rate"] = posterior.empirical_rate(grid["S"], grid["F"])
    has_ev, has_imp = grid["n"].to_numpy() > 0, grid["n_imported"].to_numpy() > 0
    grid["basis"] = np.select([has_ev & has_imp, has_ev, has_imp], ["evidence+imported", "evidence", "imported"],
                              "prior only")
    return grid[COLUMNS].sort_values(["mode", "skill", "agent"], kind="stable").reset_index(drop=True)


def _leaf_rows(imported: pd.DataFrame | None, skills: pd.DataFrame) -> pd.DataFrame | None:
    """Imported counts of leaf skills only, so a parent's counts do not pool twice with its children's."""
    if imported is None or imported.empty:
        return imported
    parents = set(skills["parent"].dropna())
    return imported[~imported["skill"].isin(parents)]


def _pooled_mode_rates(outcomes: pd.DataFrame, imported: pd.DataFrame | None) -> pd.DataFrame:
    """Successes and attempts per (agent, mode) over all the agent's evidence in the mode, plus imported counts."""
    parts = []
    if not outcomes.empty:
        parts.append(outcomes.groupby(["agent", "mode"], as_index=False).agg(s_mode=("score", "sum"),
                                                                            n_mode=("score", "size")))
    if imported is not None and not imported.empty:
        s_imp = (imported["alpha"] - 1.0).clip(lower=0.0)
        f_imp = (imported["beta"] - 1.0).clip(lower=0.0)
        parts.append(imported.assign(s_mode=s_imp, n_mode=s_imp + f_imp)
                     .groupby(["agent", "mode"], as_index=False)[["s_mode", "n_mode"]].sum())
    if not parts:
        return pd.DataFrame(columns=["agent", "mode", "s_mode", "n_mode"])
    return pd.concat(parts).groupby(["agent", "mode"], as_index=False)[["s_mode", "n_mode"]].sum()
