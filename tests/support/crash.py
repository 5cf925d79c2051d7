"""Crash-test harness: run a real `skillorchestra` command in a subprocess against a real database, SIGKILL it at
random or forced points, and check what it left behind.

A campaign kills the command at each point, checks the database (integrity, foreign keys, and a fingerprint that
must equal exactly the state before or the state after a clean run), and re-runs the command (the resume, which the
next kill point may interrupt again) until it completes, which must give exactly the clean run's fingerprint.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from sqlalchemy import create_engine, inspect, text

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("crash_child.py")
FORCED = ("before-commit", "in-commit", "after-commit")


@dataclass
class Run:
    """One run of the child: its exit code (negative: killed by that signal), the events it logged, seconds."""

    returncode: int
    events: list[tuple[float, str]]
    seconds: float
    stdout: str = ""
    stderr: str = ""

    @property
    def killed(self) -> bool:
        return self.returncode == -signal.SIGKILL

    def reached(self, event: str) -> bool:
        return any(e == event for _, e in self.events)

    def at(self, event: str) -> float | None:
        """Seconds from the child's start to its first `event`."""
        t0 = self.events[0][0] if self.events else 0.0
        return next((t - t0 for t, e in self.events if e == event), None)

    @property
    def mid_write(self) -> bool:
        """Killed inside a write transaction: it wrote, and its last commit never finished."""
        names = [e for _, e in self.events]
        return self.killed and "write" in names and names[-1] != "commit-end" and (
            "commit-end" not in names or names[::-1].index("write") < names[::-1].index("commit-end"))


@dataclass
class KillPoint:
    label: str
    delay_s: float | None = None  # SIGKILL from the parent this many seconds after the child's start ...
    after: str = ""  # ... or after the child logged this event (e.g. "write")
    at: str = ""  # or a forced point of the child (FORCED) at its `nth` writing commit
    nth: int = 1


@dataclass
class Outcome:
    point: KillPoint
    run: Run
    state: str  # "before", "after" or "partial:<what differs>"
    problems: list[str] = field(default_factory=list)
    resumed: bool = False  # the resume ended exactly where a clean run ends


class Zygote:
    """The fork server of `crash_child.py`: one warm interpreter that forks each run (see `crash_child.serve`)."""

    def __init__(self, preload: str = ""):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "CRASH_PRELOAD": preload}
        self.proc = subprocess.Popen([sys.executable, str(CHILD), "--serve"], cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self._buf = b""

    def start(self, argv: list[str], env: dict, out: Path, err: Path) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"argv": argv, "env": env, "out": str(out), "err": str(err)}) + "\n")
                              .encode())
        self.proc.stdin.flush()
        line = self._line(120.0)
        assert line is not None, "the fork server did not answer"
        return int(line["pid"])

    def wait(self, timeout: float | None) -> int | None:
        """The child's return code, or None when it still runs after `timeout` seconds."""
        line = self._line(timeout)
        return None if line is None else int(line["returncode"])

    def _line(self, timeout: float | None) -> dict | None:
        assert self.proc.stdout is not None
        fd, deadline = self.proc.stdout.fileno(), None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            assert chunk, "the fork server died"
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def run_child(argv: list[str], log: Path, *, env: dict | None = None, point: KillPoint | None = None,
              timeout: float = 300.0, zygote: Zygote | None = None) -> Run:
    """Run the command (forked from `zygote`, else a fresh interpreter), SIGKILL it at `point`, collect its log."""
    log.unlink(missing_ok=True)
    out, err = log.with_suffix(".out"), log.with_suffix(".err")
    child_env = {**os.environ, **(env or {}), "CRASH_LOG": str(log)}
    if point is not None and point.at:
        child_env.update(CRASH_AT=point.at, CRASH_COMMIT=str(point.nth))
    if zygote is not None:
        pid = zygote.start(argv, child_env, out, err)
        t0, wait = time.monotonic(), zygote.wait
    else:
        t0 = time.monotonic()
        with open(out, "w") as o, open(err, "w") as e:
            proc = subprocess.Popen([sys.executable, str(CHILD), *argv], cwd=ROOT, env=child_env, stdout=o, stderr=e)
        pid, wait = proc.pid, (lambda t: _popen_wait(proc, t))
    delay = point.delay_s if point is not None and point.delay_s is not None else timeout
    if point is not None and point.after:
        _wait_for(pid, log, point.after, t0 + timeout)
    code = wait(delay)
    if code is None:
        os.kill(pid, signal.SIGKILL)  # the kill under test (or a hung child)
        code = wait(None)
    events = []
    if log.exists():
        for line in log.read_text().splitlines():
            t, _, name = line.partition(" ")
            events.append((float(t), name))
    return Run(int(code), events, time.monotonic() - t0, out.read_text(), err.read_text())


def _popen_wait(proc: subprocess.Popen, timeout: float | None) -> int | None:
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def _wait_for(pid: int, log: Path, event: str, deadline: float) -> None:
    """Until the child logs `event`, exits or `deadline` passes."""
    needle = f" {event}\n"
    while time.monotonic() < deadline and _running(pid):
        if log.exists() and needle in log.read_text():
            return
        time.sleep(0.005)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def consistency(url: str) -> list[str]:
    """What is wrong with the database as a whole: SQLite's integrity and foreign-key checks; on PostgreSQL
    (which enforces keys itself) any transaction a dead client left open."""
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            if engine.dialect.name == "sqlite":
                problems = [r for (r,) in c.execute(text("PRAGMA integrity_check")) if r != "ok"]
                problems += [f"foreign key: {tuple(r)}" for r in c.execute(text("PRAGMA foreign_key_check"))]
                return problems
            left = c.execute(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                  "AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'")).scalar_one()
            return [f"{left} transaction(s) left open"] if left else []
    finally:
        engine.dispose()


def fingerprint(url: str) -> dict:
    """Every table's row count, every version's identity and content hash, every validation run's figures and every
    live answer: equal fingerprints mean the same work is in the database, once."""
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            tables = sorted(inspect(c).get_table_names())
            counts = {t: c.execute(text(f'SELECT COUNT(*) FROM "{t}"')).scalar_one() for t in tables}
            versions = [tuple(r) for r in c.execute(text(
                "SELECT h.name, v.number, v.content_hash, p.number FROM handbook_version v JOIN handbook h "
                "ON h.id = v.handbook_id LEFT JOIN handbook_version p ON p.id = v.parent_id ORDER BY 1, 2"))]
            runs = [tuple(r) for r in c.execute(text(
                "SELECT router, version_number, candidate, lam, split, kind, status, n_queries, n_scored, accuracy, "
                "mean_cost_usd, content_hash FROM validation_run ORDER BY 1, 2, 3, 4, 6"))]
            live = [tuple(r) for r in c.execute(text(
                "SELECT q.ext_id, l.agent, l.answer, l.score, l.cost_usd, l.error FROM live_result l "
                "JOIN query q ON q.id = l.query_id ORDER BY 1"))]
        return {"counts": counts, "versions": versions, "runs": runs, "live": live}
    finally:
        engine.dispose()


def digest(fp: dict) -> str:
    return hashlib.sha256(json.dumps(fp, sort_keys=True, default=str).encode()).hexdigest()[:16]


def classify(fp: dict, before: dict, after: dict) -> str:
    if fp == before:
        return "before"
    if fp == after:
        return "after"
    return "partial: " + _differs(fp, after)


def leftovers(url: str) -> list[str]:
    """Temporary files a killed run left next to an SQLite database or in its routing cache."""
    path = sqlite_path(url)
    if path is None:
        return []
    found = [p for p in path.parent.glob(f".{path.name}*.tmp")]
    found += list(path.with_name(path.name + ".routing").glob("*.tmp"))
    return sorted(str(p) for p in found)


def sqlite_path(url: str) -> Path | None:
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


class Target:
    """Fresh copies of one prepared database: SQLite file backups, or PostgreSQL databases made from a template."""

    def __init__(self, url: str, folder: Path):
        self.url, self.folder, self._n = url, folder, 0
        self._made: list[str] = []  # PostgreSQL copies, dropped by `cleanup`
        if not url.startswith("sqlite"):
            self.template = self._pg_snapshot(url)

    def fresh(self) -> str:
        self._n += 1
        if self.url.startswith("sqlite"):
            target = self.folder / f"copy-{self._n}" / "studio.db"
            target.parent.mkdir(parents=True)
            src, dst = sqlite3.connect(sqlite_path(self.url)), sqlite3.connect(target)
            src.backup(dst)
            src.close()
            dst.close()
            return f"sqlite:///{target}"
        return self._pg_create(self.template)

    def _pg_admin(self):
        return create_engine(self.url, isolation_level="AUTOCOMMIT")

    def _pg_create(self, template: str) -> str:
        import uuid

        name = f"k_{uuid.uuid4().hex[:12]}"
        admin = self._pg_admin()
        with admin.connect() as c:
            c.execute(text(f"CREATE DATABASE {name} TEMPLATE {template}"))
        admin.dispose()
        self._made.append(name)
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def _pg_snapshot(self, url: str) -> str:
        from skillorchestra_core.db import dispose_engines

        dispose_engines()  # a template may have no open connections
        return url.rsplit("/", 1)[1]

    def cleanup(self) -> None:
        if self.url.startswith("sqlite"):
            for p in self.folder.glob("copy-*"):
                shutil.rmtree(p, ignore_errors=True)
            return
        admin = self._pg_admin()
        with admin.connect() as c:
            for name in self._made:
                c.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()
        self._made.clear()


def campaign(target: Target, argv_for: Callable[[str], list[str]], points: Callable[[Run], list[KillPoint]],
             log: Path, *, env: dict | None = None, resume_for: Callable[[str], list[str]] | None = None
             ) -> tuple[list[Outcome], Run]:
    """A clean run, then the kill points (`points(clean run)`) in turn, each a re-run of the work the previous kill
    interrupted (a crash during the resume). A kill that left the work done is resumed at once; the chain ends with
    an uninterrupted resume. Every resume must end exactly where the clean run ended."""
    resume_for = resume_for or argv_for
    zygote = Zygote()
    try:
        return _campaign(target, argv_for, resume_for, points, log, env, zygote)
    finally:
        zygote.close()
        target.cleanup()


def _campaign(target, argv_for, resume_for, points, log, env, zygote) -> tuple[list[Outcome], Run]:
    before = fingerprint(target.fresh())
    clean_url = target.fresh()
    clean = run_child(argv_for(clean_url), log, env=env, zygote=zygote)
    assert clean.returncode == 0, clean.stderr[-2000:]
    after = fingerprint(clean_url)
    outcomes: list[Outcome] = []
    chain: list[Outcome] = []
    url = target.fresh()
    for point in points(clean):
        run = run_child((resume_for if chain else argv_for)(url), log, env=env, point=point, zygote=zygote)
        fp = fingerprint(url)
        out = Outcome(point, run, classify(fp, before, after), consistency(url))
        outcomes.append(out)
        chain.append(out)
        if out.state != "before":  # done (or broken): resume now, then start the next point from a fresh copy
            _resume(chain, resume_for(url), url, log, env, after, zygote)
            chain, url = [], target.fresh()
    if chain:
        _resume(chain, resume_for(url), url, log, env, after, zygote)
    return outcomes, clean


def _resume(chain: list[Outcome], argv: list[str], url: str, log: Path, env: dict | None, after: dict,
            zygote: Zygote) -> None:
    resumed = run_child(argv, log, env=env, zygote=zygote)
    end = fingerprint(url)
    problems = consistency(url) + [f"left behind: {p}" for p in leftovers(url)]
    if resumed.returncode != 0:
        problems.append(f"resume failed ({resumed.returncode}): {resumed.stderr[-500:]}")
    elif end != after:
        problems.append(f"resume differs from the clean run: {_differs(end, after)}")
    for out in chain:
        out.problems += problems
        out.resumed = not problems


def _differs(fp: dict, want: dict) -> str:
    counts = {k: (fp["counts"].get(k), v) for k, v in want["counts"].items() if fp["counts"].get(k) != v}
    other = [k for k in ("versions", "runs", "live") if fp[k] != want[k]]
    return f"counts {counts}, differing {other}"


def random_points(rng, clean: Run, n: int, *, start: str = "write", end: str = "commit-start") -> list[KillPoint]:
    """`n` kill points drawn from the clean run's timeline: most at a random moment of its write window (after the
    child logs `start`, within the window's length up to `end`), one or two at any moment of the whole run."""
    lo, hi = clean.at(start) or 0.0, clean.at(end) or clean.seconds
    anywhere = max(1, n // 4)
    out = [KillPoint(f"{start}+{d:.2f}s", delay_s=d, after=start)
           for d in (float(rng.uniform(0.0, hi - lo)) for _ in range(n - anywhere))]
    out += [KillPoint(f"start+{d:.2f}s", delay_s=d) for d in (float(rng.uniform(0.0, clean.seconds))
                                                              for _ in range(anywhere))]
    return out


def summary(name: str, outcomes: list[Outcome]) -> str:
    states = [o.state for o in outcomes]
    return (f"{name}: {len(outcomes)} kill points, {sum(o.run.killed for o in outcomes)} killed by SIGKILL, "
            f"{sum(o.run.mid_write for o in outcomes)} mid-transaction, "
            f"consistent {sum(not o.problems and not o.state.startswith('partial') for o in outcomes)}, "
            f"left before {states.count('before')} / after {states.count('after')}, "
            f"resumed to the clean result {sum(o.resumed for o in outcomes)}")


def timeline(run: Run) -> str:
    return " ".join(f"{e}@{run.at(e):.2f}" for _, e in run.events[1:]) + f" (total {run.seconds:.2f}s)"


AGENTS = ("alpha", "beta", "gamma", "delta", "eps", "zeta")


def outcome_rows(n_queries: int, seed: int, first: int = 0):
    """Synthetic outcome rows: six agents of rising skill on `n_queries` questions of seven tasks, 70/20/10
    train/val/test (a CSV written from them leaves the split out: the importer's hash rule splits it)."""
    from skillorchestra_core.evidence.ingest import OutcomeRow

    rng = np.random.default_rng(seed)
    rows = []
    for q in range(first, first + n_queries):
        task = f"task{q % 7}"
        for j, agent in enumerate(AGENTS):
            rows.append(OutcomeRow(line=len(rows) + 2, query_id=f"q{q}", agent=agent, task=task,
                                   query=f"question {q} about {task} number {q * 31 % 997}",
                                   score=float(rng.random() < 0.3 + 0.1 * j - 0.05 * (q % 7 == j)),
                                   prompt_tokens=40 + q % 50, completion_tokens=10 + j, cost_usd=1e-4 * (j + 1),
                                   ground_truth=str(q % 5),
                                   split=("train", "val", "test")[(q % 10 > 6) + (q % 10 > 8)]))
    return rows


def write_outcomes(path: Path, n_queries: int, seed: int) -> None:
    fields = ("query_id", "query", "agent", "score", "task", "prompt_tokens", "completion_tokens", "cost_usd")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        for r in outcome_rows(n_queries, seed):
            w.writerow([getattr(r, f) for f in fields])
