"""Decision storage benchmark: store real routed decisions one by one (the Playground and API path), measure the
bytes each adds to the SQLite file, then grow the log to 1,000,000 rows by copying them in SQL and time what the
Decisions page asks for (filter values, the newest page, an older page by key, opening one decision) and the page
itself (its server time in AppTest, first visit and revisit).

Targets from issue 13: at most 1 KB per single-step decision, the Decisions page under 0.5 s at 1M decisions.
Prints and records figures; asserts only correctness."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import text
from support.handbooks import MINI_QA, build_mini_qa

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.routing.engine import RouteOptions, route
from skillorchestra_core.routing.store import TraceFilter, list_traces, load_trace, store_trace, trace_facets

pytestmark = pytest.mark.bench

N_STORED, N_LOG = 2_000, 1_000_000
_COLUMNS = ("handbook_id, handbook_name, version_id, version_number, content_hash, router, lam, cost_unit, execution, "
            "query_text, chosen_agent, cause, n_steps, margin, total_cost_usd, outcome, actor, created_at, trace, "
            "codec, payload, tags")


def _best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _store(url: str, model) -> tuple[float, int]:
    """Route and store N_STORED decisions, one commit each; (seconds, file bytes added)."""
    path = Path(url.removeprefix("sqlite:///"))
    traces = [route(model, f"What is {i} plus {i % 17} times seven?", RouteOptions(lam=0.05 * (i % 5)))
              for i in range(N_STORED)]
    with session(url) as s:
        s.exec(text("PRAGMA wal_checkpoint(TRUNCATE)"))
    before = path.stat().st_size
    start = time.perf_counter()
    with session(url) as s:
        for trace in traces:
            store_trace(s, trace, actor="bench")
            s.commit()
    elapsed = time.perf_counter() - start
    with session(url) as s:
        s.exec(text("PRAGMA wal_checkpoint(TRUNCATE)"))
    return elapsed, path.stat().st_size - before


def _grow(url: str) -> None:
    """Copy the stored rows in SQL until the log holds N_LOG decisions (facets are already complete)."""
    with session(url) as s:
        while (n := s.exec(text("SELECT count(*) FROM decision_trace")).one()[0]) < N_LOG:
            s.exec(text(f"INSERT INTO decision_trace ({_COLUMNS}) SELECT {_COLUMNS} FROM decision_trace "
                        f"ORDER BY id LIMIT {min(n, N_LOG - n)}"))
        s.commit()


def _page_times(url: str, app_path: str, monkeypatch) -> tuple[float, float]:
    """Server time of the Decisions page on this log: (first visit, median revisit) in seconds."""
    import statistics

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from skillorchestra_core.settings import get_settings

    monkeypatch.setenv("SKILLORCHESTRA_DB_URL", url)
    get_settings.cache_clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    times = []
    for _ in range(4):
        at = AppTest.from_file(app_path, default_timeout=300)
        at.run()
        start = time.perf_counter()
        at.switch_page("pages/decisions.py").run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
        assert at.dataframe, "the Decisions page shows no table of decisions"
    get_settings.cache_clear()
    return times[0], statistics.median(times[1:])


def test_bench_decision_storage(tmp_path, bench_report, app_path, monkeypatch):
    from skillorchestra_core.routing.build import routing_model

    url = f"sqlite:///{tmp_path / 'log.db'}"
    with session(url) as s:
        build_mini_qa(s)
        s.commit()
        model = routing_model(s, MINI_QA)
    elapsed, grown = _store(url, model)
    per_decision = grown / N_STORED
    _grow(url)
    dispose_engines()
    with session(url) as s:
        newest = list_traces(s, TraceFilter(limit=50))
        assert len(newest) == 50 and newest["id"].iloc[0] == N_LOG
        facets_s = _best_of(lambda: trace_facets(s))
        newest_s = _best_of(lambda: list_traces(s, TraceFilter(handbook=MINI_QA, limit=50)))
        older_s = _best_of(lambda: list_traces(s, TraceFilter(handbook=MINI_QA, before=N_LOG // 2, limit=50)))
        from skillorchestra_core.routing import build

        build._CACHE.clear()  # opening a decision in a fresh process: the model comes from the on-disk cache
        open_s = _best_of(lambda: load_trace(s, N_LOG // 3), repeat=3)
        assert load_trace(s, 1).chosen_agent == load_trace(s, N_STORED + 1).chosen_agent
    bench_report(f"Decision storage, route + store + commit ({N_STORED:,} single-step decisions)",
                 N_STORED / elapsed, "decisions/s", higher_is_better=True)
    bench_report("Stored bytes per single-step decision (SQLite file growth)", per_decision, "bytes",
                 target="<= 1,024 bytes", met=per_decision <= 1024)
    page = facets_s + newest_s
    bench_report(f"Decisions page queries at {N_LOG:,} decisions (filter values + newest 50)", page * 1000, "ms",
                 target="< 500 ms (at 1M)", met=page < 0.5)
    bench_report(f"Older page by key at {N_LOG:,} decisions", older_s * 1000, "ms", target="< 500 ms",
                 met=older_s < 0.5)
    bench_report(f"Open one stored decision (re-rendered) at {N_LOG:,}", open_s * 1000, "ms")
    first, again = _page_times(url, app_path, monkeypatch)
    bench_report(f"Decisions page server time at {N_LOG:,} decisions, first visit", first * 1000, "ms",
                 target="< 500 ms", met=first < 0.5)
    bench_report(f"Decisions page server time at {N_LOG:,} decisions, revisit", again * 1000, "ms",
                 target="< 500 ms", met=again < 0.5)
    print(f"\ndecision log: {N_STORED / elapsed:,.0f} stored/s, {per_decision:,.0f} bytes each; at {N_LOG:,}: "
          f"facets {facets_s * 1000:.1f} ms, newest page {newest_s * 1000:.1f} ms, older page "
          f"{older_s * 1000:.1f} ms, open one {open_s * 1000:.1f} ms; page {first * 1000:.0f} ms first visit, "
          f"{again * 1000:.0f} ms revisit")
