"""Decision traces in the database: store one (with its LLM calls), list them with filters, load one back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from typing import TYPE_CHECKING

from sqlalchemy import ColumnElement, func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import DecisionFacet, DecisionTrace, HandbookVersion, key
from skillorchestra_core.errors import NotFound
from skillorchestra_core.llm.base import LlmCallRecord
from skillorchestra_core.llm.log import save_calls
from skillorchestra_core.routing.decision_codec import CODEC_DERIVED, Columns, decode, encode
from skillorchestra_core.routing.trace import RouteTrace

if TYPE_CHECKING:  # pandas only for the table views, not to route or store a trace
    import pandas as pd


def _model_loader(s: Session):
    """(version_id, options) -> the version's routing model built with the prior and level the trace was routed
    with (cached per version: opening or storing many decisions builds each model once)."""
    def load(version_id: int, options: dict):
        from skillorchestra_core.learning.competence import PriorConfig
        from skillorchestra_core.routing.build import routing_model

        prior = None
        if "prior" in options and "prior_strength" in options:
            prior = PriorConfig(options["prior"], float(options["prior_strength"]))
        return routing_model(s, version_id=version_id, prior=prior, level=options.get("level"))
    return load


def tags_text(agents, skills) -> str:
    """The `tags` column: every agent chosen at a step and every skill activated, each once, space-delimited."""
    words = [f"agent:{a}" for a in dict.fromkeys(a for a in agents if a)]
    words += [f"skill:{k}" for k in dict.fromkeys(skills)]
    return (" " + " ".join(words) + " ") if words else ""


def _tags(trace: RouteTrace) -> str:
    return tags_text((st.chosen for st in trace.steps), (a.skill for st in trace.steps for a in st.active_skills))


def _tag_has(kind: str, value: str) -> ColumnElement[bool]:
    return col(DecisionTrace.tags).contains(f" {kind}:{value} ", autoescape=True)


def store_trace(s: Session, trace: RouteTrace, *, actor: str = "system",
                llm_calls: list[LlmCallRecord] | None = None) -> int:
    """Insert the trace in its compact form (the caller commits); sets and returns `trace.id`."""
    codec, payload = encode(trace, _model_loader(s))
    last = trace.steps[-1] if trace.steps else None
    row = DecisionTrace(
        handbook_id=trace.handbook_id, handbook_name=trace.handbook, version_id=trace.version_id,
        version_number=trace.version, content_hash="" if codec == CODEC_DERIVED else trace.content_hash,
        router=trace.router, lam=trace.lam, cost_unit=trace.cost_unit, execution=trace.execution,
        query_text=trace.query, chosen_agent=trace.chosen_agent, cause=trace.cause, n_steps=len(trace.steps),
        margin=last.margin if last else None, total_cost_usd=trace.total_cost_usd, outcome=trace.outcome,
        actor=actor, created_at=trace.created_at, trace={}, codec=codec, payload=payload, tags=_tags(trace),
    )
    s.add(row)
    s.flush()
    trace.id = key(row)
    add_facets(s, [row])
    if llm_calls:
        save_calls(s, llm_calls, decision_trace_id=trace.id)
    s.flush()
    return trace.id


FACET_FIELDS = {"agent": "chosen_agent", "cause": "cause", "router": "router", "version": "version_number"}


def facet_rows(rows) -> list[dict]:
    """The facet values of decision rows (objects or mappings with the decision columns)."""
    got = set()
    for r in rows:
        get = r.get if isinstance(r, dict) else (lambda k, _r=r: getattr(_r, k))
        for field, column in FACET_FIELDS.items():
            value = get(column)
            if value is not None and value != "":
                got.add((get("handbook_name"), field, str(value)))
    return [{"handbook_name": h, "field": f, "value": v} for h, f, v in sorted(got)]


def add_facets(s: Session, rows) -> None:
    """Record new facet values (an existing value is left alone, whoever wrote it first)."""
    values = facet_rows(rows)
    if not values:
        return
    from sqlalchemy.dialects import postgresql, sqlite

    if s.get_bind().dialect.name == "postgresql":
        s.execute(postgresql.insert(DecisionFacet).values(values).on_conflict_do_nothing())
    else:
        s.execute(sqlite.insert(DecisionFacet).values(values).on_conflict_do_nothing())


def _columns(s: Session, row: DecisionTrace) -> Columns:
    content_hash = row.content_hash
    if not content_hash and row.version_id is not None:
        version = s.get(HandbookVersion, row.version_id)
        content_hash = version.content_hash if version is not None else ""
    return Columns(row.id, row.handbook_name, row.handbook_id, row.version_number, row.version_id, content_hash,
                   row.router, row.lam, row.cost_unit, row.query_text, row.execution, row.chosen_agent, row.cause,
                   row.total_cost_usd, row.outcome, row.created_at)


def load_trace(s: Session, trace_id: int) -> RouteTrace:
    """The stored trace, exactly as it was routed (a compact one is re-rendered from its version's model, its
    candidate tables built on first use)."""
    row = s.get(DecisionTrace, trace_id)
    if row is None:
        raise NotFound(f"no decision trace with id {trace_id}")
    return decode(row.codec, row.payload, _columns(s, row), _model_loader(s), legacy=row.trace)


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
    offset: int = 0  # for paging by position (the page pages by key: `before`/`after`)
    skill: str | None = None  # decisions whose active skills include this key
    used_agent: str | None = None  # decisions that chose this agent at any step
    before: int | None = None  # keyset paging: only ids below this (the next older page)
    after: int | None = None  # only ids above this (the next newer page)


def _where(f: TraceFilter) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = []
    if f.handbook:
        conds.append(col(DecisionTrace.handbook_name) == f.handbook)
    if f.version is not None:
        conds.append(col(DecisionTrace.version_number) == f.version)
    if f.agent:
        conds.append(col(DecisionTrace.chosen_agent) == f.agent)
    if f.cause:
        conds.append(col(DecisionTrace.cause) == f.cause)
    if f.router:
        conds.append(col(DecisionTrace.router) == f.router)
    if f.since:
        conds.append(col(DecisionTrace.created_at) >= datetime.combine(f.since, time.min, tzinfo=timezone.utc))
    if f.until:
        conds.append(col(DecisionTrace.created_at) <= datetime.combine(f.until, time.max, tzinfo=timezone.utc))
    if f.text:
        conds.append(col(DecisionTrace.query_text).contains(f.text, autoescape=True))
    if f.skill:
        conds.append(_tag_has("skill", f.skill))
    if f.used_agent:
        conds.append(_tag_has("agent", f.used_agent))
    return conds


LIST_COLUMNS = ["id", "created", "handbook", "version", "router", "lambda", "query", "chosen", "cause", "margin",
                "steps", "execution", "cost_usd", "actor"]
_LIST_SELECT = tuple(col(c) for c in (
    DecisionTrace.id, DecisionTrace.created_at, DecisionTrace.handbook_name, DecisionTrace.version_number,
    DecisionTrace.router, DecisionTrace.lam, DecisionTrace.query_text, DecisionTrace.chosen_agent, DecisionTrace.cause,
    DecisionTrace.margin, DecisionTrace.n_steps, DecisionTrace.execution, DecisionTrace.total_cost_usd,
    DecisionTrace.actor))


def list_traces(s: Session, f: TraceFilter = TraceFilter()) -> pd.DataFrame:
    """The stored traces matching `f`, newest (highest id) first, as a table (no trace).

    With `before`/`after` the page is found by key on the (handbook_name, id) index, so any page of a million
    decisions costs what the first one does; `offset` still works but reads every row it skips."""
    conds = _where(f)
    if f.before is not None:
        conds.append(col(DecisionTrace.id) < f.before)
    # Fourteen columns, past sqlmodel's typed select(): SQLAlchemy's, on the session's connection (a read path).
    run = s.connection().execute
    if f.after is not None and f.before is None:
        conds.append(col(DecisionTrace.id) > f.after)
        stmt = sa_select(*_LIST_SELECT).where(*conds).order_by(col(DecisionTrace.id).asc()).limit(f.limit)
        rows = list(reversed(run(stmt).all()))
    else:
        stmt = (sa_select(*_LIST_SELECT).where(*conds).order_by(col(DecisionTrace.id).desc())
                .offset(f.offset).limit(f.limit))
        rows = list(run(stmt).all())
    import pandas as pd

    return pd.DataFrame([tuple(r) for r in rows], columns=LIST_COLUMNS)


def has_traces(s: Session, f: TraceFilter, *, before: int | None = None, after: int | None = None) -> bool:
    """Whether a decision matching `f` exists below `before` / above `after` (enables Older / Newer)."""
    conds = _where(f)
    if before is not None:
        conds.append(col(DecisionTrace.id) < before)
    if after is not None:
        conds.append(col(DecisionTrace.id) > after)
    return s.exec(select(DecisionTrace.id).where(*conds).limit(1)).first() is not None


def trace_exists(s: Session, trace_id: int) -> bool:
    return s.exec(select(DecisionTrace.id).where(DecisionTrace.id == trace_id)).first() is not None


def count_traces(s: Session, f: TraceFilter = TraceFilter()) -> int:
    return s.exec(select(func.count()).select_from(DecisionTrace).where(*_where(f))).one()


def trace_facets(s: Session, handbook: str | None = None) -> dict[str, list]:
    """Distinct values for the filter widgets, from the facet table (never a scan of the decisions)."""
    stmt = select(DecisionFacet.field, DecisionFacet.value)
    rows = s.exec(stmt if handbook is None else stmt.where(DecisionFacet.handbook_name == handbook)).all()
    out: dict[str, set] = {"version": set(), "agent": set(), "cause": set(), "router": set()}
    for field, value in rows:
        if field in out:
            out[field].add(int(value) if field == "version" else value)
    handbooks = s.exec(select(DecisionFacet.handbook_name).distinct()).all()
    return {"handbook": sorted(handbooks), **{k: sorted(v) for k, v in out.items()}}
