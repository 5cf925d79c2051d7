"""Eight processes at once against one database, on SQLite and on PostgreSQL: every command succeeds (or, where two
people decide the same thing, the loser gets the documented one-line answer), no row is lost, no version number is
taken twice, and nobody sees a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, text
from sqlmodel import select

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.db.migrations import MIGRATIONS
from skillorchestra_core.db.models import DecisionTrace, Handbook, HandbookVersion, Query, Trajectory

ROOT = Path(__file__).resolve().parents[2]
N = 8
QUERIES = 15

# One process per person. It imports once, then runs each phase's command line in-process, waiting at a barrier (a
# file per process in a shared folder) so the eight really run each phase at the same moment. A phase's result is
# its exit code, what it printed, and any exception that escaped the command (which a user would see as a traceback).
WORKER = r"""
import contextlib, io, json, sys, time, traceback
from pathlib import Path
from skillorchestra_core.cli import main
folder, me, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
phases = json.loads(sys.argv[4])
results = []
for k, argv in enumerate(phases):
    (folder / f"{k}-{me}").touch()
    deadline = time.time() + 600
    while len(list(folder.glob(f"{k}-*"))) < n and time.time() < deadline:
        time.sleep(0.02)
    out, err, code, t0 = io.StringIO(), io.StringIO(), 0, time.time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code or 0
        except BaseException:
            code = 1
            err.write(traceback.format_exc())
    results.append({"code": code, "out": out.getvalue(), "err": err.getvalue(), "s": time.time() - t0})
print(json.dumps(results))
"""


@dataclass
class Phase:
    name: str
    results: list[subprocess.CompletedProcess]
    wall_s: float


def _race(url: str, phases: dict[str, list[list[str]]], barrier: Path) -> dict[str, Phase]:
    """Run N processes; in phase `name` process i runs `skillorchestra --db URL <phases[name][i]>`."""
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    names = list(phases)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(barrier), str(i), str(N),
                               json.dumps([["--db", url, *phases[name][i]] for name in names])],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(N)]
    per_proc = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=900)
        assert p.returncode == 0, stderr
        per_proc.append(json.loads(stdout.strip().splitlines()[-1]))
    out = {}
    for k, name in enumerate(names):
        rows = [r[k] for r in per_proc]
        out[name] = Phase(name, [subprocess.CompletedProcess(phases[name][i], r["code"], r["out"], r["err"])
                                 for i, r in enumerate(rows)], max(r["s"] for r in rows))
        ok = sum(r["code"] == 0 for r in rows)
        print(f"{url.split(':')[0]} {name}: {ok}/{N} succeeded, slowest {out[name].wall_s:.2f} s", flush=True)
    return out


def _assert_clean(results, allowed_failure: str | None = None) -> int:
    """No traceback anywhere; every failure is one line containing `allowed_failure`. Returns the successes."""
    for r in results:
        assert "Traceback" not in r.stderr, r.stderr
        if r.returncode != 0:
            assert allowed_failure is not None and allowed_failure in r.stderr, (r.args, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    return sum(r.returncode == 0 for r in results)


def _outcomes_file(path: Path, tag: str) -> Path:
    lines = ["query_id,query,agent,score,task,split"]
    for i in range(QUERIES):
        for k, agent in enumerate(("a", "b", "c")):
            lines.append(f"{tag}-{i},question {tag} number {i},{agent},{float((i + k) % 3 == 0)},t{i % 3},train")
    path.write_text("\n".join(lines) + "\n")
    return path


def _versions(s, name: str) -> list[int]:
    hb = s.exec(select(Handbook).where(Handbook.name == name)).one()
    return sorted(s.exec(select(HandbookVersion.number).where(HandbookVersion.handbook_id == hb.id)).all())


def test_eight_processes_open_import_and_route_at_once(any_db_url, tmp_path):
    """A fresh database; eight processes list it (each creating the schema if missing), import into one new
    handbook, import into eight new handbooks, then route and store a decision each."""
    shared = [_outcomes_file(tmp_path / f"w{k}.csv", f"w{k}") for k in range(N)]
    own = [_outcomes_file(tmp_path / f"own{k}.csv", "same") for k in range(N)]  # same query ids in every handbook
    phases = _race(any_db_url, {
        "open a fresh database": [["handbooks"]] * N,
        "import into one new handbook": [["import", "outcomes", str(f), "--handbook", "shared", "--skills-from-task"]
                                         for f in shared],
        "import into eight new handbooks": [["import", "outcomes", str(f), "--handbook", f"hb{k}"]
                                            for k, f in enumerate(own)],
        "route and store a decision": [["route", "shared", f"question w{k} number 1"] for k in range(N)],
    }, tmp_path / "barrier")
    for phase in phases.values():
        assert _assert_clean(phase.results) == N, phase.name
    with session(any_db_url) as s:
        stamped = s.exec(text("SELECT version FROM schema_migration ORDER BY version")).scalars().all()
        assert stamped == [number for number, _, _ in MIGRATIONS]
        assert _versions(s, "shared") == list(range(1, N + 1))
        for k in range(N):
            assert _versions(s, f"hb{k}") == [1]
        assert s.exec(select(func.count()).select_from(Handbook)).one() == N + 1
        assert s.exec(select(func.count()).select_from(Query)).one() == 2 * N * QUERIES
        assert s.exec(select(func.count()).select_from(Trajectory)).one() == 2 * N * QUERIES * 3
        stored = sorted(s.exec(select(DecisionTrace.id)).all())
    ids = sorted(int(r.stdout.split("trace #")[1].split()[0]) for r in phases["route and store a decision"].results)
    assert stored == ids and len(set(ids)) == N
    dispose_engines()


def test_eight_reviewers_deciding_at_once(any_demo_db_url, tmp_path):
    """Four approve and four reject each of two candidates: each candidate gets exactly one decision, the others are
    told who decided first; the approval makes exactly one new version."""
    from skillorchestra_core.db.models import AuditLog
    from skillorchestra_core.refinement.run import detect_and_store
    from skillorchestra_core.refinement.store import list_candidates

    with session(any_demo_db_url) as s:
        detect_and_store(s, "demo-qa")
        s.commit()
        first, second = sorted(c.id for c in list_candidates(s, "demo-qa", "pending"))[:2]
    commands = ([["review", "approve", str(first), "--as", f"r{k}"] for k in range(2)]
                + [["review", "reject", str(first), "--as", f"r{k}", "--reason", "no"] for k in range(2, 4)]
                + [["review", "reject", str(second), "--as", f"r{k}", "--reason", "no"] for k in range(4, 8)])
    results = _race(any_demo_db_url, {"decide": commands}, tmp_path / "barrier")["decide"].results
    assert _assert_clean(results, allowed_failure="already") == 2
    with session(any_demo_db_url) as s:
        decided = s.exec(select(AuditLog.entity_id).where(AuditLog.entity == "refinement_candidate")).all()
        assert sorted(decided) == [first, second]
        approved = [r for r in results if r.returncode == 0 and r.args[1] == "approve"]
        assert _versions(s, "demo-qa") == ([1, 2] if approved else [1])
    dispose_engines()


def test_get_or_create_reads_the_row_another_transaction_committed_first(pg_db_url):
    """PostgreSQL: the insert waits on the other transaction's uncommitted key, fails once it commits, and only the
    savepoint is undone: the row the other made is returned and the caller's earlier work in the transaction stays."""
    import threading

    from skillorchestra_core.db.models import Member
    from skillorchestra_core.db.retry import get_or_create

    with session(pg_db_url) as first, session(pg_db_url) as second:
        first.add(Handbook(name="race", description="first"))
        first.flush()  # holds the key, uncommitted
        second.add(Member(name="kept", role="viewer", added_by="t"))
        second.flush()
        got = {}
        worker = threading.Thread(target=lambda: got.update(
            zip(("row", "created"), get_or_create(second, Handbook, {"name": "race"}, {"description": "second"}))))
        worker.start()
        worker.join(1.0)
        assert worker.is_alive()  # waiting for the first transaction
        first.commit()
        worker.join(30)
        assert got["created"] is False and got["row"].description == "first"
        second.commit()
    with session(pg_db_url) as s:
        assert s.exec(select(Member.name)).all() == ["kept"]
        assert s.exec(select(func.count()).select_from(Handbook)).one() == 1
    dispose_engines()
