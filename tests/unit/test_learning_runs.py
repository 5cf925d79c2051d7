"""Learning runs in a worker process: progress in the database, cancel, and a killed run that writes nothing."""

import os
import signal
import subprocess
import sys
import time

from sqlalchemy import text
from support.learning import NAME, build_contrast

from skillorchestra_core.db import get_engine, session
from skillorchestra_core.db.migrations import LATEST, upgrade
from skillorchestra_core.learning import runs
from skillorchestra_core.learning.pipeline import LearnOptions
from skillorchestra_core.learning.worker import work
from skillorchestra_core.processes import host

TABLES = ("handbook_version", "skill", "mode", "agent", "attribution", "query", "trajectory", "evidence_batch",
          "version_batch", "audit_log", "llm_call")


def _counts(db_url):
    with get_engine(db_url).connect() as c:
        return {t: c.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in TABLES}


def _build(db_url, **kw):
    with session(db_url) as s:
        build_contrast(s, **kw)
        s.commit()


def test_a_run_records_progress_per_stage_and_its_version(db_url):
    _build(db_url)
    run_id = runs.create_run(db_url, NAME, LearnOptions(task_labels=False), actor="tester")
    assert work(db_url, run_id) == "done"
    run = runs.get_run(db_url, run_id)
    assert run.status == "done" and run.version == 2 and run.parent_version == 1
    assert run.progress == {"discovery": 1.0, "attribution": 1.0, "profiling": 1.0}
    assert run.report["skills_added"]["answer"] and run.report["method"] == "offline"


def test_a_cancelled_run_writes_no_version(db_url):
    _build(db_url)
    before = _counts(db_url)
    run_id = runs.create_run(db_url, NAME, LearnOptions())
    runs.request_cancel(db_url, run_id)
    assert work(db_url, run_id) == "cancelled"
    assert runs.get_run(db_url, run_id).status == "cancelled" and _counts(db_url) == before


def test_a_killed_worker_leaves_the_database_as_it_was(db_url):
    _build(db_url, per_kind=1500)
    before = _counts(db_url)
    run_id = runs.start_run(db_url, NAME, LearnOptions(task_labels=False))
    deadline = time.time() + 120
    run = runs.get_run(db_url, run_id)
    while time.time() < deadline and not (run.status == "running" and run.stage):
        time.sleep(0.05)
        run = runs.get_run(db_url, run_id)
    assert run.status == "running" and run.version is None, run.error
    assert run.owner_host == host()  # the worker says where its pid lives
    os.kill(run.pid, signal.SIGKILL)
    os.waitpid(run.pid, 0)
    after = runs.get_run(db_url, run_id)
    assert after.status == "interrupted" and "no version" in after.error
    assert _counts(db_url) == before
    with get_engine(db_url).connect() as c:
        assert c.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"


def test_a_worker_on_another_host_is_judged_by_its_heartbeat_alone(db_url):
    """A pid means nothing on another host: a run there with a fresh heartbeat is running, whatever this host's
    process of that pid does; the same dead pid on this host makes it interrupted."""
    _build(db_url)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that is dead here
    run_id = runs.create_run(db_url, NAME, LearnOptions())
    runs.update(db_url, run_id, status="running", pid=gone.pid, owner_host=f"not-{host()}")
    assert runs.get_run(db_url, run_id).status == "running"
    runs.update(db_url, run_id, owner_host=host())
    assert runs.get_run(db_url, run_id).status == "interrupted"


def test_the_learning_run_migration_tolerates_an_existing_table(db_url):
    engine = get_engine(db_url)
    upgrade(engine)
    with engine.begin() as c:
        c.execute(text("DELETE FROM schema_migration WHERE version = 5"))
    assert upgrade(engine) == LATEST
    with engine.connect() as c:
        assert c.execute(text("SELECT name FROM schema_migration WHERE version = 5")).scalar_one() == "learning runs"
