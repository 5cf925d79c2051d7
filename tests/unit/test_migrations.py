"""The migrated schema is exactly the models' schema, on SQLite and PostgreSQL.

Three ways to reach a database are compared with `MetaData.create_all` of the current models on a second empty
database: upgrading an empty database, and upgrading databases written by older releases (tests/fixtures/schema_v*.sql,
DDL from the models of that release plus a few synthetic rows, which must survive). Compared: tables, columns (type,
nullability, server default), primary keys, indexes, unique constraints, foreign keys and check constraints. Column
order is not compared: SQLite can only append a column, and nothing reads columns by position.

Regenerate the fixtures from the git history with `python tests/unit/test_migrations.py --write-fixtures`.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Column, Index, Integer, MetaData, String, create_engine, inspect, text
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from skillorchestra_core.db import dispose_engines, get_engine
from skillorchestra_core.db.migrations import MIGRATIONS
from skillorchestra_core.routing.decision_codec import CODEC_PACKED, unpack_full

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# name -> (commit whose models wrote it, what it stands for)
OLD_SCHEMAS = {
    "v1": ("6b96f6d", "the first release: schema 1, version membership by trajectory-id watermark"),
    "v5": ("7dda167", "evidence batches and learning runs (schemas 1, 2, 5), before refinement and selection"),
}


# ---------------------------------------------------------------------------------------------------- comparison


def schema_of(conn: Connection) -> dict[str, dict]:
    """Everything about the schema that a migration must reproduce, in a form that compares with `==`."""
    insp, dialect = inspect(conn), conn.dialect
    # One reflection query per kind for all tables (PostgreSQL answers each in one round trip).
    columns, pks, indexes = insp.get_multi_columns(), insp.get_multi_pk_constraint(), insp.get_multi_indexes()
    uniques, fks, checks = (insp.get_multi_unique_constraints(), insp.get_multi_foreign_keys(),
                            insp.get_multi_check_constraints())
    return {
        key[1]: {
            "columns": {c["name"]: (c["type"].compile(dialect=dialect), c["nullable"], c.get("default"))
                        for c in columns[key]},
            "primary key": tuple(pks[key]["constrained_columns"]),
            "indexes": _sorted((ix["name"], tuple(ix["column_names"]), bool(ix["unique"])) for ix in indexes[key]),
            "unique constraints": _sorted((u["name"], tuple(u["column_names"])) for u in uniques[key]),
            "foreign keys": _sorted((fk["name"], tuple(fk["constrained_columns"]), fk["referred_table"],
                                     tuple(fk["referred_columns"]), tuple(sorted(fk.get("options", {}).items())))
                                    for fk in fks[key]),
            "check constraints": _sorted((c["name"], c["sqltext"]) for c in checks[key]),
        }
        for key in columns
    }


def _sorted(items) -> list:
    return sorted(items, key=repr)  # names may be None (SQLite)


def schema_diff(models: dict, migrated: dict) -> list[str]:
    """One line per difference, empty when the schemas are the same."""
    lines = []
    for table in sorted(models.keys() | migrated.keys()):
        if table not in migrated:
            lines.append(f"table {table}: in the models, missing from the migrated database")
            continue
        if table not in models:
            lines.append(f"table {table}: in the migrated database, not in the models")
            continue
        want, got = models[table], migrated[table]
        for col in sorted(want["columns"].keys() | got["columns"].keys()):
            if want["columns"].get(col) != got["columns"].get(col):
                lines.append(f"column {table}.{col}: models {want['columns'].get(col)}, "
                             f"migrated {got['columns'].get(col)}")
        for part in ("primary key", "indexes", "unique constraints", "foreign keys", "check constraints"):
            if want[part] != got[part]:
                lines.append(f"{part} of {table}: models {want[part]}, migrated {got[part]}")
    return lines


# ------------------------------------------------------------------------------------------------------ databases


@pytest.fixture(params=["sqlite", "postgresql"])
def new_db(request, tmp_path):
    """A factory of empty databases on one engine (PostgreSQL: skipped where the server is not installed)."""
    server = request.getfixturevalue("pg_url") if request.param == "postgresql" else None

    def make() -> str:
        name = f"m_{uuid.uuid4().hex[:12]}"
        if server is None:
            return f"sqlite:///{tmp_path / name}.db"
        admin = create_engine(server, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f"CREATE DATABASE {name}"))
        admin.dispose()
        return server.rsplit("/", 1)[0] + f"/{name}"

    make.backend = request.param
    return make


def _schema_at(url: str) -> dict:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return schema_of(conn)
    finally:
        engine.dispose()


_REFERENCE: dict[str, dict] = {}  # backend -> the models' schema, built once per run


def models_schema(new_db, metadata: MetaData | None = None) -> dict:
    """The reference: `create_all` of the models (or of `metadata`) on a second, empty database (SQLite: in
    memory, which reflects the same as a file)."""
    if metadata is None and new_db.backend in _REFERENCE:
        return _REFERENCE[new_db.backend]
    engine = create_engine("sqlite://" if new_db.backend == "sqlite" else new_db())
    try:
        (metadata or SQLModel.metadata).create_all(engine)
        with engine.connect() as conn:
            found = schema_of(conn)
    finally:
        engine.dispose()
    if metadata is None:
        _REFERENCE[new_db.backend] = found
    return found


def fixture_sql(name: str, backend: str) -> str:
    suffix = "" if backend == "sqlite" else ".postgresql"
    return (FIXTURES / f"schema_{name}{suffix}.sql").read_text()


def load_fixture(url: str, name: str) -> None:
    """Write the old database `name` into the empty database at `url`, as the old release left it."""
    backend = url.split(":", 1)[0].split("+", 1)[0]
    script = fixture_sql(name, backend)
    if backend == "sqlite":
        con = sqlite3.connect(url.removeprefix("sqlite:///"))
        con.executescript(script)
        con.close()
        return
    engine = create_engine(url)
    raw = engine.raw_connection()
    try:
        raw.cursor().execute(script)  # several statements: no parameters, so psycopg sends it as one query
        raw.commit()
    finally:
        raw.close()
        engine.dispose()


def rows_of(url: str, tables: dict[str, tuple[list[str], tuple[str, ...]]]) -> dict[str, list[tuple]]:
    """Every row of each table: its columns, ordered by its primary key."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {t: [tuple(r) for r in conn.execute(text(
                f"SELECT {', '.join(cols)} FROM {t} ORDER BY {', '.join(pk)}"))] for t, (cols, pk) in tables.items()}
    finally:
        engine.dispose()


def migrate(url: str) -> None:
    """Open the database the way the app does (engine factory: pragmas, then the migrations)."""
    try:
        get_engine(url)
    finally:
        dispose_engines()


# ---------------------------------------------------------------------------------------------------------- tests


def test_an_empty_database_upgrades_to_exactly_the_models_schema(new_db):
    migrated = new_db()
    migrate(migrated)
    assert schema_diff(models_schema(new_db), _schema_at(migrated)) == []
    engine = create_engine(migrated)
    with engine.connect() as conn:
        stamped = conn.execute(text("SELECT version FROM schema_migration ORDER BY version")).scalars().all()
    engine.dispose()
    assert stamped == [number for number, _, _ in MIGRATIONS]


@pytest.mark.parametrize("name", sorted(OLD_SCHEMAS))
def test_an_old_database_upgrades_to_exactly_the_models_schema_and_keeps_its_rows(new_db, name):
    url = new_db()
    load_fixture(url, name)
    old = _schema_at(url)
    assert schema_diff(models_schema(new_db), old) != []  # the fixture really is an older schema
    # the compact decision log repacks a stored trace: its JSON moves from `trace` into the packed `payload`
    columns = {t: (sorted(c for c in spec["columns"] if (t, c) != ("decision_trace", "trace")), spec["primary key"])
               for t, spec in old.items() if t != "schema_migration"}
    before = rows_of(url, columns)
    old_log = "decision_trace" in old  # a first-release database has no decision log
    traces = {i: json.loads(t) if isinstance(t, str) else t for i, t in rows_of(url, {
        "decision_trace": (["id", "trace"], ("id",))})["decision_trace"]} if old_log else {}
    assert sum(map(len, before.values())) >= 20

    migrate(url)

    assert schema_diff(models_schema(new_db), _schema_at(url)) == []
    assert rows_of(url, columns) == before
    packed = rows_of(url, {"decision_trace": (["id", "codec", "payload"], ("id",))})["decision_trace"]
    assert len(packed) == len(traces)
    assert {i: unpack_full(payload) if codec == CODEC_PACKED else traces[i] for i, codec, payload in packed} == traces
    engine = create_engine(url)
    with engine.connect() as conn:
        stamped = conn.execute(text("SELECT version FROM schema_migration ORDER BY version")).scalars().all()
        unbatched = conn.execute(text("SELECT COUNT(*) FROM trajectory WHERE batch_id IS NULL")).scalar_one()
        seen = conn.execute(text(
            "SELECT v.number, COUNT(t.id) FROM handbook_version v JOIN version_batch vb ON vb.version_id = v.id "
            "JOIN trajectory t ON t.batch_id = vb.batch_id GROUP BY v.number ORDER BY v.number")).all()
    engine.dispose()
    assert stamped == [number for number, _, _ in MIGRATIONS]
    assert unbatched == 0
    assert [tuple(r) for r in seen] == [(1, 2), (2, 4)]  # each version keeps exactly the evidence it saw


def test_a_first_release_database_already_upgraded_without_the_decision_log_gets_it(new_db):
    """Releases before the decision log was created on upgrade took a first-release database to the latest
    version without `decision_trace` and `llm_call` (that schema is today's minus those two tables): opening it now
    adds them, and it keeps its rows."""
    url = new_db()
    load_fixture(url, "v1")
    migrate(url)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE llm_call"))
        conn.execute(text("DROP TABLE decision_trace"))
    engine.dispose()
    damaged = _schema_at(url)
    assert [line.split(":")[0] for line in schema_diff(models_schema(new_db), damaged)] == [
        "table decision_trace", "table llm_call"]
    columns = {t: (sorted(spec["columns"]), spec["primary key"]) for t, spec in damaged.items()}
    before = rows_of(url, columns)

    migrate(url)

    assert schema_diff(models_schema(new_db), _schema_at(url)) == []
    assert rows_of(url, columns) == before


def test_the_upgraded_old_database_is_usable(new_db):
    from skillorchestra_core.db import session
    from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
    from skillorchestra_core.handbook.store import load_version
    from skillorchestra_core.learning import profile

    url = new_db()
    load_fixture(url, "v1")
    try:
        with session(url) as s:  # opening migrates
            assert len(profile.load_frames(s, load_version(s, "fixture-hb", 2)).evidence) == 4
            rows = [OutcomeRow(1, "q3", "What is 6 + 1?", "small", 1.0, task="math", split="train")]
            ingest_outcomes(s, "fixture-hb", rows, source_label="later", skills_from_task=True)
            s.commit()
            latest = load_version(s, "fixture-hb")
            assert latest.number == 3
            assert len(profile.load_frames(s, latest).evidence) == 5
            assert len(profile.load_frames(s, load_version(s, "fixture-hb", 1)).evidence) == 2
    finally:
        dispose_engines()


def _changed_models(change: str) -> MetaData:
    """A copy of the models with one change that no migration makes."""
    metadata = MetaData()
    for table in SQLModel.metadata.sorted_tables:
        table.to_metadata(metadata)
    tables = metadata.tables
    if change == "added column":
        tables["agent"].append_column(Column("nickname", String, nullable=True))
    elif change == "nullability":
        tables["query"].c.task.nullable = False
    elif change == "type":
        tables["trajectory"].c.score.type = Integer()
    elif change == "index":
        Index("ix_skill_mode", tables["skill"].c.mode)
    elif change == "added table":
        from sqlalchemy import Table

        Table("review_note", metadata, Column("id", Integer, primary_key=True), Column("body", String))
    return metadata


CHANGES = {"added column": "column agent.nickname", "nullability": "column query.task",
           "type": "column trajectory.score", "index": "indexes of skill", "added table": "table review_note"}


def test_a_model_change_without_a_migration_is_detected(new_db):
    """What the tests above would report if a model gained a column (or index, or table...) with no migration step:
    an old database upgraded by today's steps lacks it, so it differs from `create_all` of the changed models."""
    url = new_db()
    load_fixture(url, "v5")
    migrate(url)
    migrated = _schema_at(url)
    assert schema_diff(models_schema(new_db), migrated) == []
    # The comparison is the same code on both engines: PostgreSQL checks one change, to keep the run short.
    changes = CHANGES if new_db.backend == "sqlite" else {"added column": CHANGES["added column"]}
    for change, expected in changes.items():
        diff = schema_diff(models_schema(new_db, _changed_models(change)), migrated)
        assert len(diff) == 1 and diff[0].startswith(expected), (change, diff)


# ----------------------------------------------------------------------------------------------- fixture builder

_BASE_ROWS = """\
INSERT INTO handbook (id, name, description, synthetic, created_at) VALUES
  (1, 'fixture-hb', 'Two versions over four trajectories', FALSE, '2026-11-30 11:00:00');
INSERT INTO handbook_version (id, handbook_id, number, parent_id, author, message, source, created_at, content_hash,
  evidence_watermark, metadata) VALUES
  (1, 1, 1, NULL, 'system', 'first import', 'outcomes', '2026-11-30 11:00:01', 'c1', {wm1}, '{{}}'),
  (2, 1, 2, 1, 'ana', 'second import', 'outcomes', '2026-11-30 11:05:00', 'c2', {wm2}, '{{"note": "kept"}}');
INSERT INTO mode (id, version_id, name, description, insights) VALUES
  (1, 1, 'answer', 'Final answer', '[]'),
  (2, 2, 'answer', 'Final answer', '["short answers do"]');
INSERT INTO skill (id, version_id, key, name, description, indicators, examples, mode, parent_key, provenance) VALUES
  (1, 1, 'math', 'Math', '', '[]', '[]', 'answer', NULL, '{{}}'),
  (2, 2, 'math', 'Math', '', '[]', '[]', 'answer', NULL, '{{}}'),
  (3, 2, 'math.arith', 'Arithmetic', 'Sums of small numbers', '["plus"]', '["q1"]', 'answer', 'math',
   '{{"by": "label"}}');
INSERT INTO agent (id, version_id, name, mode, model, input_price_per_m, output_price_per_m, price_source, tools,
  profile) VALUES
  (1, 1, 'small', 'answer', 'openai/gpt-4o-mini', 0.15, 0.6, 'card', '[]', '{{}}'),
  (2, 2, 'small', 'answer', 'openai/gpt-4o-mini', 0.15, 0.6, 'card', '[]', '{{}}'),
  (3, 2, 'large', 'answer', 'openai/gpt-4o', 2.5, 10.0, 'litellm', '["search"]', '{{"strengths": ["math"]}}');
INSERT INTO imported_competence (id, version_id, agent, mode, skill_key, alpha, beta) VALUES
  (1, 2, 'large', 'answer', 'math.arith', 3.0, 1.0);
INSERT INTO query (id, handbook_id, ext_id, text, ground_truth, task, split, dataset) VALUES
  (1, 1, 'q1', 'What is 2 + 2?', '4', 'math', 'train', 'fixture'),
  (2, 1, 'q2', 'What is 3 + 5?', '8', 'math', 'train', 'fixture');
{batches}INSERT INTO trajectory (id, handbook_id, query_id, agent, mode, score, prompt_tokens, completion_tokens,
  cost_usd, latency_s, response, source, path, {batch_col}created_at) VALUES
  (1, 1, 1, 'small', 'answer', 1.0, 12, 3, 0.0000036, 0.4, '4', 'import', NULL, {b1}'2026-11-30 11:00:01'),
  (2, 1, 2, 'small', 'answer', 0.0, 12, 3, 0.0000036, 0.5, '7', 'import', NULL, {b1}'2026-11-30 11:00:01'),
  (3, 1, 1, 'large', 'answer', 1.0, 12, 3, 0.00006, 1.2, '4', 'import', 'answer', {b2}'2026-11-30 11:05:00'),
  (4, 1, 2, 'large', 'answer', 1.0, 15, 4, 0.0000775, 1.5, '8', 'import', 'search,answer',
   {b2}'2026-11-30 11:05:00');
INSERT INTO attribution (id, version_id, query_id, mode, skill_key, weight, attributed_by) VALUES
  (1, 1, 1, 'answer', 'math', 1.0, 'label'),
  (2, 1, 2, 'answer', 'math', 1.0, 'label'),
  (3, 2, 1, 'answer', 'math.arith', 1.0, 'label'),
  (4, 2, 2, 'answer', 'math', 0.5, 'llm'),
  (5, 2, 2, 'answer', 'math.arith', 0.5, 'llm');
INSERT INTO audit_log (id, at, actor, action, entity, entity_id, handbook_id, details) VALUES
  (1, '2026-11-30 11:00:01', 'system', 'import', 'handbook_version', 1, 1, '{{"rows": 2}}'),
  (2, '2026-11-30 11:05:00', 'ana', 'import', 'handbook_version', 2, 1, '{{"rows": 2}}');
"""

_V5_BATCHES = """\
INSERT INTO evidence_batch (id, handbook_id, digest, trajectories, source, created_at) VALUES
  (1, 1, 'd1', 2, 'import', '2026-11-30 11:00:01'),
  (2, 1, 'd2', 2, 'import', '2026-11-30 11:05:00');
"""

_V5_ROWS = """\
INSERT INTO version_batch (version_id, batch_id) VALUES (1, 1), (2, 1), (2, 2);
INSERT INTO decision_trace (id, handbook_id, handbook_name, version_id, version_number, content_hash, router, lam,
  cost_unit, execution, query_text, chosen_agent, cause, n_steps, margin, total_cost_usd, outcome, actor, created_at,
  trace) VALUES
  (1, 1, 'fixture-hb', 2, 2, 'c2', 'skill', 0.1, 'normalised', 'dry-run', 'What is 4 + 4?', 'small', 'utility', 1,
   0.2, NULL, NULL, 'ana', '2026-11-30 12:00:00', '{"steps": [{"mode": "answer", "chosen": "small"}]}');
INSERT INTO llm_call (id, at, purpose, backend, model, prompt_hash, prompt_tokens, completion_tokens, cost_usd,
  latency_s, outcome, error, decision_trace_id) VALUES
  (1, '2026-11-30 12:00:01', 'route', 'fake', 'openai/gpt-4o-mini', 'p1', 20, 5, 0.000006, 0.3, 'ok', '', 1);
INSERT INTO learning_run (id, handbook_name, parent_version, method, options, status, stage, progress, detail,
  cancel_requested, pid, version, report, error, actor, created_at, updated_at) VALUES
  (1, 'fixture-hb', 2, 'offline', '{"seed": 0}', 'done', 'commit', '{"commit": 1.0}', '', FALSE, NULL, NULL,
   '{"skills": 2}', '', 'ana', '2026-11-30 12:10:00', '2026-11-30 12:11:00');
"""


def _rows(name: str) -> str:
    if name == "v1":  # versions see trajectories up to their watermark
        return _BASE_ROWS.format(wm1=2, wm2=4, batches="", batch_col="", b1="", b2="")
    return _BASE_ROWS.format(wm1=0, wm2=0, batches=_V5_BATCHES, batch_col="batch_id, ", b1="1, ", b2="2, ") + _V5_ROWS


_OLD_DDL = r"""
import json, sqlite3, sys
from sqlalchemy import create_engine
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlmodel import SQLModel
from skillorchestra_core.db import migrations

path = sys.argv[1]
engine = create_engine("sqlite:///" + path)
migrations.upgrade(engine)  # that release's own code creates and stamps the database
engine.dispose()
con = sqlite3.connect(path)
# Tables in creation order, each followed by its indexes by name (create_all's index order varies run to run).
sqlite_ddl = [r[0] for r in con.execute(
    "SELECT m.sql FROM sqlite_master m JOIN sqlite_master t ON t.type = 'table' AND t.name = m.tbl_name "
    "WHERE m.sql IS NOT NULL ORDER BY t.rowid, m.type != 'table', m.name")]
stamps = con.execute("SELECT version, name FROM schema_migration ORDER BY version").fetchall()
pg, pg_ddl = postgresql.dialect(), []
for table in SQLModel.metadata.sorted_tables:
    pg_ddl.append(str(CreateTable(table).compile(dialect=pg)).strip())
    pg_ddl += [str(CreateIndex(ix).compile(dialect=pg)) for ix in sorted(table.indexes, key=lambda i: i.name)]
print(json.dumps({"sqlite": sqlite_ddl, "postgresql": pg_ddl, "stamps": stamps}))
"""


def write_fixtures() -> None:
    """Build tests/fixtures/schema_<name>[.postgresql].sql from the models of each commit in OLD_SCHEMAS."""
    import json
    import subprocess
    import sys
    import tempfile

    root = FIXTURES.parent.parent
    for name, (commit, about) in OLD_SCHEMAS.items():
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(["git", "-C", str(root), "archive", commit, "skillorchestra_core"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            out = subprocess.run([sys.executable, "-c", _OLD_DDL, str(Path(tmp) / "old.db")], check=True,
                                 capture_output=True, text=True, env={"PYTHONPATH": tmp, "PATH": "/usr/bin:/bin"},
                                 cwd=tmp).stdout
        found = json.loads(out)
        stamps = "INSERT INTO schema_migration (version, name, applied_at) VALUES\n" + ",\n".join(
            f"  ({v}, '{n}', '2026-11-30 10:59:00')" for v, n in found["stamps"]) + ";\n"
        rows = stamps + _rows(name)
        for backend, suffix in (("sqlite", ""), ("postgresql", ".postgresql")):
            tail = ""
            if backend == "postgresql":  # the old release's sequences had handed out the ids below
                tail = "".join(f"SELECT setval(pg_get_serial_sequence('{t}', 'id'), (SELECT MAX(id) FROM {t}));\n"
                               for t in _tables_with_rows(rows) if t not in ("schema_migration", "version_batch"))
            header = (f"-- A {backend} database as written by the schema of commit {commit}:\n-- {about}.\n"
                      f"-- Generated by `python tests/unit/test_migrations.py --write-fixtures`; the rows are "
                      f"synthetic.\n")
            body = "".join("\n".join(line.rstrip() for line in ddl.strip().splitlines()) + ";\n"
                           for ddl in found[backend])
            (FIXTURES / f"schema_{name}{suffix}.sql").write_text(f"{header}BEGIN;\n{body}{rows}{tail}COMMIT;\n")


def _tables_with_rows(rows: str) -> list[str]:
    import re

    return list(dict.fromkeys(re.findall(r"^INSERT INTO (\w+)", rows, flags=re.M)))


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--write-fixtures"]:
        sys.exit("usage: python tests/unit/test_migrations.py --write-fixtures")
    write_fixtures()
