"""Vectorised routing of many queries in one mode with the skill rule: the same choices as one-by-one routing.

Inputs are padded arrays: `idx` (Q, S) active skill columns and `weights` (Q, S), zero weight for padding; a row with
no weight uses the agents' general competence (as `decide_step` does). Ties within TIE_EPS go to the lower cost, then
the name, exactly like `utility.argmax_tiebreak`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skillorchestra_core.routing.activation import activate_batch
from skillorchestra_core.routing.inputs import check_lambda, check_query
from skillorchestra_core.routing.learned_activation import BatchActivation
from skillorchestra_core.routing.model import ModeTable, RoutingModel
from skillorchestra_core.routing.utility import TIE_EPS, cost_scope_name

if TYPE_CHECKING:  # pandas only for the table views, not to route or store a trace
    import pandas as pd

CHUNK = 4096  # rows per block: the (rows x agents) working arrays stay in cache


def batch_competence(table: ModeTable, idx: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(Q, A) weighted competence c_A per query."""
    if idx.shape[1] == 0:  # no skill active (or none in the mode): general competence decides
        return np.tile(np.asarray(table.general, float), (idx.shape[0], 1))
    mt = table.cached_transpose()
    out = weights[:, 0, None] * mt.take(idx[:, 0], axis=0)
    tmp = np.empty_like(out)
    for j in range(1, idx.shape[1]):
        np.multiply(weights[:, j, None], mt.take(idx[:, j], axis=0), out=tmp)
        out += tmp
    empty = weights.sum(axis=1) <= 0
    if empty.any():
        out[empty] = table.general
    return out


def batch_cost(table: ModeTable, idx: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(Q, A) expected USD per call: sum_s w_s C(A, s) with each row's weights normalised; C(A, mode) for a row
    without weight (as `ModeTable.query_cost`)."""
    sct = np.ascontiguousarray(table.skill_cost.T)  # type: ignore[union-attr]  # set in ModeTable.__post_init__
    total = weights.sum(axis=1)
    empty = total <= 0
    w = weights / np.where(empty, 1.0, total)[:, None]
    out = w[:, 0, None] * sct.take(idx[:, 0], axis=0)
    for j in range(1, idx.shape[1]):
        out += w[:, j, None] * sct.take(idx[:, j], axis=0)
    if empty.any():
        out[empty] = table.cost
    return out


def batch_choose(table: ModeTable, idx: np.ndarray, weights: np.ndarray, lam: float,
                 cost_unit: str = "normalised", cost_scope: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(chosen agent index (Q,), chosen utility (Q,)) for every query. Cost scope "skill" (the default setting)
    weighs each query's expected per-skill cost, "mode" the agents' mode cost."""
    idx = np.asarray(idx, dtype=np.int64)
    weights = np.asarray(weights, dtype=float)
    per_skill = cost_scope_name(cost_scope) == "skill" and lam > 0 and len(table.skills) > 0 and not table.uniform_cost
    penalty = lam * table.costs_in(cost_unit)[0]
    rank = table.tie_rank.astype(float)
    chosen = np.empty(idx.shape[0], dtype=np.int64)
    best = np.empty(idx.shape[0])
    for start in range(0, idx.shape[0], CHUNK):
        sl = slice(start, start + CHUNK)
        u = batch_competence(table, idx[sl], weights[sl])
        if per_skill:
            u -= lam * table.normalise(batch_cost(table, idx[sl], weights[sl]), cost_unit)
        else:
            u -= penalty
        top = u.max(axis=1)
        best[sl] = top
        chosen[sl] = np.argmin(np.where(u >= (top - TIE_EPS)[:, None], rank, np.inf), axis=1)
    return chosen, best


def pad_activations(table: ModeTable, activations: list[list[tuple[str, float]]]) -> tuple[np.ndarray, np.ndarray]:
    """Padded (idx, weights) from per-query [(skill, weight), ...] lists (unknown skills dropped, weights
    renormalised)."""
    width = max((len(a) for a in activations), default=0) or 1
    idx = np.zeros((len(activations), width), dtype=np.int64)
    w = np.zeros((len(activations), width))
    for q, act in enumerate(activations):
        kept = [(table.skill_index[s], x) for s, x in act if s in table.skill_index]
        total = sum(x for _, x in kept)
        for j, (col, x) in enumerate(kept):
            idx[q, j], w[q, j] = col, (x / total if total > 0 else 0.0)
    return idx, w


def padded(table: ModeTable, act: BatchActivation) -> tuple[np.ndarray, np.ndarray]:
    """Padded (idx, weights) table columns from a batch activation: each row's active skills, heaviest first."""
    w = act.weights
    if not act.skills:
        return np.zeros((w.shape[0], 1), dtype=np.int64), np.zeros((w.shape[0], 1))
    width = max(int((w > 0).sum(axis=1).max(initial=0)), 1)
    order = np.argsort(-w, axis=1, kind="stable")[:, :width]
    return table.indices(act.skills)[order], np.take_along_axis(w, order, axis=1)


@dataclass(frozen=True)
class BatchResult:
    mode: str
    agents: list[str]
    utilities: np.ndarray

    def frame(self, queries: list[str]) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({"query": queries, "mode": self.mode, "agent": self.agents, "utility": self.utilities})


def route_batch(model: RoutingModel, queries: list[str], *, lam: float, mode: str | None = None,
                cost_unit: str = "normalised", top_k: int = 3, cost_scope: str | None = None) -> BatchResult:
    """Offline activation of all queries at once (`activate_batch`), then one vectorised decision per query in `mode`
    (default: the terminal mode for multi-mode handbooks, the only mode otherwise)."""
    lam = check_lambda(lam)
    queries = [check_query(q, i) for i, q in enumerate(queries)]
    mode = mode or (model.mode_names[0] if len(model.modes) == 1 else model.terminal_mode())
    table = model.table(mode)
    idx, w = padded(table, activate_batch(model, mode, list(queries), top_k))
    chosen, best = batch_choose(table, idx, w, lam, cost_unit, cost_scope)
    return BatchResult(mode, [table.agents[i] for i in chosen], best)
