"""Decision traces in the database: store one (with its LLM calls), list them with filters, load one back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from typing import TYPE_CHECKING

from sqlalchemy import String, cast, func
from sqlmodel import Session, select

from skillorchestra_core.db.models import DecisionTrace
from skillorchestra_core.errors import NotFound
from skillorchestra_core.llm.base import LlmCallRecord
from skillorchestra_core.llm.log import save_calls
from skillorchestra_core.routing.trace import RouteTrace

if TYPE_CHECKING:  # pandas only for the table views, not to route or store a trace
    import pandas as pd


def store_trace(s: Session, trace: RouteTrace, *, actor: str = "system",
                llm_calls: list[LlmCallRecord] | None = None) -> int:
    """Insert the trace (the caller commits); sets and returns `trace.id`."""
    last = trace.steps[-1] if trace.steps else None
    row = DecisionTrace(
        handbook_id=trace.handbook_id, handbook_name=trace.handbook, version_id=trace.version_id,
        version_number=trace.version, content_hash=trace.content_hash, router=trace.router, lam=trace.lam,
        cost_unit=trace.cost_unit, execution=trace.execution, query_text=trace.query, chosen_agent=trace.chosen_agent,
        cause=trace.cause, n_steps=len(trace.steps), margin=last.margin if last else None,
        total_cost_usd=trace.total_cost_usd, outcome=trace.outcome, actor=actor, created_at=trace.created_at,
        trace={},
    )
    s.add(row)
    s.flush()
    trace.id = row.id
    row.trace = trace.to_dict()
    s.add(row)
    if llm_calls:
        save_calls(s, llm_calls, decision_trace_id=row.id)
    s.flush()
    return row.id


def load_trace(s: Session, trace_id: int) -> RouteTrace:
    row = s.get(DecisionTrace, trace_id)
    if row is None:
        raise NotFound(f"no decision trace with id {trace_id}")
    trace = RouteTrace.model_validate(row.trace)
    trace.id = row.id
    return trace


@dataclass(frozen=True)
class TraceFilter:
    handbook: str | None = None
    version: int | None = None
    agent: str | None = None
    cause: str | None = None
    router: str | None = None
    since: date | None = None
    until: date | None = None
    text: str | None = None
    limit: int = 500
    offset: int = 0  # for paging
    skill: str | None = None  # decisions whose active skills include this key (scans the traces' JSON)
    used_agent: str | None = None  # decisions that chose this agent at any step (scans the traces' JSON)


def _where(f: TraceFilter):
    conds = []
    if f.handbook:
        conds.append(DecisionTrace.handbook_name == f.handbook)
    if f.version is not None:
        conds.append(DecisionTrace.version_number == f.version)
    if f.agent:
        conds.append(DecisionTrace.chosen_agent == f.agent)
    if f.cause:
        conds.append(DecisionTrace.cause == f.cause)
    if f.router:
        conds.append(DecisionTrace.router == f.router)
    if f.since:
        conds.append(DecisionTrace.created_at >= datetime.combine(f.since, time.min, tzinfo=timezone.utc))
    if f.until:
        conds.append(DecisionTrace.created_at <= datetime.combine(f.until, time.max, tzinfo=timezone.utc))
    if f.text:
        conds.append(DecisionTrace.query_text.contains(f.text))
    for field, value in (("skill", f.skill), ("chosen", f.used_agent)):
        if value:
            conds.append(_json_has(field, value))
    return conds


def _json_has(field: str, value: str):
    """The stored trace JSON holds `"field": "value"` (either separator style)."""
    text = cast(DecisionTrace.trace, String)
    quoted = json.dumps(value)
    return text.contains(f'"{field}": {quoted}') | text.contains(f'"{field}":{quoted}')


LIST_COLUMNS = ["id", "created", "handbook", "version", "router", "lambda", "query", "chosen", "cause", "margin",
                "steps", "execution", "cost_usd", "actor"]


def list_traces(s: Session, f: TraceFilter = TraceFilter()) -> pd.DataFrame:
    """The stored traces matching `f`, newest first, as a table (no trace JSON)."""
    stmt = (select(DecisionTrace.id, DecisionTrace.created_at, DecisionTrace.handbook_name,
                   DecisionTrace.version_number, DecisionTrace.router, DecisionTrace.lam, DecisionTrace.query_text,
                   DecisionTrace.chosen_agent, DecisionTrace.cause, DecisionTrace.margin, DecisionTrace.n_steps,
                   DecisionTrace.execution, DecisionTrace.total_cost_usd, DecisionTrace.actor)
            .where(*_where(f)).order_by(DecisionTrace.created_at.desc(), DecisionTrace.id.desc())
            .offset(f.offset).limit(f.limit))
    rows = s.exec(stmt).all()
    import pandas as pd

    return pd.DataFrame([tuple(r) for r in rows], columns=LIST_COLUMNS)


def trace_exists(s: Session, trace_id: int) -> bool:
    return s.get(DecisionTrace, trace_id) is not None


def count_traces(s: Session, f: TraceFilter = TraceFilter()) -> int:
    return s.exec(select(func.count()).select_from(DecisionTrace).where(*_where(f))).one()


def trace_facets(s: Session, handbook: str | None = None) -> dict[str, list]:
    """Distinct values for the filter widgets."""
    def distinct(col, *where):
        return [v for v in s.exec(select(col).where(*where).distinct().order_by(col)).all() if v is not None]

    hb = [DecisionTrace.handbook_name == handbook] if handbook else []
    return {"handbook": distinct(DecisionTrace.handbook_name), "version": distinct(DecisionTrace.version_number, *hb),
            "agent": distinct(DecisionTrace.chosen_agent, *hb), "cause": distinct(DecisionTrace.cause, *hb),
            "router": distinct(DecisionTrace.router, *hb)}
