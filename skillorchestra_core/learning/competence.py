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
    return competence_from_counts(weighted_counts(outcomes, attributions, skills), outcome_pool(outcomes), skills,
                                  agents, imported, prior, level)


def competence_from_counts(
    counts: pd.DataFrame,
    pool: pd.DataFrame,
    skills: pd.DataFrame,
    agents: pd.DataFrame,
    imported: pd.DataFrame | None = None,
    prior: PriorConfig = PriorConfig(),
    level: float = 0.95,
) -> pd.DataFrame:
    """`competence_table` from the evidence's summary: `counts` (agent, mode, skill, S, F: `weighted_counts`) and
    `pool` (agent, mode, s_mode, n_mode: `outcome_pool`). The one place a posterior is made from counts, whether
    they were just summed from trajectories or read back from a version's stored summary."""
    grid = agents[["agent", "mode"]].merge(skills[["skill", "mode"]], on="mode")
    grid = grid.merge(counts[["agent", "mode", "skill", "S", "F"]], on=["agent", "mode", "skill"], how="left")
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
        pooled = pooled_from(pool, agents, imported, skills)
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


def outcome_pool(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per (agent, mode) of the trajectories: successes `s_mode` (sum of scores) and attempts `n_mode`."""
    if outcomes.empty:
        return pd.DataFrame({"agent": pd.Series(dtype=object), "mode": pd.Series(dtype=object),
                             "s_mode": pd.Series(dtype=float), "n_mode": pd.Series(dtype=float)})
    return outcomes.groupby(["agent", "mode"], as_index=False).agg(s_mode=("score", "sum"), n_mode=("score", "size"))


def pooled_rates(outcomes: pd.DataFrame, agents: pd.DataFrame, imported: pd.DataFrame | None = None,
                 skills: pd.DataFrame | None = None) -> pd.DataFrame:
    """`pooled_from` the trajectories' `outcome_pool`."""
    return pooled_from(outcome_pool(outcomes), agents, imported, skills)


def pooled_from(pool: pd.DataFrame, agents: pd.DataFrame, imported: pd.DataFrame | None = None,
                skills: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (agent, mode): successes `s_mode`, attempts `n_mode` and rate `p = (s+1)/(n+2)` over everything known of
    the agent in the mode: its evidence plus what an imported profile brings. The hierarchical prior is centred on
    `p`, and `p` is the agent's score when no skill is active.

    An imported profile's own totals (`imported_successes`/`imported_attempts` in `agents`, the reference format's
    total_successes/total_attempts) are its pooled counts; without them its leaf skills' imported counts are summed
    (parents summarise their children, so they are left out)."""
    base = agents[["agent", "mode"]].drop_duplicates()
    parts = []
    if not pool.empty:
        parts.append(pool[["agent", "mode", "s_mode", "n_mode"]])
    totals = _imported_totals(agents)
    if not totals.empty:
        parts.append(totals)
    leaves = _leaf_rows(imported, skills) if skills is not None else imported
    if leaves is not None and not leaves.empty:
        leaves = leaves.merge(totals[["agent", "mode"]], on=["agent", "mode"], how="left", indicator=True)
        leaves = leaves[leaves["_merge"] == "left_only"]
        s_imp = (leaves["alpha"] - 1.0).clip(lower=0.0)
        f_imp = (leaves["beta"] - 1.0).clip(lower=0.0)
        parts.append(leaves.assign(s_mode=s_imp, n_mode=s_imp + f_imp)
                     .groupby(["agent", "mode"], as_index=False)[["s_mode", "n_mode"]].sum())
    if parts:
        summed = pd.concat(parts).groupby(["agent", "mode"], as_index=False)[["s_mode", "n_mode"]].sum()
        base = base.merge(summed, on=["agent", "mode"], how="left")
    else:
        base = base.assign(s_mode=0.0, n_mode=0.0)
    base = base.fillna({"s_mode": 0.0, "n_mode": 0.0})
    base["p"] = (base["s_mode"] + 1.0) / (base["n_mode"] + 2.0)
    return base.reset_index(drop=True)


def _imported_totals(agents: pd.DataFrame) -> pd.DataFrame:
    if "imported_attempts" not in agents:
        return pd.DataFrame(columns=["agent", "mode", "s_mode", "n_mode"])
    t = agents[agents["imported_attempts"].fillna(0.0) > 0]
    return pd.DataFrame({"agent": t["agent"], "mode": t["mode"],
                         "s_mode": t["imported_successes"].fillna(0.0).astype(float),
                         "n_mode": t["imported_attempts"].astype(float)})


def _leaf_rows(imported: pd.DataFrame | None, skills: pd.DataFrame) -> pd.DataFrame | None:
    """Imported counts that pool: a skill's counts are left out when a descendant of it has counts of the same
    agent (a reference handbook stores a parent's counts as its children's sum, so they would pool twice). A parent
    whose children carry no imported counts (after a split) still pools its own."""
    if imported is None or imported.empty:
        return imported
    pairs = ancestor_pairs(skills)
    above = pairs[pairs["skill"] != pairs["target"]]
    covered = imported[["agent", "mode", "skill"]].merge(above, on="skill")[["agent", "mode", "target"]]
    covered = covered.drop_duplicates().rename(columns={"target": "skill"})
    keep = imported.merge(covered, on=["agent", "mode", "skill"], how="left", indicator=True)["_merge"] == "left_only"
    return imported[keep.to_numpy()]
