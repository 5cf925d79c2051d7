"""Pareto frontier over (mean cost, accuracy), the selection objective, and bootstrap bands over queries."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TIE = 1e-12


def frontier(cost, accuracy) -> np.ndarray:
    """(n,) bool: the points no other point dominates (no more cost and no less accuracy, one of them strictly).
    Identical points are all kept (neither dominates the other); points with a NaN coordinate are never kept."""
    cost, acc = np.asarray(cost, float), np.asarray(accuracy, float)
    ok = ~(np.isnan(cost) | np.isnan(acc))
    keep = np.zeros(len(cost), bool)
    if not ok.any():
        return keep
    idx = np.flatnonzero(ok)
    c, a = cost[idx], acc[idx]
    uniq, group = np.unique(c, return_inverse=True)
    best_at = np.full(len(uniq), -np.inf)
    np.maximum.at(best_at, group, a)
    cheaper_best = np.concatenate([[-np.inf], np.maximum.accumulate(best_at)[:-1]])  # best of strictly cheaper costs
    keep[idx] = (a >= best_at[group]) & (a > cheaper_best[group])
    return keep


def objective(accuracy, normalised_cost, lam: float) -> np.ndarray:
    """accuracy - lambda x normalised cost (cost in units of the best single agent's cost on the same split)."""
    return np.asarray(accuracy, float) - float(lam) * np.asarray(normalised_cost, float)


def select(accuracy, normalised_cost, n_skills, lam: float) -> int | None:
    """Index maximising the objective; ties to fewer skills, then lower cost, then the first. None if nothing."""
    score = objective(accuracy, normalised_cost, lam)
    if np.isnan(score).all():
        return None
    score = np.where(np.isnan(score), -np.inf, score)
    tied = np.flatnonzero(score >= score.max() - TIE)
    order = np.lexsort((tied, np.asarray(normalised_cost, float)[tied], np.asarray(n_skills)[tied]))
    return int(tied[order[0]])


@dataclass(frozen=True)
class Bands:
    acc_low: np.ndarray
    acc_high: np.ndarray
    cost_low: np.ndarray
    cost_high: np.ndarray


def bootstrap(score: np.ndarray, cost: np.ndarray, rng: np.random.Generator, *, n_boot: int = 200,
              level: float = 0.95) -> Bands:
    """Percentile intervals of each run's accuracy and mean cost over `n_boot` resamples of the queries, paired
    (every run sees the same resamples). `score`, `cost`: (R, Q); NaN scores are left out of the accuracy."""
    score, cost = np.atleast_2d(np.asarray(score, float)), np.atleast_2d(np.asarray(cost, float))
    q = score.shape[1]
    counts = rng.multinomial(q, np.full(q, 1.0 / q), size=n_boot).astype(float).T  # (Q, B) resample weights
    seen = ~np.isnan(score)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = (np.where(seen, score, 0.0) @ counts) / (seen.astype(float) @ counts)
    mc = cost @ counts / q
    lo, hi = (1 - level) / 2 * 100, (1 + level) / 2 * 100
    return Bands(np.nanpercentile(acc, lo, axis=1), np.nanpercentile(acc, hi, axis=1),
                 np.percentile(mc, lo, axis=1), np.percentile(mc, hi, axis=1))
