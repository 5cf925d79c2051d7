"""The reference code's routing rule, reproduced on a ModeTable (reference doc sections 6.2 and 6.4).

weighted_avg (model routing, `route_by_weighted_avg`, 6.2):
  1. score_A = sum_s p_s r_{A,s} / sum_s p_s, r = the exported skill score: the empirical rate S/n rounded to 4
     decimals, 0.0 for an unseen skill;
  2. every agent within 1e-9 of the best is tied; a single agent wins outright;
  3. tie-break 1, category level: per category (skill id minus its last segment) of the required skills, the
     p-weighted mean of the agent's scores, combined weighted by each category's total p (algebraically this equals
     step 1, so in practice it never separates a tie; it is kept to follow the code);
  4. tie-break 2: the overall success rate;
  5. tie-break 3: a draw weighted by max(0, 1 - lambda x cost / max cost among the tied) (seeded here).
select_agent (library selector, 6.4): score = sum_s w_s x empirical rate (not normalised; 0.5 without skills), ties
  within 1e-6, category tie-break = the unweighted mean of the agent's rates over all its skills in each active
  skill's category, then the overall success rate, then a draw weighted by max(0, 1 - lambda x raw USD cost).
Cost therefore enters only among exact ties.
"""

from __future__ import annotations

import numpy as np

from skillorchestra_core.routing.model import ModeTable


def _tied(values: np.ndarray, among: np.ndarray, eps: float) -> np.ndarray:
    v = values[among]
    return among[v >= v.max() - eps]


def _category(key: str) -> str:
    return key.rsplit(".", 1)[0] if "." in key else key


def _weighted_avg_scores(table: ModeTable, skills: list[str], weights: np.ndarray):
    idx = table.indices(skills)
    rates = np.round(table.empirical[:, idx], 4)
    total = float(weights.sum())
    score = rates @ weights / total if total > 0 else np.zeros(len(table.agents))
    cats: dict[str, list[int]] = {}
    for j, key in enumerate(skills):
        cats.setdefault(_category(key), []).append(j)
    combined = np.zeros(len(table.agents))
    mass = 0.0
    for cols in cats.values():
        p = weights[cols]
        if p.sum() > 0:
            combined += p.sum() * (rates[:, cols] @ p / p.sum())
            mass += p.sum()
    category = combined / mass if mass > 0 else np.zeros(len(table.agents))
    return score, category, 1e-9


def _select_agent_scores(table: ModeTable, skills: list[str], weights: np.ndarray):
    idx = table.indices(skills)
    rates = table.empirical
    score = rates[:, idx] @ weights if len(idx) else np.full(len(table.agents), 0.5)
    prefixes = sorted({_category(k) for k in skills})
    per_cat = []
    for prefix in prefixes:
        cols = [j for j, key in enumerate(table.skills) if key.startswith(prefix + ".")]
        per_cat.append(rates[:, cols].mean(axis=1) if cols else np.zeros(len(table.agents)))
    category = np.mean(per_cat, axis=0) if per_cat else np.zeros(len(table.agents))
    return score, category, 1e-6


def reference_choice(table: ModeTable, skills: list[str], weights: np.ndarray, lam: float,
                     rng: np.random.Generator, variant: str = "weighted_avg") -> tuple[int, str, np.ndarray]:
    """(chosen index, cause, primary score) following the reference code."""
    weights = np.asarray(weights, float)
    if variant == "weighted_avg":
        score, category, eps = _weighted_avg_scores(table, skills, weights)
    else:
        score, category, eps = _select_agent_scores(table, skills, weights)
    tied = _tied(score, np.arange(len(table.agents)), eps)
    if len(tied) == 1:
        return int(tied[0]), "reference_score", score
    tied = _tied(category, tied, eps)
    if len(tied) == 1:
        return int(tied[0]), "reference_tie_category", score
    tied = _tied(table.overall_rate, tied, eps)
    if len(tied) == 1:
        return int(tied[0]), "reference_tie_overall", score
    cost = table.cost[tied]
    if variant == "weighted_avg":
        top = cost.max()
        cost = cost / top if top > 0 else np.zeros(len(tied))
    w = np.maximum(0.0, 1.0 - lam * cost)
    p = w / w.sum() if w.sum() > 0 else np.full(len(tied), 1.0 / len(tied))
    return int(tied[rng.choice(len(tied), p=p)]), "reference_tie_random", score
