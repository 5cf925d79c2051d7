"""Live validation: call each routed agent through the LLM layer, score its answer against the ground truth.

A live run is planned first (every query of the split routed by its text with one version, router and lambda, the
same choices replay makes) and stored as a `validation_run` with status `running`. Executing it calls the chosen
agents with a concurrency limit and writes each answer as soon as it arrives (`live_result`, one row per query), so
a killed run loses at most its in-flight calls and `resume` finishes it. The executing process records its pid and
host on the run and beats `heartbeat_at`; a running run whose owner is gone reads `interrupted` (`runs.run_status`),
and a run whose owner still runs cannot be resumed a second time at once. A total cost cap stops it cleanly: once the
recorded spend reaches the cap no new call starts (calls in flight finish and are kept), and the run is `stopped`
until resumed with a higher cap. Cost comes from usage x the agent's price card (the provider's figure otherwise).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable

import numpy as np
from sqlalchemy import func
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Query, key, utcnow
from skillorchestra_core.db.selection_tables import LiveResult, ValidationRun
from skillorchestra_core.errors import StudioError
from skillorchestra_core.llm import LlmClient, LlmError
from skillorchestra_core.processes import heartbeat, host, owner_gone
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.evaluate import choices
from skillorchestra_core.selection.replay import calls
from skillorchestra_core.selection.runs import settings_hash
from skillorchestra_core.selection.scoring import score_answer
from skillorchestra_core.selection.sweep import queries_of


@dataclass(frozen=True)
class LiveOptions:
    concurrency: int = 4
    cost_cap_usd: float | None = None
    model_prefix: str = ""  # e.g. "openai/" to send every agent's model to an OpenAI-compatible server
    max_tokens: int = 512


@dataclass(frozen=True)
class LiveProgress:
    run_id: int
    done: int
    total: int
    spent_usd: float
    status: str  # running | stopped | done


def plan_live_run(s: Session, handbook: str, version: int, lam: float, *, split: str = "val", router: str = "skill",
                  cost_unit: str = "normalised", top_k: int = 3, seed: int = 0, candidate: str = "",
                  actor: str = "system") -> int:
    """Store a live run with every query's chosen agent; returns its id (nothing is called yet)."""
    model = routing_model(s, handbook, version)
    mode = model.mode_names[0] if len(model.modes) == 1 else model.terminal_mode()
    q = queries_of(s, model, split, mode)
    chosen = choices(model, q, router, np.array([float(lam)]), cost_unit=cost_unit, seed=seed, top_k=top_k)[0][0]
    t = model.table(mode)
    extra = {"cost_unit": cost_unit, "seed": seed, "top_k": top_k, "n": len(q.ids)}
    handbook_id, version_id, number = model.stored()
    row = ValidationRun(
        handbook_id=handbook_id, version_id=version_id, version_number=number,
        content_hash=model.content_hash, candidate=candidate, n_skills=len(t.skills), router=router, lam=float(lam),
        cost_unit=cost_unit, split=split, mode=mode, kind="live", status="running", n_queries=len(q.ids),
        per_query={"query_db_ids": [int(i) for i in q.ids], "agents": list(t.agents), "chosen": chosen.tolist(),
                   "models": list(t.models), "prices": [list(p) for p in t.prices]},
        settings={**extra, "hash": settings_hash(model.content_hash, router, lam, split, mode, "live", extra)},
        actor=actor, owner_pid=os.getpid(), owner_host=host(), heartbeat_at=utcnow())  # the planner executes it
    s.add(row)
    s.flush()
    return key(row)


def _pending(s: Session, run: ValidationRun) -> list[tuple[int, str, str, str | None, tuple]]:
    """(query id, agent, text, ground truth, price card) of the planned queries without a result yet."""
    pq = run.per_query
    done = set(s.exec(select(LiveResult.query_id).where(LiveResult.run_id == run.id)).all())
    texts = {i: (t, g) for i, t, g in s.exec(select(Query.id, Query.text, Query.ground_truth)
                                              .where(col(Query.id).in_(pq["query_db_ids"])))}
    out = []
    for qid, j in zip(pq["query_db_ids"], pq["chosen"]):
        if qid not in done:
            out.append((qid, pq["agents"][j], texts[qid][0], texts[qid][1], (pq["models"][j], pq["prices"][j])))
    return out


def claim_live_run(s: Session, run: ValidationRun) -> None:
    """Make this process the run's owner (status `running`, pid, host, a fresh beat), in the caller's transaction.
    Refused while another owner still runs it; a run this process planned is already its own (nothing written)."""
    me = (os.getpid(), host())
    if run.status == "running" and (run.owner_pid, run.owner_host) == me:
        return
    if run.status == "running" and run.owner_pid is not None and not owner_gone(run.owner_pid, run.heartbeat_at,
                                                                              run.owner_host):
        raise StudioError(f"live run {run.id} is being executed by process {run.owner_pid} on {run.owner_host}; "
                          "resume it once that process has stopped")
    run.status, run.owner_pid, run.owner_host, run.heartbeat_at = "running", me[0], me[1], utcnow()
    s.add(run)


def _beat(session_factory: Callable[[], Session], run_id: int) -> None:
    with session_factory() as s:
        run = s.get(ValidationRun, run_id)
        if run is not None and run.status == "running":
            run.heartbeat_at = utcnow()
            s.add(run)
            s.commit()


def _spent(s: Session, run_id: int) -> float:
    spent = s.exec(select(func.sum(col(LiveResult.cost_usd))).where(LiveResult.run_id == run_id)).one()
    return float(spent or 0.0)  # the sum of no rows is NULL


def _call(llm: LlmClient, item, opts: LiveOptions) -> LiveResult:
    qid, agent, text, truth, (model_name, card) = item
    try:
        reply = llm.complete([{"role": "user", "content": text}], purpose="selection.live",
                             model=f"{opts.model_prefix}{model_name or agent}", max_tokens=opts.max_tokens)
    except LlmError as exc:
        return LiveResult(run_id=0, query_id=qid, agent=agent, error=str(exc)[:1000], cost_usd=0.0)
    cost = reply.cost_usd
    if card and card[0] is not None and reply.prompt_tokens is not None:
        cost = ((reply.prompt_tokens or 0) * card[0] + (reply.completion_tokens or 0) * (card[1] or 0.0)) / 1e6
    return LiveResult(run_id=0, query_id=qid, agent=agent, answer=reply.text[:4000], score=score_answer(reply.text,
                      truth), cost_usd=cost, prompt_tokens=reply.prompt_tokens,
                      completion_tokens=reply.completion_tokens, latency_s=round(reply.latency_s, 4))


def execute_live_run(session_factory: Callable[[], Session], run_id: int, llm: LlmClient, opts: LiveOptions,
                     progress: Callable[[LiveProgress], None] | None = None,
                     stop: threading.Event | None = None) -> LiveProgress:
    """Call the agents of a planned run's remaining queries; safe to call again to resume."""
    with session_factory() as s:
        # Locked (PostgreSQL) or a write-after-read conflict (SQLite, WAL): two resumes cannot both claim it.
        run = s.exec(select(ValidationRun).where(ValidationRun.id == run_id).with_for_update()).first()
        if run is None or run.kind != "live":
            raise ValueError(f"no live validation run with id {run_id}")
        claim_live_run(s, run)
        s.commit()
        todo, total, spent = _pending(s, run), run.n_queries, _spent(s, run_id)
    with heartbeat(lambda: _beat(session_factory, run_id), f"live-run-{run_id}"):
        return _execute(session_factory, run_id, llm, opts, todo, total, spent, progress, stop)


def _execute(session_factory: Callable[[], Session], run_id: int, llm: LlmClient, opts: LiveOptions, todo: list,
             total: int, spent: float, progress: Callable[[LiveProgress], None] | None,
             stop: threading.Event | None) -> LiveProgress:
    done = total - len(todo)
    capped = lambda: opts.cost_cap_usd is not None and spent >= opts.cost_cap_usd  # noqa: E731
    items, inflight = iter(todo), set[Future[LiveResult]]()
    with ThreadPoolExecutor(max_workers=max(1, opts.concurrency)) as pool, session_factory() as s:
        while True:
            while len(inflight) < max(1, opts.concurrency) and not capped() and not (stop and stop.is_set()):
                item = next(items, None)
                if item is None:
                    break
                inflight.add(pool.submit(_call, llm, item, opts))
            if not inflight:
                break
            finished, inflight = wait(inflight, return_when=FIRST_COMPLETED)
            for fut in finished:
                res = fut.result()
                res.run_id = run_id
                s.add(res)
                s.commit()  # each answer is kept at once: a kill loses only calls in flight
                spent += res.cost_usd or 0.0
                done += 1
                if progress:
                    progress(LiveProgress(run_id, done, total, spent, "running"))
        return finish_live_run(s, run_id)


def finish_live_run(s: Session, run_id: int) -> LiveProgress:
    """Recompute the run's figures from its results; `done` when every query has one, else `stopped`."""
    run = s.get(ValidationRun, run_id)
    if run is None:
        raise ValueError(f"no live validation run with id {run_id}")
    rows = s.exec(select(LiveResult).where(LiveResult.run_id == run_id).order_by(col(LiveResult.query_id))).all()
    scored = [r.score for r in rows if r.score is not None and not r.error]
    agents = run.per_query["agents"]
    run.n_scored = len(scored)
    run.accuracy = float(np.mean(scored)) if scored else None
    run.mean_cost_usd = float(np.mean([r.cost_usd or 0.0 for r in rows])) if rows else None
    run.calls_by_agent = calls(np.array([agents.index(r.agent) for r in rows], dtype=np.int64), agents)
    run.status = "done" if len(rows) >= run.n_queries else "stopped"
    s.add(run)
    s.commit()
    return LiveProgress(run_id, len(rows), run.n_queries, sum(r.cost_usd or 0.0 for r in rows), run.status)
