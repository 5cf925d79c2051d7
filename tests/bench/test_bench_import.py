"""Import and competence benchmarks: prints figures, asserts only correctness (targets: import of 100,000 rows under
20 s and 1 GiB; competence for 100,000 trajectories x 50 skills under 2 s)."""

from __future__ import annotations

import csv
import resource
import time
import tracemalloc

import numpy as np
import pytest

from skillorchestra_core.db import session
from skillorchestra_core.formats.outcomes import import_outcomes
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile

pytestmark = pytest.mark.bench

N_QUERIES, N_AGENTS, N_TASKS = 12_500, 8, 50


def _write_csv(path) -> int:
    rng = np.random.default_rng(7)
    skill = rng.uniform(0.2, 0.9, size=(N_AGENTS, N_TASKS))
    tasks = rng.integers(0, N_TASKS, N_QUERIES)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_id", "query", "agent", "score", "task", "prompt_tokens", "completion_tokens", "cost_usd"])
        for q in range(N_QUERIES):
            t = tasks[q]
            for a in range(N_AGENTS):
                score = int(rng.random() < skill[a, t])
                w.writerow([f"q{q}", f"synthetic question {q} about topic {t}", f"agent-{a}", score, f"task-{t}",
                            120 + q % 50, 40 + a, round(1e-5 * (a + 1), 8)])
    return N_QUERIES * N_AGENTS


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def test_bench_import_and_competence(tmp_path, bench_report):
    path = tmp_path / "outcomes.csv"
    rows = _write_csv(path)
    url = f"sqlite:///{tmp_path / 'bench.db'}"

    rss_before = _maxrss_mib()
    start = time.perf_counter()
    with session(url) as s:
        report = import_outcomes(s, path, "bench", skills_from_task=True)
        s.commit()
    elapsed = time.perf_counter() - start
    rss_after = _maxrss_mib()
    assert report.result.trajectories_added == rows
    print(f"\nimport: {rows:,} rows in {elapsed:.2f} s = {rows / elapsed:,.0f} rows/s; "
          f"max RSS {rss_after:.0f} MiB (grew {rss_after - rss_before:.0f} MiB)")

    # Python-heap peak of a second, identical import into a fresh database (tracemalloc slows it down, so it is
    # timed separately from the run above).
    tracemalloc.start()
    with session(f"sqlite:///{tmp_path / 'bench2.db'}") as s:
        import_outcomes(s, path, "bench", skills_from_task=True)
        s.commit()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"import: tracemalloc peak {peak / 2**20:.0f} MiB")

    with session(url) as s:
        start = time.perf_counter()
        loaded = load_version(s, "bench")
        frames = profile.load_frames(s, loaded)
        loaded_at = time.perf_counter()
        table = profile.competence(frames)
        done = time.perf_counter()
    assert len(frames.evidence) == rows and len(loaded.content.skills) == N_TASKS  # every split; learning reads train
    assert len(table) == N_AGENTS * N_TASKS
    bench_report(f"Import of {rows:,} outcome rows (CSV)", elapsed, "s", target="< 20 s", met=elapsed < 20)
    bench_report(f"Import of {rows:,} rows, Python heap peak", peak / 2**20, "MiB", target="< 1,024 MiB",
                 met=peak / 2**20 < 1024)
    bench_report(f"Competence, {rows:,} trajectories x {N_TASKS} skills (load + compute)", done - start, "s",
                 target="< 2 s", met=done - start < 2)
    print(f"competence: load_frames {loaded_at - start:.2f} s + competence {done - loaded_at:.2f} s = "
          f"{done - start:.2f} s for {rows:,} trajectories x {N_TASKS} skills")
