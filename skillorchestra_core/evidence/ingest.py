"""Store validated outcome rows as evidence and make the handbook version that sees them, in one transaction.

Every outcome importer (long format, LLMRouter, exploration files, the demo) parses its file into `OutcomeRow`s
and hands them here. Evidence is append-only: a row already stored with the same values is skipped (so re-importing
a file is a no-op), a row that contradicts stored evidence is an error, and so is a number outside the limits of
`formats.bounds` (checked here too, so no importer can let one through).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from sqlalchemy import insert
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from skillorchestra_core.db.engine import lock_for_write
from skillorchestra_core.db.models import AuditLog, Query, Trajectory, key, table_of, utcnow
from skillorchestra_core.errors import BadRow, ImportRejected
from skillorchestra_core.evidence.batches import new_batch
from skillorchestra_core.evidence.costs import default_price_card
from skillorchestra_core.formats import bounds
from skillorchestra_core.handbook.content import AgentSpec, HandbookContent, SkillSpec
from skillorchestra_core.handbook.store import commit_version, get_or_create_handbook, latest_content

SPLITS = ("train", "val", "test")


@dataclass(slots=True)  # slots: a large import holds one per row
class OutcomeRow:
    """One (query, agent, mode) attempt, validated. `line` points back into the source file."""

    line: int
    query_id: str
    query: str
    agent: str
    score: float
    mode: str = "answer"
    task: str | None = None
    split: str | None = None
    ground_truth: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    response: str | None = None
    path: str | None = None
    dataset: str = ""


@dataclass
class AgentHint:
    """What an importer knows about an agent beyond its name (model string, prices)."""

    model: str = ""
    input_price_per_m: float | None = None
    output_price_per_m: float | None = None
    price_source: str = "card"
    tools: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class IngestResult:
    handbook: str
    version: int
    created_version: bool
    queries_added: int
    trajectories_added: int
    trajectories_skipped: int
    skipped_rows: tuple[BadRow, ...] = ()


_TRAJ_FIELDS = ("score", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s")


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def ingest_outcomes(
    s: Session,
    handbook_name: str,
    rows: list[OutcomeRow],
    *,
    source_label: str,
    author: str = "cli",
    message: str = "",
    skills_from_task: bool = False,
    agent_hints: dict[str, AgentHint] | None = None,
    skipped_rows: list[BadRow] | None = None,
    description: str = "",
    synthetic: bool = False,
    trajectory_source: str = "import",
    prepare: Callable[[HandbookContent, dict[str, int]], None] | None = None,
) -> IngestResult:
    """Add `rows` to `handbook_name` and commit a version that sees them. Caller owns the transaction.

    `prepare(content, query_ids)` may edit the new version's content (skills, attributions) before it is committed;
    `query_ids` maps the rows' query ids to stored ids.
    """
    agent_hints = agent_hints or {}
    bad = check_rows(rows, agent_hints)
    if bad:  # before any write: nothing half imported
        raise ImportRejected(source_label, bad)
    lock_for_write(s, f"handbook:{handbook_name}")  # first, so every read below sees the latest commit
    hb = get_or_create_handbook(s, handbook_name, description=description, synthetic=synthetic)
    hb_id = key(hb)
    query_ids, queries_added, conflicts = _upsert_queries(s, hb_id, rows)
    existing = _existing_trajectories(s, hb_id, trajectory_source)
    new_rows, skipped = [], 0
    seen: set[tuple[int, str, str]] = set()
    for r in rows:
        qid = query_ids[r.query_id]
        attempt = (qid, r.agent, r.mode)
        if attempt in seen:
            conflicts.append(BadRow(r.line, f"duplicate attempt of agent {r.agent!r} on query {r.query_id!r} "
                                            f"in mode {r.mode!r} within the file"))
            continue
        seen.add(attempt)
        old = existing.get(attempt)
        if old is not None:
            if all(_same(getattr(r, f), old[i]) for i, f in enumerate(_TRAJ_FIELDS)):
                skipped += 1
            else:
                conflicts.append(BadRow(r.line, f"agent {r.agent!r} on query {r.query_id!r} in mode {r.mode!r} is "
                                                f"already recorded with score {old[0]}; evidence is append-only"))
            continue
        new_rows.append(r)
    if conflicts:
        raise ImportRejected(source_label, sorted(conflicts, key=lambda b: b.line))
    parent, content = latest_content(s, hb_id)
    if new_rows:
        batch = new_batch(s, hb_id, source_label, [
            (r.query_id, r.agent, r.mode, trajectory_source, r.score, r.prompt_tokens, r.completion_tokens,
             r.cost_usd, r.latency_s) for r in new_rows])
        _insert_trajectories(s, hb_id, new_rows, query_ids, trajectory_source, batch)
        content.evidence_batches = sorted({*content.evidence_batches, batch})
    for r in rows:
        content.add_mode(r.mode)
        if (r.agent, r.mode) not in content.agents:
            content.agents[(r.agent, r.mode)] = _agent_spec(r.agent, r.mode, agent_hints.get(r.agent))
    if skills_from_task:
        _attribute_by_task(content, rows, query_ids)
    if prepare is not None:
        prepare(content, query_ids)
    version, created = commit_version(
        s, hb, content, author=author, message=message or f"import {source_label}", source=source_label,
        parent=parent,
    )
    if created or new_rows:  # an unchanged re-import (e.g. the re-run after a crash) writes nothing at all
        s.add(AuditLog(actor=author, action="evidence.import", entity="handbook", entity_id=hb.id, handbook_id=hb.id,
                       details={"source": source_label, "rows": len(rows), "trajectories_added": len(new_rows),
                                "skipped_identical": skipped, "skipped_bad": len(skipped_rows or []),
                                "version": version.number}))
    return IngestResult(hb.name, version.number, created, queries_added, len(new_rows), skipped,
                        tuple(skipped_rows or ()))


def check_rows(rows: list[OutcomeRow], agent_hints: dict[str, AgentHint]) -> list[BadRow]:
    """Every row (and price hint) outside the limits of `formats.bounds`, whichever importer built it: a single
    absurd value would break routing and exports of the whole handbook."""
    bad: list[BadRow] = []
    max_cost, max_tokens, max_latency = bounds.MAX_COST_USD, bounds.MAX_TOKENS, bounds.MAX_LATENCY_S
    for r in rows:
        c, p, q, t = r.cost_usd, r.prompt_tokens, r.completion_tokens, r.latency_s
        try:  # the common case in one expression (runs once per row of large imports); NaN fails every comparison
            if (0.0 <= r.score <= 1.0 and (c is None or 0.0 <= c <= max_cost)
                    and (p is None or 0 <= p <= max_tokens) and (q is None or 0 <= q <= max_tokens)
                    and (t is None or 0.0 <= t <= max_latency)):
                continue
        except TypeError:
            pass
        problems = []
        for name, check in _ROW_CHECKS:
            value = getattr(r, name)
            if value is None and name != "score":
                continue
            try:
                check(value, name)
            except ValueError as exc:
                problems.append(str(exc))
        if problems:
            bad.append(BadRow(r.line, "; ".join(problems)))
    hinted = {r.agent for r in rows}
    for agent, hint in sorted(agent_hints.items()):
        for name in ("input_price_per_m", "output_price_per_m"):
            value = getattr(hint, name)
            if agent in hinted and value is not None:
                try:
                    bounds.price(value, f"{name} of agent {agent!r}")
                except ValueError as exc:
                    bad.append(BadRow(0, str(exc)))
    return bad


_ROW_CHECKS = (("score", bounds.unit), ("prompt_tokens", bounds.tokens), ("completion_tokens", bounds.tokens),
               ("cost_usd", bounds.cost), ("latency_s", bounds.latency))

INSERT_CHUNK = 20_000
_TRAJ_COLUMNS = ("handbook_id", "query_id", "agent", "mode", "score", "prompt_tokens", "completion_tokens",
                 "cost_usd", "latency_s", "response", "source", "path", "created_at", "batch_id")


def _insert_trajectories(s: Session, handbook_id: int, rows: list[OutcomeRow], query_ids: dict[str, int],
                         source: str, batch_id: int) -> None:
    """executemany on the driver's cursor, in chunks: no ORM objects, no per-row parameter processing (the one
    value that needs it, the timestamp, is converted once), and one chunk of parameters at a time."""
    conn = s.connection()
    table = table_of(Trajectory)
    insert_ = table.insert().inline()  # inline: no RETURNING of the new ids
    compiled = insert_.compile(dialect=conn.dialect, column_keys=list(_TRAJ_COLUMNS))
    to_db = table.c.created_at.type.bind_processor(conn.dialect)
    now = to_db(utcnow()) if to_db else utcnow()
    positions = compiled.positiontup if compiled.positional else None
    order = None if positions is None else [_TRAJ_COLUMNS.index(name) for name in positions]
    driver = conn.connection.driver_connection
    if driver is None:  # a live connection always has one
        raise RuntimeError("the database connection has no driver connection")
    cursor = driver.cursor()  # the same transaction, without per-row wrapping
    try:
        for lo in range(0, len(rows), INSERT_CHUNK):
            chunk: list[tuple[object, ...]] = [
                (handbook_id, query_ids[r.query_id], r.agent, r.mode, r.score, r.prompt_tokens, r.completion_tokens,
                 r.cost_usd, r.latency_s, r.response, source, r.path, now, batch_id)
                for r in rows[lo:lo + INSERT_CHUNK]]
            if order is None:  # a driver of named parameters
                cursor.executemany(compiled.string, [dict(zip(_TRAJ_COLUMNS, t)) for t in chunk])
                continue
            if order != list(range(len(_TRAJ_COLUMNS))):
                chunk = [tuple(t[i] for i in order) for t in chunk]
            cursor.executemany(compiled.string, chunk)
    finally:
        cursor.close()


def _upsert_queries(s: Session, handbook_id: int, rows: list[OutcomeRow]):
    stored = {ext: (qid, text) for qid, ext, text in s.exec(
        select(Query.id, Query.ext_id, Query.text).where(Query.handbook_id == handbook_id))}
    first: dict[str, OutcomeRow] = {}
    conflicts: list[BadRow] = []
    for r in rows:
        seen = first.setdefault(r.query_id, r)
        if seen.query != r.query:
            conflicts.append(BadRow(r.line, f"query id {r.query_id!r} has a different text than on line {seen.line}"))
        if r.query_id in stored and stored[r.query_id][1] != r.query:
            conflicts.append(BadRow(r.line, f"query id {r.query_id!r} is already stored with a different text"))
    new = [dict(handbook_id=handbook_id, ext_id=r.query_id, text=r.query, ground_truth=r.ground_truth,
                task=r.task, split=r.split or "train", dataset=r.dataset)
           for qid, r in first.items() if qid not in stored]
    if new and not conflicts:
        s.exec(insert(Query), params=new)
        stored = {ext: (qid, text) for qid, ext, text in s.exec(
            select(Query.id, Query.ext_id, Query.text).where(Query.handbook_id == handbook_id))}
    ids = {ext: v[0] for ext, v in stored.items()}
    return ids, len(new), conflicts


def _existing_trajectories(s: Session, handbook_id: int, source: str) -> dict[tuple[int, str, str], tuple]:
    """(query id, agent, mode) -> the _TRAJ_FIELDS values of the handbook's stored attempts from `source`."""
    cols = [col(getattr(Trajectory, f)) for f in _TRAJ_FIELDS]
    stmt = sa_select(col(Trajectory.query_id), col(Trajectory.agent), col(Trajectory.mode), *cols).where(
        col(Trajectory.handbook_id) == handbook_id, col(Trajectory.source) == source)
    # More columns than sqlmodel's typed select() takes: SQLAlchemy's, on the session's connection (the query
    # upsert before it wrote with Core statements, nothing is pending).
    return {(r[0], r[1], r[2]): tuple(r[3:]) for r in s.connection().execute(stmt)}


def _agent_spec(name: str, mode: str, hint: AgentHint | None) -> AgentSpec:
    hint = hint or AgentHint(model=name, price_source="unknown")
    spec = AgentSpec(name=name, mode=mode, model=hint.model or name, input_price_per_m=hint.input_price_per_m,
                     output_price_per_m=hint.output_price_per_m, price_source=hint.price_source, tools=hint.tools)
    if spec.input_price_per_m is None and spec.output_price_per_m is None:
        card = default_price_card(spec.model)
        if card is not None:
            spec.input_price_per_m, spec.output_price_per_m = card
            spec.price_source = "litellm"
        else:
            spec.price_source = "unknown"
    return spec


def _attribute_by_task(content, rows: list[OutcomeRow], query_ids: dict[str, int]) -> None:
    """One skill per task label in the row's mode; each labelled query exercises its task's skill with weight 1.

    A (query, mode) keeps the label attributed first, also across imports, so weights always sum to 1. Every split's
    queries are attributed (validation runs score skill identification on them), but a skill's examples come only
    from the splits the version learns from, so no val/test question text reaches the handbook or its exports.
    """
    attributed = {(q, m) for (q, m, _k) in content.attributions}
    for r in rows:
        qid = query_ids[r.query_id]
        if not r.task or (qid, r.mode) in attributed:
            continue
        skill_key = f"{r.mode}.{_slug(r.task)}"
        if skill_key not in content.skills:
            content.skills[skill_key] = SkillSpec(
                key=skill_key, mode=r.mode, name=r.task, description=f"Queries labelled with task {r.task!r}.",
                provenance={"source": "task_label", "task": r.task},
            )
        skill = content.skills[skill_key]
        learnable = (r.split or "train") in content.learn_splits
        if learnable and len(skill.examples) < 3 and r.query not in skill.examples:
            skill.examples.append(r.query[:300])
        content.attributions[(qid, r.mode, skill_key)] = (1.0, "label")
        attributed.add((qid, r.mode))


def _slug(text: str) -> str:
    out = "".join(ch.lower() if ch.isalnum() else "_" for ch in text.strip())
    return "_".join(p for p in out.split("_") if p) or "task"
