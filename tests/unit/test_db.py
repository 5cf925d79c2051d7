import sqlite3
import threading

import pytest
from sqlalchemy import text
from sqlmodel import Session

from skillorchestra_core.db import dispose_engines, get_engine
from skillorchestra_core.db.migrations import LATEST, MIGRATIONS, upgrade
from skillorchestra_core.errors import SchemaTooNew
from skillorchestra_core.settings import DEFAULT_DB_PATH, Settings


def test_engine_sets_pragmas_on_every_connection(db_url):
    engine = get_engine(db_url)
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 15000
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL


def test_empty_database_is_migrated_to_latest_and_reopening_is_a_no_op(db_url):
    engine = get_engine(db_url)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT version FROM schema_migration ORDER BY version")).scalars().all()
        tables = set(conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'")).scalars())
    assert rows == [number for number, _, _ in MIGRATIONS] and rows[-1] == LATEST
    assert {"handbook", "handbook_version", "skill", "agent", "query", "trajectory", "attribution",
            "audit_log", "mode", "imported_competence"} <= tables
    assert upgrade(engine) == LATEST
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM schema_migration")).scalar() == len(MIGRATIONS)


def test_database_from_newer_code_is_refused(db_url):
    engine = get_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO schema_migration (version, name, applied_at) "
                          "VALUES (:v, 'future', CURRENT_TIMESTAMP)"), {"v": LATEST + 1})
    dispose_engines()
    with pytest.raises(SchemaTooNew, match="newer than this code"):
        get_engine(db_url)
    dispose_engines()


def test_default_url_is_absolute_under_data_whatever_the_cwd(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLORCHESTRA_DB_URL", raising=False)
    url = Settings().database_url
    assert url == f"sqlite:///{DEFAULT_DB_PATH}" and DEFAULT_DB_PATH.is_absolute()
    assert DEFAULT_DB_PATH.parent.name == "data"


def test_concurrent_writers_do_not_hit_database_locked(db_url):
    from skillorchestra_core.db.models import AuditLog

    engine = get_engine(db_url)
    errors = []

    def write(n):
        try:
            for i in range(50):
                with Session(engine) as s:
                    s.add(AuditLog(action=f"t{n}.{i}"))
                    s.commit()
        except Exception as exc:  # pragma: no cover - the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM audit_log")).scalar() == 200


def test_migration_2_turns_watermarks_into_evidence_batches(db_url):
    """A database of schema 1 (versions see trajectories up to an id watermark) keeps every version's evidence."""
    import sqlite3

    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
    from skillorchestra_core.handbook.store import load_version
    from skillorchestra_core.learning import profile

    def rows(tag):
        return [OutcomeRow(i + 1, f"{tag}{i}", f"q {tag}{i}", "a", float(i % 2), task="t", split="train")
                for i in range(6)]

    with session(db_url) as s:
        ingest_outcomes(s, "hb", rows("x"), source_label="x", skills_from_task=True)
        ingest_outcomes(s, "hb", rows("y"), source_label="y", skills_from_task=True)
        s.commit()
        before = [len(profile.load_frames(s, load_version(s, "hb", n)).evidence) for n in (1, 2)]
    dispose_engines()
    con = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    con.executescript("""
        UPDATE handbook_version SET evidence_watermark = CASE number WHEN 1 THEN 6 ELSE 12 END;
        PRAGMA foreign_keys = OFF;
        CREATE TABLE old_trajectory AS SELECT id, handbook_id, query_id, agent, mode, score, prompt_tokens,
            completion_tokens, cost_usd, latency_s, response, source, path, created_at FROM trajectory;
        DROP TABLE trajectory; ALTER TABLE old_trajectory RENAME TO trajectory;
        DROP TABLE version_batch; DROP TABLE evidence_batch; DELETE FROM schema_migration WHERE version = 2;
    """)
    con.close()
    with session(db_url) as s:  # opening migrates
        after = [len(profile.load_frames(s, load_version(s, "hb", n)).evidence) for n in (1, 2)]
    dispose_engines()
    assert before == after == [6, 12]


def test_refinement_tables_are_added_to_an_older_database_and_an_existing_table_is_tolerated(db_url):
    engine = get_engine(db_url)
    with engine.begin() as conn:  # back to a database written before the refinement tables existed
        conn.execute(text("DROP TABLE member"))
        conn.execute(text("DELETE FROM schema_migration WHERE version = 3"))
    assert upgrade(engine) == LATEST
    with engine.begin() as conn:
        tables = set(conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'")).scalars())
        assert {"member", "refinement_candidate"} <= tables  # refinement_candidate already existed: no error
        assert conn.execute(text("SELECT MAX(version) FROM schema_migration")).scalar() == LATEST


def test_migration_6_adds_the_selection_tables_and_tolerates_them_existing(db_url):
    get_engine(db_url)
    dispose_engines()
    con = sqlite3.connect(db_url.removeprefix("sqlite:///"))
    con.executescript("DROP TABLE live_result; DROP TABLE published_config; DELETE FROM schema_migration "
                      "WHERE version = 6;")  # validation_run is left in place: must be tolerated
    con.close()
    engine = get_engine(db_url)
    with engine.connect() as conn:
        tables = set(conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'")).scalars())
        versions = conn.execute(text("SELECT version FROM schema_migration")).scalars().all()
    dispose_engines()
    assert {"validation_run", "live_result", "published_config"} <= tables and 6 in versions
