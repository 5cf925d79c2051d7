"""Replay validation: score each choice with the chosen agent's recorded outcome, for many candidates and lambdas.

The held-out evaluator (routing.evaluate) turns a split into arrays (`split_queries`) and gives each candidate's
expected competence per query (`skill_competence`) or a baseline router's choices (`choices`). A sweep is then one
broadcast: utilities (N candidates, L lambdas, Q queries, A agents), an argmax with the evaluator's tie rule (within
TIE_EPS, the lower tie rank), and a gather of recorded scores and costs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skillorchestra_core.routing.utility import TIE_EPS


@dataclass(frozen=True)
class Grid:
    """Replay of N candidates x L lambdas over Q queries."""

    chosen: np.ndarray  # (N, L, Q) agent index
    accuracy: np.ndarray  # (N, L) mean recorded score over the scored queries (NaN when none is scored)
    mean_cost: np.ndarray  # (N, L) mean cost per query in USD
    n_scored: np.ndarray  # (N, L) queries whose chosen agent has a recorded score


def choose_grid(c: np.ndarray, k: np.ndarray, rank: np.ndarray, lambdas: np.ndarray) -> np.ndarray:
    """(N, L, Q) argmax over agents of c - lambda k, ties (within TIE_EPS) to the lowest tie rank.
    `c` (N, Q, A) competence, `k` (N, A) or (A,) cost in the router's unit, or (N, Q, A) per query (per-skill
    costs), `rank` (A,) tie rank."""
    c = np.asarray(c, float)
    n, q, a = c.shape
    lambdas = np.asarray(lambdas, float)
    k = np.asarray(k, float)
    k = np.broadcast_to(k, (n, q, a)) if k.ndim == 3 else np.broadcast_to(k, (n, a))[:, None, :]
    prefer = (a - np.asarray(rank, float))  # > 0, larger for a lower tie rank: argmax among the tied agents
    out = np.empty((n, len(lambdas), q), dtype=np.int64)
    for i in range(n):  # one candidate's (L, Q, A) block at a time stays in cache
        u = c[i][None, :, :] - lambdas[:, None, None] * k[i][None, :, :]
        top = u.max(axis=-1, keepdims=True)
        out[i] = np.argmax((u >= top - TIE_EPS) * prefer, axis=-1)
    return out


def score_grid(chosen: np.ndarray, score: np.ndarray, cost: np.ndarray) -> Grid:
    """Gather the recorded (Q, A) score and cost of each choice; accuracy over the queries with a record."""
    rows = np.arange(score.shape[0])
    s = score[rows, chosen]  # (N, L, Q)
    c = cost[rows, chosen]
    scored = ~np.isnan(s)
    n_scored = scored.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(n_scored > 0, np.nansum(s, axis=-1) / np.maximum(n_scored, 1), np.nan)
    mean_cost = c.mean(axis=-1) if score.shape[0] else np.full(chosen.shape[:2], np.nan)
    return Grid(chosen, acc, mean_cost, n_scored)


def replay(c: np.ndarray, k: np.ndarray, rank: np.ndarray, lambdas, score: np.ndarray, cost: np.ndarray) -> Grid:
    """The whole sweep: choices of every (candidate, lambda) and their recorded outcome and cost."""
    return score_grid(choose_grid(c, k, rank, np.asarray(lambdas, float)), score, cost)


def calls(chosen: np.ndarray, agents: list[str]) -> dict[str, int]:
    counts = np.bincount(chosen, minlength=len(agents))
    return {a: int(n) for a, n in zip(agents, counts) if n}
