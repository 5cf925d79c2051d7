"""Replay sweeps: every candidate x router x lambda on one split, plus the baselines, stored as validation runs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Query
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.evaluate import (
    SPLITS,
    SplitQueries,
    choices,
    query_k,
    skill_competence,
    split_queries,
)
from skillorchestra_core.routing.inputs import check_lambda
from skillorchestra_core.routing.model import RoutingModel
from skillorchestra_core.selection.candidates import Candidate
from skillorchestra_core.selection.replay import calls, replay, score_grid
from skillorchestra_core.selection.runs import BASELINES, SINGLE, RunRecord, per_query, settings_hash, store_run

SWEEP_ROUTERS = ("skill", "true-label", "reference-rule")  # the routers whose choice depends on the candidate


@dataclass(frozen=True)
class SweepOptions:
    split: str = "val"
    lambdas: tuple[float, ...] = (0.0,)
    routers: tuple[str, ...] = ("skill",)
    cost_unit: str = "normalised"
    seed: int = 0
    top_k: int = 3
    baselines: bool = True
    mode: str | None = None

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"unknown split {self.split!r}; use {', '.join(SPLITS)}")
        bad = [r for r in self.routers if r not in SWEEP_ROUTERS]
        if bad:
            raise ValueError(f"router {bad[0]!r} does not depend on the candidate; sweep {', '.join(SWEEP_ROUTERS)}"
                             " (baselines run on their own)")
        if not self.lambdas:
            raise ValueError("give at least one lambda")
        object.__setattr__(self, "lambdas", tuple(check_lambda(x) for x in self.lambdas))


def queries_of(s: Session, model: RoutingModel, split: str, mode: str) -> SplitQueries:
    loaded = load_version(s, model.handbook, model.version)
    rows = s.exec(select(col(Query.id), col(Query.text)).where(Query.handbook_id == model.handbook_id,
                                                                Query.split == split).order_by(col(Query.id))).all()
    q = split_queries(model, [(int(a), str(b)) for a, b in rows if a is not None], loaded.content.attributions,
                      split, mode)
    if not len(q.texts):
        raise ValueError(f"{model.label} has no {split} query with a recorded outcome in mode {mode!r}")
    return q


def _records(model: RoutingModel, q: SplitQueries, cand: Candidate, router: str, lambdas, chosen: np.ndarray,
             opts: SweepOptions, cost_ref: float | None, baseline: bool) -> list[tuple[RunRecord, dict]]:
    t = model.table(q.mode)
    grid = score_grid(chosen[None], q.score, q.cost)
    known = model.evidence.refs if model.evidence is not None else {}
    refs = [known.get(int(i), str(i)) for i in q.ids]
    extra = {"cost_unit": opts.cost_unit, "seed": opts.seed, "top_k": opts.top_k, "n": len(q.ids)}
    out = []
    for i, lam in enumerate(lambdas):
        acc = grid.accuracy[0, i]
        settings = {**extra, "hash": settings_hash(model.content_hash, router, lam, q.split, q.mode, "replay", extra)}
        rec = RunRecord(router, model.stored()[2], "" if baseline else cand.name, cand.n_skills, float(lam),
                        q.split, q.mode,
                        None if np.isnan(acc) else float(acc), float(grid.mean_cost[0, i]), len(q.ids),
                        int(grid.n_scored[0, i]), calls(chosen[i], t.agents), cost_ref, baseline,
                        cost_unit=opts.cost_unit, content_hash=model.content_hash, settings=settings)
        out.append((rec, per_query(refs, t.agents, chosen[i], q.score[np.arange(len(q.ids)), chosen[i]],
                                   q.cost[np.arange(len(q.ids)), chosen[i]])))
    return out


def baseline_runs(model: RoutingModel, q: SplitQueries, cand: Candidate, opts: SweepOptions,
                  ) -> list[tuple[RunRecord, dict]]:
    """best-single, cheapest, random, oracle, reference-rule and every single agent, at lambda 0."""
    t = model.table(q.mode)
    lam = np.array([0.0])
    picks = {r: choices(model, q, r, lam, cost_unit=opts.cost_unit, seed=opts.seed, top_k=opts.top_k)[0]
             for r in BASELINES}
    picks |= {f"{SINGLE}{a}": np.full((1, len(q.ids)), j, dtype=np.int64) for j, a in enumerate(t.agents)}
    ref_cost = float(score_grid(picks["best-single"][None], q.score, q.cost).mean_cost[0, 0])
    out = []
    for router, chosen in picks.items():
        out += _records(model, q, cand, router, [0.0], chosen, opts, ref_cost, True)
    return out


def candidate_runs(model: RoutingModel, q: SplitQueries, cand: Candidate, opts: SweepOptions,
                   cost_ref: float | None) -> list[tuple[RunRecord, dict]]:
    t = model.table(q.mode)
    rank = t.tie_rank
    out = []
    for router in opts.routers:
        if router == "reference-rule":
            chosen = choices(model, q, router, np.array(opts.lambdas), cost_unit=opts.cost_unit, seed=opts.seed,
                             top_k=opts.top_k)[0]
        else:
            c, w = skill_competence(model, q, top_k=opts.top_k, true_label=router == "true-label")
            k = query_k(t, w, opts.cost_unit)  # per query with per-skill costs, else the mode's
            chosen = replay(c[None], k[None] if k.ndim == 2 else k, rank, opts.lambdas, q.score, q.cost).chosen[0]
        out += _records(model, q, cand, router, opts.lambdas, chosen, opts, cost_ref, False)
    return out


def run_sweep(s: Session, handbook: str, candidates: list[Candidate], opts: SweepOptions, *,
              actor: str = "system") -> list[RunRecord]:
    """Replay every candidate (and, once, the baselines on the first candidate's evidence) and store the runs."""
    if not candidates:
        raise ValueError("no candidate to validate")
    first = routing_model(s, handbook, candidates[-1].version)
    mode = opts.mode or (first.mode_names[0] if len(first.modes) == 1 else first.terminal_mode())
    q0 = queries_of(s, first, opts.split, mode)
    pairs = baseline_runs(first, q0, candidates[-1], opts) if opts.baselines else []
    cost_ref = pairs[0][0].cost_ref if pairs else None
    for cand in candidates:
        model = routing_model(s, handbook, cand.version)
        q = q0 if cand.version == first.version else queries_of(s, model, opts.split, mode)
        pairs += candidate_runs(model, q, cand, opts, cost_ref)
    out = []
    for rec, results in pairs:
        vid = next(c.version_id for c in candidates if c.version == rec.version)
        out.append(store_run(s, rec, handbook_id=first.stored()[0], version_id=vid, results=results, actor=actor))
    return out
