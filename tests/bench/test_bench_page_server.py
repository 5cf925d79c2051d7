"""Server time (AppTest run of the page script) of every page at 5,000 skills x 20 agents, with 5,000 and with
~1M evidence rows: cold (first visit of the version, caches empty) and warm (a revisit: served from the
per-version caches). Target: warm under 1 s. Printed, never asserted: `make bench`."""

from __future__ import annotations

import statistics
import time

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.bench

PAGES = [f"app_pages/{name}.py" for name in ("overview", "graph", "posteriors", "playground", "decisions")]
TARGET_S = 1.0


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
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    times = []
    for _ in range(repeats + 1):
        at = AppTest.from_file(app_path, default_timeout=300)
        at.query_params["handbook"] = "synthetic-5000"
        t0 = time.perf_counter()
        at.run()  # app.py runs the default page, the Overview
        if page != PAGES[0]:
            t0 = time.perf_counter()
            at.switch_page(page).run()
        times.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return times[0], statistics.median(times[1:])


def test_bench_page_server_time_at_5000_skills(db_5000, app_path):
    for page in PAGES:
        cold, warm = _times(app_path, page)
        verdict = "ok" if warm < TARGET_S else "OVER"
        print(f"[bench] {page:<22} cold {cold:5.2f} s   warm {warm:5.2f} s   (warm target < {TARGET_S:.0f} s: "
              f"{verdict})")
