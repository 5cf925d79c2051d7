"""Server time (AppTest run of the page script) of every page at 5,000 skills x 20 agents, with ~100k and with
~1M evidence rows: cold (first visit of the version, caches empty) and warm (a revisit: served from the
per-version caches). Target: both under 1 s. Printed and recorded in BENCHMARKS.md, never asserted: `make bench`."""

from __future__ import annotations

import statistics
import time

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.bench

PAGES = [f"pages/{name}.py" for name in ("overview", "graph", "posteriors", "playground", "decisions")]
TARGET_S = 1.0
WHY_COLD = ("a first visit loads the version's content and stored evidence summary into the per-version caches; "
            "revisits are served from those caches")


@pytest.fixture(params=[1, 10], ids=["100k-rows", "1M-rows"])
def db_5000(app_db, request):
    """5,000 skills x 20 agents with 1 or 10 queries per leaf skill (~100k or ~1M trajectories)."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.graph.synthetic import SyntheticSpec, build_synthetic_handbook

    t0 = time.perf_counter()
    with session(app_db) as s:
        build_synthetic_handbook(s, SyntheticSpec(name="synthetic-5000", n_skills=5000, n_agents=20,
                                                  queries_per_leaf=request.param))
        s.commit()
    dispose_engines()
    print(f"\n[bench] generated synthetic-5000 (5,000 skills x 20 agents, {request.param} queries per leaf) in "
          f"{time.perf_counter() - t0:.1f} s")
    return app_db


def _times(app_path: str, page: str, repeats: int = 3) -> tuple[float, float]:
    """(cold, warm): cold is a deep link to the page as the first visit of the version since the server started
    (every cache empty); warm is the median of `repeats` later visits from new sessions."""
    import streamlit as st

    times = []
    for i in range(repeats + 1):
        at = AppTest.from_file(app_path, default_timeout=300)
        at.query_params["handbook"] = "synthetic-5000"
        if page == PAGES[0]:  # app.py runs the default page, the Overview
            if i == 0:
                st.cache_data.clear()
                st.cache_resource.clear()
            t0 = time.perf_counter()
            at.run()
        else:
            at.run()
            if i == 0:  # what the Overview run just cached must not serve the cold visit
                st.cache_data.clear()
                st.cache_resource.clear()
            t0 = time.perf_counter()
            at.switch_page(page).run()
        times.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return times[0], statistics.median(times[1:])


def test_bench_page_server_time_at_5000_skills(db_5000, app_path, bench_report, request):
    rows = request.node.callspec.id.removesuffix("-rows")
    for page in PAGES:
        cold, warm = _times(app_path, page)
        name = page.removeprefix("pages/").removesuffix(".py").capitalize()
        for kind, secs in (("cold (first visit of the version)", cold), ("warm (revisit)", warm)):
            bench_report(f"Page server time, {name}, 5,000 skills x 20 agents, {rows} rows, {kind}", secs, "s",
                         target=f"< {TARGET_S:.0f} s", met=secs < TARGET_S, why=WHY_COLD if kind.startswith("cold")
                         else "")
        print(f"[bench] {page:<24} cold {cold:5.2f} s {'ok' if cold < TARGET_S else 'OVER':<4}   "
              f"warm {warm:5.2f} s {'ok' if warm < TARGET_S else 'OVER'}   (target < {TARGET_S:.0f} s)")
