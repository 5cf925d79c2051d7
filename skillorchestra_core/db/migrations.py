"""Append-only schema migrations, recorded in `schema_migration`.

A new database gets every table at once and is stamped with the latest version. An older database runs the
migrations above its version in order. Rules for new entries: never edit or reorder an entry; a migration that adds a
column must tolerate the column already existing (a brand-new database was created from the current models). Every
change to the models needs a step: tests/unit/test_migrations.py upgrades databases of older releases and compares
the result with the models' schema.
"""

from __future__ import annotations

import json
from typing import Callable

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel

from skillorchestra_core.db import (
    models,  # noqa: F401  (registers the tables)
    selection_tables,  # noqa: F401  (registers the selection tables)
)
from skillorchestra_core.errors import SchemaTooNew


def _m001_initial(conn: Connection) -> None:
    SQLModel.metadata.create_all(conn)


def _m002_evidence_batches(conn: Connection) -> None:
    """Version membership by evidence batch instead of a trajectory-id watermark.

    Older databases: each handbook's trajectories are cut into batches at its versions' watermarks (and one batch
    for any rows above the highest), and each version is linked to the batches at or under its watermark, so every
    version keeps exactly the evidence it saw."""
    from skillorchestra_core.evidence.batches import digest_rows

    SQLModel.metadata.create_all(conn, tables=[models.table_of(models.EvidenceBatch),
                                               models.table_of(models.VersionBatch)])
    if "batch_id" not in {c["name"] for c in inspect(conn).get_columns("trajectory")}:
        conn.execute(text("ALTER TABLE trajectory ADD COLUMN batch_id INTEGER REFERENCES evidence_batch (id)"))
        conn.execute(text("CREATE INDEX IF NOT EXISTS ix_trajectory_batch_id ON trajectory (batch_id)"))
    handbooks: list[int] = list(conn.execute(text(
        "SELECT DISTINCT handbook_id FROM trajectory WHERE batch_id IS NULL")).scalars())
    for hb in handbooks:
        top: int = conn.execute(text("SELECT MAX(id) FROM trajectory WHERE handbook_id = :h"), {"h": hb}).scalar_one()
        watermarks: list[int] = list(conn.execute(text(
            "SELECT evidence_watermark FROM handbook_version WHERE handbook_id = :h AND evidence_watermark > 0"),
            {"h": hb}).scalars())
        marks = sorted({int(m) for m in watermarks} | {int(top)})
        low, bounds = 0, dict[int, int]()
        for high in marks:
            rows = conn.execute(text(
                "SELECT q.ext_id, t.agent, t.mode, t.source, t.score, t.prompt_tokens, t.completion_tokens, "
                "t.cost_usd, t.latency_s FROM trajectory t JOIN query q ON q.id = t.query_id "
                "WHERE t.handbook_id = :h AND t.id > :lo AND t.id <= :hi"), {"h": hb, "lo": low, "hi": high}).all()
            if rows:
                batches = models.table_of(models.EvidenceBatch)
                bid: int = conn.execute(batches.insert().values(
                    handbook_id=hb, digest=digest_rows(rows), trajectories=len(rows), source="migrated",
                    created_at=models.utcnow()).returning(batches.c.id)).scalar_one()
                conn.execute(text("UPDATE trajectory SET batch_id = :b WHERE handbook_id = :h AND id > :lo "
                                  "AND id <= :hi"), {"b": bid, "h": hb, "lo": low, "hi": high})
                bounds[bid] = high
            low = high
        versions: list[tuple[int, int]] = [(int(r[0]), int(r[1])) for r in conn.execute(text(
            "SELECT id, evidence_watermark FROM handbook_version WHERE handbook_id = :h"), {"h": hb})]
        for vid, wm in versions:
            for bid, high in bounds.items():
                if high <= wm:
                    conn.execute(models.table_of(models.VersionBatch).insert().values(version_id=vid, batch_id=bid))


def _m003_refinement_review(conn: Connection) -> None:
    # checkfirst: a database created by newer code already has these tables.
    SQLModel.metadata.create_all(conn, tables=[models.table_of(models.RefinementCandidate),
                                               models.table_of(models.Member)])


def _m005_learning_runs(conn: Connection) -> None:
    """The `learning_run` table (checkfirst: a database created from the current models already has it)."""
    SQLModel.metadata.create_all(conn, tables=[models.table_of(models.LearningRun)])


def _m006_selection(conn: Connection) -> None:
    """Validation runs, live results and published configurations (create_all skips tables that exist)."""
    SQLModel.metadata.create_all(conn, tables=selection_tables.TABLES)


def _m007_compact_decisions(conn: Connection) -> None:
    """Compact decision rows: typed `codec`, `payload` and `tags` columns, the facet table, the keyset index; every
    stored trace JSON becomes its packed form (zlib of the same JSON: read back unchanged), its tags and facets."""
    from sqlalchemy import bindparam, select

    from skillorchestra_core.routing.decision_codec import CODEC_JSON, CODEC_PACKED, pack_full
    from skillorchestra_core.routing.store import facet_rows, tags_text

    have = {c["name"] for c in inspect(conn).get_columns("decision_trace")}
    blob = "BYTEA" if conn.dialect.name == "postgresql" else "BLOB"
    added = (("codec", "INTEGER NOT NULL DEFAULT 0"), ("payload", blob), ("tags", "VARCHAR NOT NULL DEFAULT ''"))
    for name, ddl in added:
        if name not in have:
            conn.execute(text(f"ALTER TABLE decision_trace ADD COLUMN {name} {ddl}"))
    SQLModel.metadata.create_all(conn, tables=[models.table_of(models.DecisionFacet)])
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_decision_trace_handbook_name_id "
                      "ON decision_trace (handbook_name, id)"))
    table, facets = models.table_of(models.DecisionTrace), models.table_of(models.DecisionFacet)
    update = (table.update().where(table.c.id == bindparam("row_id"))
              .values(codec=CODEC_PACKED, payload=bindparam("packed"), tags=bindparam("tagged"), trace={}))
    last = 0
    while True:  # in chunks: memory stays flat whatever the number of stored traces
        rows = conn.execute(select(table.c.id, table.c.trace, table.c.handbook_name, table.c.chosen_agent,
                                   table.c.cause, table.c.router, table.c.version_number)
                            .where(table.c.id > last, table.c.codec == CODEC_JSON)
                            .order_by(table.c.id).limit(2000)).mappings().all()
        if not rows:
            break
        last = rows[-1]["id"]
        params = []
        for r in rows:
            full = r["trace"] if isinstance(r["trace"], dict) else json.loads(r["trace"] or "{}")
            if not full:
                continue
            steps = full.get("steps", [])
            params.append({"row_id": r["id"], "packed": pack_full(full), "tagged": tags_text(
                (st.get("chosen") for st in steps), (a["skill"] for st in steps for a in st.get("active_skills", [])))})
        if params:
            conn.execute(update, params)
        known = {tuple(x) for x in conn.execute(select(facets.c.handbook_name, facets.c.field, facets.c.value))}
        new = [f for f in facet_rows([dict(r) for r in rows])
               if (f["handbook_name"], f["field"], f["value"]) not in known]
        if new:
            conn.execute(facets.insert(), new)


def _m008_live_run_owner(conn: Connection) -> None:
    """Who executes a live validation run (pid, host) and its heartbeat: a killed run reads as interrupted."""
    have = {c["name"] for c in inspect(conn).get_columns("validation_run")}
    stamp = "TIMESTAMP WITHOUT TIME ZONE" if conn.dialect.name == "postgresql" else "DATETIME"
    for name, ddl in (("owner_pid", "INTEGER"), ("owner_host", "VARCHAR"), ("heartbeat_at", stamp)):
        if name not in have:
            conn.execute(text(f"ALTER TABLE validation_run ADD COLUMN {name} {ddl}"))


def _m009_version_summaries(conn: Connection) -> None:
    """Stored evidence summaries of versions. Versions made before this step get theirs on first read."""
    SQLModel.metadata.create_all(conn, tables=[models.table_of(models.VersionSummary)])


def _m010_learning_run_host(conn: Connection) -> None:
    """The learning worker's host beside its pid: on another host only the heartbeat tells a dead worker."""
    if "owner_host" not in {c["name"] for c in inspect(conn).get_columns("learning_run")}:
        conn.execute(text("ALTER TABLE learning_run ADD COLUMN owner_host VARCHAR"))


# Tables that joined the models after schema 1 with no step of their own: a database written by the first release
# lacks them, and so does one that earlier releases then upgraded to the latest version.
WITHOUT_A_STEP = (models.table_of(models.DecisionTrace), models.table_of(models.LlmCall))


def _create_tables_without_a_step(conn: Connection) -> None:
    """Create whichever of those tables is missing, before any pending step (a later step may alter them)."""
    missing = [t for t in WITHOUT_A_STEP if not inspect(conn).has_table(t.name)]
    if missing:
        SQLModel.metadata.create_all(conn, tables=missing)


MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial schema", _m001_initial),
    (2, "evidence batches", _m002_evidence_batches),
    (3, "refinement candidates and members", _m003_refinement_review),
    (5, "learning runs", _m005_learning_runs),
    (6, "selection: validation runs, live results, published configurations", _m006_selection),
    (7, "compact decision log", _m007_compact_decisions),
    (8, "live validation runs: owner and heartbeat", _m008_live_run_owner),
    (9, "version evidence summaries", _m009_version_summaries),
    (10, "learning runs: owner host", _m010_learning_run_host),
]
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table("schema_migration"):
        return 0
    return conn.execute(text("SELECT COALESCE(MAX(version), 0) FROM schema_migration")).scalar_one()


def upgrade(engine: Engine) -> int:
    """Bring the database to LATEST; refuse one written by newer code. Returns the version reached."""
    with engine.begin() as conn:
        return upgrade_on(conn)


def upgrade_on(conn: Connection) -> int:
    """`upgrade` inside the caller's transaction (one that may already hold the schema lock; the caller commits)."""
    found = current_version(conn)
    if found > LATEST:
        raise SchemaTooNew(
            f"database schema is version {found}, newer than this code ({LATEST}); upgrade skillorchestra-studio"
        )
    if found == 0:
        SQLModel.metadata.create_all(conn)
        pending = MIGRATIONS  # all stamped: create_all already made the current schema
    else:
        _create_tables_without_a_step(conn)
        # Every entry not yet recorded (numbers may have gaps: rooms reserve their numbers), in list order.
        applied: set[int] = set(conn.execute(text("SELECT version FROM schema_migration")).scalars())
        pending = [m for m in MIGRATIONS if m[0] not in applied]
        for _, _, step in pending:
            step(conn)
    for number, name, _ in pending:
        conn.execute(
            text("INSERT INTO schema_migration (version, name, applied_at) VALUES (:v, :n, CURRENT_TIMESTAMP)"),
            {"v": number, "n": name},
        )
    return LATEST
