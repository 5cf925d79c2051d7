"""The `bench_report` fixture: benchmarks record their figures, and the table in BENCHMARKS.md (the repository root,
or $BENCH_REPORT) is updated once at the end of the session, only when some figure was recorded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.bench_report import BenchReport

REPORT = Path(__file__).resolve().parents[2] / "BENCHMARKS.md"
NOTE = ("Figures are taken on whatever machine ran `make bench`; the committed table comes from a shared 2-core "
        "machine with other work running, so absolute times are noisy: the ratios compare runs made in the same "
        "session.")


@pytest.fixture(scope="session")
def bench_report():
    report = BenchReport()
    yield report
    if report.rows:
        report.write(Path(os.environ.get("BENCH_REPORT") or REPORT), NOTE)
