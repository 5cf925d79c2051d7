"""Held-out evaluation: route every query of a split by its text and score the choice with its recorded outcome.

Queries are the split's stored queries with a recorded attempt in the evaluated mode; each is routed by its text
(never its task label) and the chosen agent's recorded (query id, mode, agent) score and cost are looked up by id,
so duplicated texts are scored exactly. Activation runs once for all queries (one sparse product), then every
lambda is one numpy argmax over (queries x agents). Every router of the registry can be evaluated, plus
`true-label`: the skill rule given the query's attributed skills instead of the activated ones (the ceiling of
activation).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Query
from skillorchestra_core.routing.activation import activate_batch
from skillorchestra_core.routing.model import ModeTable, RoutingModel
from skillorchestra_core.routing.reference import reference_choice
from skillorchestra_core.routing.routers import REGISTRY, stable_seed
from skillorchestra_core.routing.utility import TIE_EPS, argmax_tiebreak, cost_scope_name, cost_unit_name

TRUE_LABEL = "true-label"
SPLITS = ("test", "val", "train")


def evaluation_routers() -> list[str]:
    return [*REGISTRY, TRUE_LABEL]


@dataclass(frozen=True)
class SplitQueries:
    """The queries of one split in one mode, as arrays over the mode's agents and skills."""

    split: str
    mode: str
    ids: np.ndarray  # (Q,) query ids
    texts: list[str]
    truth: np.ndarray  # (Q, K) attributed skill weights over table.skills (a zero row: no attribution)
    score: np.ndarray  # (Q, A) recorded score, NaN without a record
    cost: np.ndarray  # (Q, A) recorded cost in USD, the agent's mean cost when the record has none


@dataclass(frozen=True)
class EvaluationResult:
    handbook: str
    version: int | None
    router: str
    lam: float
    split: str
    mode: str
    cost_unit: str
    cost_ref: float
    cost_ref_agent: str | None
    n_queries: int
    n_scored: int  # queries whose chosen agent has a recorded outcome
    accuracy: float | None
    mean_cost_usd: float | None
    calls_by_agent: dict[str, int]
    skill_identification: float | None  # share whose top activated skill is an attributed one (None: not used)
    cost_scope: str = "skill"  # the cost the router weighed: per-skill (skill) or per-agent (mode)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["lambda"] = d.pop("lam")
        return d


def split_queries(model: RoutingModel, rows: list[tuple[int, str]], attributions: dict, split: str,
                  mode: str) -> SplitQueries:
    """`rows` are (query id, text) of the split; `attributions` the version's {(qid, mode, skill): (w, by)}."""
    if model.evidence is None:
        raise ValueError(f"{model.label} has no evidence to score with: evaluate a stored version")
    table = model.table(mode)
    outcomes = model.evidence.outcomes
    keep = [(q, t) for q, t in rows if any((q, mode, a) in outcomes for a in table.agents)]
    ids = np.array([q for q, _ in keep], dtype=np.int64)
    score = np.full((len(keep), len(table.agents)), np.nan)
    cost = np.tile(table.cost, (len(keep), 1))
    for i, q in enumerate(ids.tolist()):
        for j, a in enumerate(table.agents):
            hit = outcomes.get((q, mode, a))
            if hit is not None:
                score[i, j] = hit[0]
                if hit[1] is not None:
                    cost[i, j] = hit[1]
    truth = np.zeros((len(keep), len(table.skills)))
    row = {q: i for i, q in enumerate(ids.tolist())}
    for (q, m, k), (w, _) in attributions.items():
        if m == mode and q in row and k in table.skill_index:
            truth[row[q], table.skill_index[k]] += w
    return SplitQueries(split, mode, ids, [t for _, t in keep], truth, score, cost)


def query_k(table: ModeTable, w: np.ndarray, cost_unit: str, cost_scope: str | None = None) -> np.ndarray:
    """Each query's normalised cost per agent for (Q, K) skill weights: (Q, A) with cost scope "skill", the mode's
    (A,) with "mode"."""
    if cost_scope_name(cost_scope) == "mode" or not len(table.skills) or table.uniform_cost:
        return table.costs_in(cost_unit)[0]
    return table.normalise(table.query_costs(w, "skill"), cost_unit)


def choose_all(table: ModeTable, c: np.ndarray, lambdas: np.ndarray, cost_unit: str,
               k: np.ndarray | None = None) -> np.ndarray:
    """(L, Q) chosen agent per lambda and query: argmax of c - lambda k, ties to the lower tie rank. `k`: (Q, A) or
    (A,) normalised costs (default: the mode costs)."""
    k = table.costs_in(cost_unit)[0] if k is None else k
    rank = table.tie_rank.astype(float)
    out = np.empty((len(lambdas), c.shape[0]), dtype=np.int64)
    for i, lam in enumerate(lambdas):
        u = c - lam * k
        top = u.max(axis=1, keepdims=True)
        out[i] = np.argmin(np.where(u >= top - TIE_EPS, rank, np.inf), axis=1)
    return out


def _competence(table: ModeTable, w: np.ndarray) -> np.ndarray:
    has = w.sum(axis=1, keepdims=True) > 0
    return np.where(has, (w / np.where(has, w.sum(axis=1, keepdims=True), 1.0)) @ table.mean.T, table.general)


def _dense(table: ModeTable, model: RoutingModel, q: SplitQueries, top_k: int) -> np.ndarray:
    act = activate_batch(model, q.mode, q.texts, top_k)
    w = np.zeros((len(q.texts), len(table.skills)))
    if act.skills:
        w[:, table.indices(act.skills)] = act.weights
    return w


def identification(w: np.ndarray, truth: np.ndarray) -> float | None:
    """Share of queries with an attribution whose top activated skill is one of its top attributed skills."""
    has = truth.sum(axis=1) > 0
    if not has.any():
        return None
    top = np.where(w.max(axis=1) > 0, w.argmax(axis=1), -1)[has]
    t = truth[has]
    hit = (top >= 0) & (t[np.arange(len(top)), np.maximum(top, 0)] >= t.max(axis=1) - 1e-12)
    return float(hit.mean())


def choices(model: RoutingModel, q: SplitQueries, router: str, lambdas: np.ndarray, *, cost_unit: str,
            seed: int = 0, top_k: int = 3, cost_scope: str | None = None) -> tuple[np.ndarray, float | None]:
    """((L, Q) chosen agent indices, skill identification or None when the router uses no activation)."""
    t = model.table(q.mode)
    scope = cost_scope_name(cost_scope)
    n, shape = len(q.texts), (len(lambdas), len(q.texts))
    if router in ("skill", TRUE_LABEL, "oracle", "reference-rule"):
        w = q.truth if router == TRUE_LABEL else _dense(t, model, q, top_k)
        chosen = choose_all(t, _competence(t, w), lambdas, cost_unit, query_k(t, w, cost_unit, scope))
        if router in ("skill", TRUE_LABEL):
            return chosen, identification(w, q.truth)
        if router == "oracle":  # the best recorded outcome, ties to the lower tie rank; no record: the skill rule
            s = np.where(np.isnan(q.score), -np.inf, q.score)
            best = np.argmin(np.where(s >= s.max(axis=1, keepdims=True) - TIE_EPS, t.tie_rank, np.inf), axis=1)
            return np.where(np.isfinite(s.max(axis=1)), best, chosen), None
        return _reference(t, w, q.texts, lambdas, seed), identification(w, q.truth)
    if router == "best-single":
        score = np.where(np.isnan(t.train_rate), t.overall_rate, t.train_rate)
        return np.full(shape, argmax_tiebreak(score, t.tie_rank)), None
    if router == "cheapest":
        if scope == "mode" or not len(t.skills):
            return np.full(shape, int(np.argmin(t.tie_rank))), None
        cost = t.query_costs(_dense(t, model, q, top_k), "skill")  # the query's expected cost, ties as the router
        pick = np.argmin(np.where(cost <= cost.min(axis=1, keepdims=True) + TIE_EPS, t.tie_rank, np.inf), axis=1)
        return np.tile(pick.astype(np.int64), (len(lambdas), 1)), None
    if router == "random":
        picks = [int(np.random.default_rng(stable_seed(seed, "random", x.strip(), 0)).integers(len(t.agents)))
                 for x in q.texts]
        return np.tile(np.array(picks, dtype=np.int64), (len(lambdas), 1)) if n else np.zeros(shape, int), None
    raise ValueError(f"unknown router {router!r}; choose from {', '.join(evaluation_routers())}")


def _reference(t: ModeTable, w: np.ndarray, texts: list[str], lambdas: np.ndarray, seed: int) -> np.ndarray:
    """The reference rule per query (its tie-breaks are sequential); only exact ties depend on lambda."""
    out = np.empty((len(lambdas), len(texts)), dtype=np.int64)
    for j, text in enumerate(texts):
        cols = np.flatnonzero(w[j] > 0)
        keys = [t.skills[c] for c in cols]
        for i, lam in enumerate(lambdas):
            rng = np.random.default_rng(stable_seed(seed, "reference", text.strip(), 0))
            out[i, j] = reference_choice(t, keys, w[j, cols] / max(w[j, cols].sum(), 1e-12), float(lam), rng)[0]
    return out


def evaluate_model(model: RoutingModel, q: SplitQueries, router: str, lambdas, *, cost_unit: str = "normalised",
                   seed: int = 0, top_k: int = 3, cost_scope: str | None = None) -> list[EvaluationResult]:
    cost_unit = cost_unit_name(cost_unit)
    cost_scope = cost_scope_name(cost_scope)
    lambdas = np.asarray([float(x) for x in lambdas], float)
    if (lambdas < 0).any() or np.isnan(lambdas).any():
        raise ValueError("lambda must be >= 0")
    t = model.table(q.mode)
    chosen, ident = choices(model, q, router, lambdas, cost_unit=cost_unit, seed=seed, top_k=top_k,
                            cost_scope=cost_scope)
    c_ref = t.costs_in(cost_unit)[1]
    rows = np.arange(len(q.texts))
    out = []
    for i, lam in enumerate(lambdas.tolist()):
        s, c = q.score[rows, chosen[i]], q.cost[rows, chosen[i]]
        scored = ~np.isnan(s)
        counts = np.bincount(chosen[i], minlength=len(t.agents))
        out.append(EvaluationResult(
            model.handbook, model.version, router, lam, q.split, q.mode, cost_unit, float(c_ref),
            t.cost_ref_agent(cost_unit), len(rows), int(scored.sum()),
            float(s[scored].mean()) if scored.any() else None, float(c.mean()) if len(rows) else None,
            {a: int(n) for a, n in zip(t.agents, counts) if n}, ident, cost_scope))
    return out


def evaluate(s: Session, handbook: str, *, split: str = "test", routers: list[str] | tuple[str, ...] = ("skill",),
             lambdas=(0.0,), version: int | None = None, mode: str | None = None, cost_unit: str = "normalised",
             seed: int = 0, top_k: int = 3, cost_scope: str | None = None) -> list[EvaluationResult]:
    """Evaluate routers on a split of a stored version (latest when None): one result per (router, lambda)."""
    from skillorchestra_core.handbook.store import load_version
    from skillorchestra_core.routing.build import routing_model

    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use {', '.join(SPLITS)}")
    unknown = [r for r in routers if r not in evaluation_routers()]
    if unknown:
        raise ValueError(f"unknown router {unknown[0]!r}; choose from {', '.join(evaluation_routers())}")
    model = routing_model(s, handbook, version)
    loaded = load_version(s, handbook, model.version)
    mode = mode or (model.mode_names[0] if len(model.modes) == 1 else model.terminal_mode())
    rows = s.exec(select(col(Query.id), col(Query.text)).where(Query.handbook_id == model.handbook_id,
                                                                Query.split == split).order_by(col(Query.id))).all()
    q = split_queries(model, [(int(a), str(b)) for a, b in rows if a is not None], loaded.content.attributions,
                      split, mode)
    if not len(q.texts):
        raise ValueError(f"{model.label} has no {split} query with a recorded outcome in mode {mode!r}")
    return [r for name in routers for r in evaluate_model(model, q, name, lambdas, cost_unit=cost_unit, seed=seed,
                                                          top_k=top_k, cost_scope=cost_scope)]


def skill_competence(model: RoutingModel, q: SplitQueries, *, top_k: int = 3,
                     true_label: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """((Q, A) expected competence of every agent per query, (Q, K) the skill weights behind it) under the skill
    rule: the activated skills (or the attributed ones with `true_label`), the pooled rate when none is active.
    Selection sweeps many lambdas and candidates over it."""
    t = model.table(q.mode)
    w = q.truth if true_label else _dense(t, model, q, top_k)
    return _competence(t, w), w


def competence_from_weights(table: ModeTable, w: np.ndarray) -> np.ndarray:
    """(Q, A) expected competence from (Q, K) skill weights over `table.skills` (rows of zeros: the pooled rate)."""
    return _competence(table, w)
