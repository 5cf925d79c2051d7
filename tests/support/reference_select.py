"""A pure-Python re-implementation of the reference code's library selector (`SkillHandbook.select_agent`,
reference doc section 6.4), written from that description: the benchmark baseline and a cross-check of the
vectorised `reference-rule` variant "select_agent". Dicts of empirical rates, as the reference keeps them."""

from __future__ import annotations

import random


def category_competence(rates: dict[str, float], prefix: str) -> float:
    vals = [r for sid, r in rates.items() if sid.startswith(prefix + ".")]
    return sum(vals) / len(vals) if vals else 0.0


def select_agent(profiles: dict[str, dict], weights: dict[str, float], lam: float = 0.1,
                 rng: random.Random | None = None) -> str:
    """profiles: agent -> {"rates": {skill: empirical rate}, "overall": rate, "cost": avg USD}."""
    scores = {}
    for agent, p in profiles.items():
        if not weights:
            scores[agent] = 0.5
        else:
            scores[agent] = sum(w * p["rates"].get(sid, 0.0) for sid, w in weights.items())
    best = max(scores.values())
    tied = [a for a, s in scores.items() if s >= best - 1e-6]
    if len(tied) == 1:
        return tied[0]
    cats = {sid.rsplit(".", 1)[0] if "." in sid else sid for sid in weights}
    cat = {a: (sum(category_competence(profiles[a]["rates"], c) for c in cats) / len(cats) if cats else 0.0)
           for a in tied}
    top = max(cat.values())
    tied = [a for a in tied if cat[a] >= top - 1e-6]
    if len(tied) == 1:
        return tied[0]
    top = max(profiles[a]["overall"] for a in tied)
    tied = [a for a in tied if profiles[a]["overall"] >= top - 1e-6]
    if len(tied) == 1:
        return tied[0]
    w = [max(0.0, 1.0 - lam * profiles[a]["cost"]) for a in tied]
    return (rng or random.Random(0)).choices(tied, weights=w if sum(w) > 0 else None)[0]
