"""Learning runs in the database: start one in a worker process, follow its progress, cancel it.

The worker (`python -m skillorchestra_core.learning.worker RUN_ID`) writes progress in short transactions of its
own, beats a heartbeat (`updated_at`) every few seconds, and commits the new version once, at the end; a cancelled,
failed or killed run leaves no version behind. A run still marked queued or running whose process is gone, or whose
heartbeat stopped, is reported as interrupted, and `retry_run` starts it again from the same parent version (learning
is deterministic, so the retry makes exactly the version the run would have made).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import asdict

from sqlmodel import Session, col, select

from skillorchestra_core.db.engine import get_engine
from skillorchestra_core.db.models import LearningRun, key, utcnow
from skillorchestra_core.errors import NotFound, StudioError
from skillorchestra_core.handbook.store import get_version
from skillorchestra_core.learning.pipeline import STAGES, LearnOptions
from skillorchestra_core.processes import host, owner_gone

RETRYABLE = ("interrupted", "failed", "cancelled")


def create_run(db_url: str | None, name: str, options: LearnOptions, actor: str = "system",
               parent_version: int | None = None) -> int:
    with Session(get_engine(db_url)) as s:
        parent = get_version(s, name, parent_version)
        run = LearningRun(handbook_name=name, parent_version=parent.number, method=options.method,
                          options=asdict(options), actor=actor, progress={st: 0.0 for st in STAGES})
        s.add(run)
        s.commit()
        return key(run)


def start_run(db_url: str | None, name: str, options: LearnOptions, actor: str = "system",
              parent_version: int | None = None) -> int:
    """Create the run and start its worker process (detached from the caller's session); returns the run id."""
    run_id = create_run(db_url, name, options, actor, parent_version)
    url = str(get_engine(db_url).url.render_as_string(hide_password=False))
    env = {**os.environ, "SKILLORCHESTRA_DB_URL": url}  # not on the command line, where `ps` would show a password
    proc = subprocess.Popen([sys.executable, "-m", "skillorchestra_core.learning.worker", str(run_id)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    update(db_url, run_id, pid=proc.pid, owner_host=host())
    return run_id


def update(db_url: str | None, run_id: int, **fields) -> None:
    with Session(get_engine(db_url)) as s:
        update_in(s, run_id, **fields)
        s.commit()


def update_in(s: Session, run_id: int, **fields) -> None:
    """Set a run's fields in the caller's transaction."""
    run = s.get(LearningRun, run_id)
    if run is None:
        raise NotFound(f"no learning run with id {run_id}")
    for k, v in fields.items():
        setattr(run, k, v)
    run.updated_at = utcnow()
    s.add(run)


def get_run(db_url: str | None, run_id: int) -> LearningRun:
    with Session(get_engine(db_url), expire_on_commit=False) as s:
        run = s.get(LearningRun, run_id)
        if run is None:
            raise NotFound(f"no learning run with id {run_id}")
        s.expunge(run)
    if run.status in ("queued", "running") and owner_gone(run.pid, run.updated_at, run.owner_host):
        run.status, run.error = "interrupted", "the worker process is gone; no version was written"
    return run


def retry_run(db_url: str | None, run_id: int, actor: str | None = None) -> int:
    """Start an interrupted, failed or cancelled run again, as a new run from the same parent version with the same
    options; the old run is kept, marked with the id of its retry. Returns the new run's id."""
    old = get_run(db_url, run_id)
    if old.status not in RETRYABLE:
        raise StudioError(f"learning run {run_id} is {old.status}; only an interrupted, failed or cancelled run "
                          "can be retried")
    new_id = start_run(db_url, old.handbook_name, LearnOptions(**old.options), actor or old.actor,
                       parent_version=old.parent_version)
    update(db_url, run_id, status=old.status, error=f"{old.error} (retried as run {new_id})".strip())
    return new_id


def list_runs(db_url: str | None, name: str | None = None, limit: int = 20) -> list[LearningRun]:
    with Session(get_engine(db_url), expire_on_commit=False) as s:
        stmt = select(col(LearningRun.id)).order_by(col(LearningRun.id).desc()).limit(limit)
        if name:
            stmt = stmt.where(LearningRun.handbook_name == name)
        ids = [i for i in s.exec(stmt) if i is not None]
    return [get_run(db_url, i) for i in ids]


def request_cancel(db_url: str | None, run_id: int) -> None:
    update(db_url, run_id, cancel_requested=True)


def cancel_requested(db_url: str | None, run_id: int) -> bool:
    with Session(get_engine(db_url)) as s:
        return bool(s.exec(select(LearningRun.cancel_requested).where(LearningRun.id == run_id)).first())

