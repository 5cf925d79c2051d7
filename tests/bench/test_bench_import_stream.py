"""Importing large outcome files: time and peak memory of a fresh process (its peak resident set: VmHWM on Linux,
else `resource.getrusage` max RSS).

Targets: 1,000,000 rows in under 30 s and 1.5 GiB. Baselines measured in the same run: a bare process that imports
numpy and sqlalchemy, and the code before imports were streamed (commit BASELINE, extracted with `git archive`) on
the 100,000-row file (on the 1,000,000-row file too with SKILLORCHESTRA_BENCH_FULL=1: it needs ~3 GiB). Prints
figures; asserts only that every row was stored.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]
BASELINE = "ade4f16"  # the last commit that read outcome files whole and inserted through the ORM
N_AGENTS, N_TASKS = 8, 50

PEAK = """
def peak_mib():
    # VmHWM belongs to this process image (ru_maxrss can carry a large parent's peak across fork + exec)
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""
CHILD = PEAK + """
import json, sys, time
from skillorchestra_core.db import session
from skillorchestra_core.formats.outcomes import import_outcomes
t0 = time.perf_counter()
with session(sys.argv[2]) as s:
    report = import_outcomes(s, sys.argv[1], "bench", skills_from_task=True)
    s.commit()
print(json.dumps({"seconds": time.perf_counter() - t0, "rows": report.result.trajectories_added,
                  "maxrss_mib": peak_mib()}))
"""
BARE = PEAK + "import json, numpy, sqlalchemy\nprint(json.dumps({'maxrss_mib': peak_mib()}))\n"


def _write_csv(path: Path, rows: int) -> None:
    rng = np.random.default_rng(7)
    n_queries = rows // N_AGENTS
    skill = rng.uniform(0.2, 0.9, size=(N_AGENTS, N_TASKS))
    tasks = rng.integers(0, N_TASKS, n_queries)
    wins = rng.random((n_queries, N_AGENTS)) < skill[:, tasks].T
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_id", "query", "agent", "score", "task", "prompt_tokens", "completion_tokens", "cost_usd"])
        for q in range(n_queries):
            t = tasks[q]
            text = f"synthetic question {q} about topic {t}: what follows from the premises given here?"
            w.writerows([f"q{q}", text, f"agent-{a}", int(wins[q, a]), f"task-{t}", 120 + q % 50, 40 + a,
                         round(1e-5 * (a + 1), 8)] for a in range(N_AGENTS))


def _run(code: str, args: list[str], pythonpath: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=pythonpath, capture_output=True,
                         text=True, timeout=1800)
    if out.returncode != 0:
        raise AssertionError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _baseline_tree(tmp: Path) -> Path | None:
    try:
        blob = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE, "skillorchestra_core"],
                              capture_output=True, check=True, timeout=120).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    target = tmp / "baseline"
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(target, filter="data")
    return target


def test_bench_streamed_import(tmp_path, capsys, bench_report):
    bare = _run(BARE, [], ROOT)
    baseline_root = _baseline_tree(tmp_path)
    full = os.environ.get("SKILLORCHESTRA_BENCH_FULL") == "1"
    lines = [f"\nimport of outcome files (CSV, {N_AGENTS} agents per query, {N_TASKS} tasks); peak = peak RSS of "
             f"the importing process; bare python + numpy + sqlalchemy: {bare['maxrss_mib']:.0f} MiB"]
    for rows in (100_000, 1_000_000):
        path = tmp_path / f"outcomes-{rows}.csv"
        _write_csv(path, rows)
        size = path.stat().st_size / 2**20
        now = _run(CHILD, [str(path), f"sqlite:///{tmp_path / f'now-{rows}.db'}"], ROOT)
        assert now["rows"] == rows
        line = (f"  {rows:>9,} rows ({size:5.0f} MiB file): {now['seconds']:6.1f} s, peak {now['maxrss_mib']:6.0f} MiB"
                f" ({now['maxrss_mib'] / bare['maxrss_mib']:4.1f}x the bare process)")
        if rows == 1_000_000:
            line += (f"   targets < 30 s: {'met' if now['seconds'] < 30 else 'NOT met'}, < 1,536 MiB: "
                     f"{'met' if now['maxrss_mib'] < 1536 else 'NOT met'}")
        lines.append(line)
        old = None
        if baseline_root is not None and (rows <= 100_000 or full):
            old = _run(CHILD, [str(path), f"sqlite:///{tmp_path / f'old-{rows}.db'}"], baseline_root)
            assert old["rows"] == rows
            lines.append(f"      before streaming ({BASELINE}): {old['seconds']:6.1f} s, peak {old['maxrss_mib']:6.0f} "
                         f"MiB   -> now {old['seconds'] / now['seconds']:4.2f}x as fast, "
                         f"{old['maxrss_mib'] / now['maxrss_mib']:4.2f}x less memory")
        _record(bench_report, rows, now, old)
    with capsys.disabled():
        print("\n".join(lines))


def _record(bench_report, rows: int, now: dict, old: dict | None) -> None:
    """Two rows per file size: time and peak memory of a fresh importing process, against the pre-streaming code
    when it was run on the same file."""
    big = rows == 1_000_000
    bench_report(f"Streamed import of {rows:,} outcome rows (CSV, fresh process)", now["seconds"], "s",
                 target="< 30 s" if big else "", met=now["seconds"] < 30 if big else None,
                 baseline=None if old is None else old["seconds"], baseline_label=f"before streaming, {BASELINE}")
    bench_report(f"Streamed import of {rows:,} rows, peak RSS", now["maxrss_mib"], "MiB",
                 target="< 1,536 MiB" if big else "", met=now["maxrss_mib"] < 1536 if big else None,
                 baseline=None if old is None else old["maxrss_mib"], baseline_label=f"before streaming, {BASELINE}")
