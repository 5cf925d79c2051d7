"""Crash safety of learning: `skillorchestra learn` and the Learn page's worker process, SIGKILLed at random points
and around the commit of the version, leave the database consistent with no trace of the run or all of it; the
re-run (CLI) or `retry_run` (worker) makes exactly the version an uninterrupted run makes. On SQLite and on
PostgreSQL (fewer random kills there: each point costs a database copy and a learning run)."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
from support.crash import (
    FORCED,
    KillPoint,
    Target,
    campaign,
    consistency,
    fingerprint,
    random_points,
    summary,
    timeline,
)
from support.learning import NAME, build_contrast

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.learning import runs
from skillorchestra_core.learning.pipeline import LearnOptions
from skillorchestra_core.learning.run import run_learning

PER_KIND = 400  # 800 queries x 3 agents: learning takes a few seconds


def _base(url: str) -> None:
    with session(url) as s:
        build_contrast(s, per_kind=PER_KIND)
        s.commit()
    dispose_engines()


def _engine(url: str) -> str:
    return "SQLite" if url.startswith("sqlite") else "PostgreSQL"


def test_a_killed_learn_command_writes_all_or_nothing_and_reruns_to_the_same_version(any_db_url, tmp_path):
    url = any_db_url
    _base(url)
    rng = np.random.default_rng(21)
    n_random = 4 if url.startswith("sqlite") else 3

    def points(clean):
        learning = random_points(rng, clean, n_random, start="ready", end="commit-start")  # learning in memory
        writing = [KillPoint("write+0", delay_s=0.0, after="write")]  # as it stores the version
        return learning + writing + [KillPoint(at, at=at) for at in FORCED]

    outcomes, clean = campaign(Target(url, tmp_path), lambda u: ["--db", u, "learn", NAME, "--ignore-task-labels",
                                                                 "--json"], points, tmp_path / "events.log")
    print(summary(f"learn ({_engine(url)})", outcomes), "| clean run:", timeline(clean))
    for o in outcomes:
        print(f"  {o.point.label:<16} rc {o.run.returncode:>3} {o.state:<7} {timeline(o.run)}")
        assert not o.problems and o.state in ("before", "after") and o.resumed, (o.point.label, o.state, o.problems)
    learning = [o for o in outcomes if o.run.killed and o.run.reached("ready") and not o.run.reached("write")]
    assert learning, "no kill landed while the run was learning"
    assert by_label(outcomes)["write+0"].run.mid_write, "the kill as it stored the version did not land mid-write"
    by = {o.point.label: o for o in outcomes}
    assert by["before-commit"].state == "before" and by["after-commit"].state == "after"
    assert all(o.run.killed for o in outcomes if o.point.at)


def by_label(outcomes) -> dict:
    return {o.point.label: o for o in outcomes}


def _wait(db_url, run_id, statuses, timeout=240.0):
    deadline = time.time() + timeout
    run = runs.get_run(db_url, run_id)
    while run.status not in statuses and time.time() < deadline:
        time.sleep(0.05)
        run = runs.get_run(db_url, run_id)
    return run


def _kill_worker(db_url, run_id, delay_s: float) -> bool:
    """SIGKILL the run's worker `delay_s` after it started working; True when the kill ended the run mid-learning
    (False when the worker had finished first: on a busy machine it can outrun the drawn delay)."""
    run = _wait(db_url, run_id, ("running", "done", "failed"))
    if run.status != "running":
        return False
    time.sleep(delay_s)
    os.kill(run.pid, signal.SIGKILL)
    _, status = os.waitpid(run.pid, 0)  # our grandchild's parent is us: start_run spawned it from this process
    died_of_kill = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return died_of_kill and runs.get_run(db_url, run_id).status != "done"


def _worker_seconds(url: str, options: LearnOptions) -> float:
    """How long the worker process learns (running to done) on this machine, now: the scale of the kill delays."""
    run_id = runs.start_run(url, NAME, options)
    _wait(url, run_id, ("running", "done", "failed"))
    t0 = time.monotonic()
    assert _wait(url, run_id, ("done", "failed")).status == "done"
    return time.monotonic() - t0


def test_a_killed_learning_worker_is_interrupted_and_its_retry_makes_the_clean_version(any_db_url, tmp_path):
    target = Target(any_db_url, tmp_path)
    _base(target.url)
    clean_url = target.fresh()
    options = LearnOptions(task_labels=False)
    run_learning(clean_url, NAME, options)
    scale = _worker_seconds(target.fresh(), options) * 0.8
    rng = np.random.default_rng(5)
    killed = 0
    for _attempt in range(4):  # a first kill that came too late (the run was done) starts over on a fresh copy
        url = target.fresh()
        before = fingerprint(url)
        run_id = runs.start_run(url, NAME, options)
        for _ in range(2):  # kill the run, then its retry
            if not _kill_worker(url, run_id, float(rng.uniform(0.0, scale))):
                break
            killed += 1
            run = runs.get_run(url, run_id)
            assert run.status == "interrupted" and run.version is None
            assert consistency(url) == []
            now = fingerprint(url)
            assert {**now["counts"], "learning_run": 0} == {**before["counts"], "learning_run": 0}
            assert now["versions"] == before["versions"]
            run_id = runs.retry_run(url, run_id)
        if killed:
            break
        scale /= 2
    assert killed >= 1, "no kill landed while the worker was learning"
    done = _wait(url, run_id, ("done", "failed", "cancelled"))
    assert done.status == "done", done.error
    assert fingerprint(url)["versions"] == fingerprint(clean_url)["versions"]  # same number, hash and parent
    old = runs.get_run(url, 1)
    assert old.status == "interrupted" and "retried as run 2" in old.error
    print(f"learning worker ({_engine(url)}): {killed} SIGKILLed mid-learning, consistent after each, "
          "retry made the clean version")
    dispose_engines()
    target.cleanup()


def test_the_worker_marks_its_run_done_in_the_versions_own_transaction(any_db_url, tmp_path):
    """A run that says it wrote no version wrote none: the version and the run's `done` commit together (a kill
    between two commits once left a version under an 'interrupted' run)."""
    url = any_db_url
    with session(url) as s:
        build_contrast(s, per_kind=40)
        s.commit()
    before = fingerprint(url)["versions"]

    def refuse(s, report):
        raise RuntimeError("the run's row cannot be written")

    with pytest.raises(RuntimeError, match="cannot be written"):
        run_learning(url, NAME, LearnOptions(task_labels=False), on_commit=refuse)
    assert fingerprint(url)["versions"] == before  # nothing written without the run's row

    run_id = runs.start_run(url, NAME, LearnOptions(task_labels=False))
    done = _wait(url, run_id, ("done", "failed"))
    assert done.status == "done", done.error
    newest = fingerprint(url)["versions"][-1]
    assert len(fingerprint(url)["versions"]) == len(before) + 1 and done.version == newest[1]
    dispose_engines()
