"""What the Pareto page shows, computed in one call: the stored runs of a handbook (filtered), the frontier, the
run the objective selects, bootstrap bands, and a run's per-agent and per-skill breakdown."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Attribution, Query, key
from skillorchestra_core.db.selection_tables import ValidationRun
from skillorchestra_core.handbook.store import get_handbook
from skillorchestra_core.selection import pareto
from skillorchestra_core.selection.runs import RunRecord, record_of, run_rows
from skillorchestra_core.selection.service import NOT_DEPLOYABLE, selectable


@dataclass(frozen=True)
class ParetoView:
    handbook: str
    split: str
    runs: list[RunRecord]
    on_frontier: np.ndarray  # (R,) bool
    bands: pareto.Bands | None  # per run, from a paired bootstrap over queries
    selected: int | None  # index into runs
    objective_lambda: float

    @property
    def frontier_runs(self) -> list[RunRecord]:
        return [r for r, k in zip(self.runs, self.on_frontier) if k]


def facets(s: Session, handbook: str) -> dict[str, list]:
    rows = s.exec(select(ValidationRun.split, ValidationRun.router, ValidationRun.candidate, ValidationRun.baseline)
                  .where(ValidationRun.handbook_id == get_handbook(s, handbook).id)).all()
    return {"split": sorted({r[0] for r in rows}), "router": sorted({r[1] for r in rows if not r[3]}),
            "candidate": sorted({r[2] for r in rows if not r[3]})}


def live_runs_table(s: Session, handbook: str) -> pd.DataFrame:
    """The live runs of a handbook, newest first, with the status each reads as (a killed one: interrupted)."""
    rows = run_rows(s, key(get_handbook(s, handbook)), kind="live")
    cols = ["id", "status", "answered", "queries", "version", "router", "lambda", "split", "accuracy",
            "mean_cost_usd", "created_at"]
    return pd.DataFrame([{c: r[c] for c in cols} for r in rows], columns=cols)


def load_view(s: Session, handbook: str, split: str, *, routers: list[str] | None = None,
              candidates: list[str] | None = None, objective_lambda: float = 0.1, kind: str | None = None,
              rng: np.random.Generator | None = None, n_boot: int = 200, mark: int | None = None) -> ParetoView:
    """`mark`: a run id to show as the selection instead of the objective's pick (a test split shows the
    configuration selected on val, never one selected on test)."""
    hb = get_handbook(s, handbook)
    stmt = select(ValidationRun).where(ValidationRun.handbook_id == hb.id, ValidationRun.split == split,
                                       ValidationRun.status == "done")
    if kind:
        stmt = stmt.where(ValidationRun.kind == kind)
    rows = [r for r in s.exec(stmt.order_by(col(ValidationRun.id)))
            if r.baseline or ((not routers or r.router in routers) and (not candidates or r.candidate in candidates))]
    runs = [record_of(r) for r in rows]
    deployable = np.array([r.router not in NOT_DEPLOYABLE and r.accuracy is not None for r in runs], bool)
    mask = np.zeros(len(runs), bool)
    if deployable.any():
        idx = np.flatnonzero(deployable)
        mask[idx] = pareto.frontier([runs[i].mean_cost_usd for i in idx], [runs[i].accuracy for i in idx])
    pool = [i for i, r in enumerate(runs) if selectable(r)]
    pick = pareto.select([runs[i].accuracy for i in pool], [runs[i].normalised_cost for i in pool],
                         [runs[i].n_skills for i in pool], objective_lambda) if pool else None
    bands = _bands(rows, rng or np.random.default_rng(0), n_boot)
    chosen = None if pick is None else pool[pick]
    if mark is None and split != "val":  # never select on a held-out split: show val's choice there
        chosen = _val_choice(s, handbook, runs, routers, candidates, objective_lambda)
    if mark is not None:
        chosen = next((i for i, r in enumerate(runs) if r.id == mark), None)
    return ParetoView(handbook, split, runs, mask, bands, chosen, objective_lambda)


def _val_choice(s: Session, handbook: str, runs: list[RunRecord], routers, candidates, lam: float) -> int | None:
    """Index in `runs` of the run with the configuration (version, router, lambda) the objective selects on val."""
    val = load_view(s, handbook, "val", routers=routers, candidates=candidates, objective_lambda=lam, n_boot=0,
                    mark=-1)
    pool = [r for r in val.runs if selectable(r)]
    if not pool:
        return None
    i = pareto.select([r.accuracy for r in pool], [r.normalised_cost for r in pool], [r.n_skills for r in pool], lam)
    if i is None:
        return None
    want = pool[i]
    return next((j for j, r in enumerate(runs) if not r.baseline and (r.version, r.router, r.lam) ==
                 (want.version, want.router, want.lam)), None)


def _bands(rows: list[ValidationRun], rng: np.random.Generator, n_boot: int) -> pareto.Bands | None:
    """Paired bootstrap over the queries the replay runs share (live runs, with their own queries, get none)."""
    pq = [r.per_query for r in rows]
    if not rows or n_boot <= 0 or any(r.kind != "replay" or "score" not in p for r, p in zip(rows, pq)):
        return None
    if len({len(p["score"]) for p in pq}) != 1:
        return None
    score = np.array([[np.nan if x is None else x for x in p["score"]] for p in pq], float)
    cost = np.array([p["cost"] for p in pq], float)
    return pareto.bootstrap(score, cost, rng, n_boot=n_boot)


def breakdown(s: Session, run_id: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per agent: calls, accuracy, mean cost; per skill: queries, accuracy, the agents chosen) of one run. A query's
    skill is its most-attributed skill in the run's version ('(none)' without attribution)."""
    run = s.get(ValidationRun, run_id)
    if run is None:
        raise ValueError(f"no validation run with id {run_id}")
    pq = run.per_query
    ids = pq.get("query_ids") or []
    if not ids or "score" not in pq:
        return pd.DataFrame(), pd.DataFrame()
    df = pd.DataFrame({"ext_id": ids, "agent": [pq["agents"][j] for j in pq["chosen"]],
                       "score": pd.array(pq["score"], dtype="Float64"), "cost": pq["cost"]})
    qmap = {ext: k for ext, k in s.exec(select(Query.ext_id, Query.id).where(
        Query.handbook_id == run.handbook_id, col(Query.ext_id).in_(ids))) if k is not None}
    attr = s.exec(select(Attribution.query_id, Attribution.skill_key, Attribution.weight)
                  .where(Attribution.version_id == run.version_id, Attribution.mode == run.mode,
                         col(Attribution.query_id).in_(list(qmap.values())))).all()
    top: dict[int, tuple[float, str]] = {}
    for q, k, w in attr:
        if q not in top or (w, k) > top[q]:
            top[q] = (w, k)
    df["skill"] = [top.get(qmap.get(e, -1), (0, "(none)"))[1] for e in df["ext_id"]]
    agents = df.groupby("agent").agg(calls=("agent", "size"), accuracy=("score", "mean"),
                                     mean_cost_usd=("cost", "mean")).reset_index()
    skills = df.groupby("skill").agg(queries=("skill", "size"), accuracy=("score", "mean"),
                                     mean_cost_usd=("cost", "mean"),
                                     agents=("agent", lambda a: ", ".join(f"{k} {v}" for k, v in
                                                                          a.value_counts().items()))).reset_index()
    return agents.sort_values("calls", ascending=False), skills
