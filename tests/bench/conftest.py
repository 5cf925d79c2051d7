"""The `bench_report` fixture: benchmarks record their figures, and the table in BENCHMARKS.md (the repository root,
or $BENCH_REPORT) is updated after each benchmark that recorded some, so an interrupted run keeps what it measured."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.bench_report import BenchReport

REPORT = Path(__file__).resolve().parents[2] / "BENCHMARKS.md"
NOTE = ("The committed figures were taken on a shared 2-core machine with other work running at the same time, so "
        "absolute times are noisy and pessimistic; each ratio compares two measurements of the same run. The "
        "*Measured* cell gives the 1-minute load average at the time (2 cores: above 2 means work was queued).")


@pytest.fixture(scope="session")
def _bench_rows() -> BenchReport:
    return BenchReport()


@pytest.fixture
def bench_report(_bench_rows):
    before = dict(_bench_rows.rows)
    yield _bench_rows
    if _bench_rows.rows != before:
        _bench_rows.write(Path(os.environ.get("BENCH_REPORT") or REPORT), NOTE)
