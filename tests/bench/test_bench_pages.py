"""Render time of the explorer pages (AppTest runs) on the demo and on a generated 1,000-skill x 20-agent handbook.

Targets: under 2 s on the demo and under 5 s on the large handbook. Figures are printed, never asserted:
run with `make bench` (pytest -m bench -s).
"""

from __future__ import annotations

import statistics
import time

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.bench

PAGES = {  # name -> (page, seeded session state)
    "Graph": ("pages/graph.py", {}),
    "Graph/explore": ("pages/graph.py", {"graph:view": "Explore (physics)"}),
    "Graph/DOT": ("pages/graph.py", {"graph:view": "Hierarchy (DOT)"}),
    "Posteriors": ("pages/posteriors.py", {}),
}
TARGETS = {"demo": 2.0, "large": 5.0}


@pytest.fixture
def large_db(app_db):
    """The app's demo database plus a generated handbook `synthetic-large` (1,000 skills, 20 agents)."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.graph.synthetic import SyntheticSpec, build_synthetic_handbook

    t0 = time.perf_counter()
    with session(app_db) as s:
        build_synthetic_handbook(s, SyntheticSpec(name="synthetic-large", n_skills=1000, n_agents=20,
                                                  queries_per_leaf=2))
        s.commit()
    dispose_engines()
    print(f"\n[bench] generated synthetic-large (1,000 skills x 20 agents) in {time.perf_counter() - t0:.2f} s")
    return app_db


def _time_page(app_path: str, handbook: str, page: str, state: dict, repeats: int = 3) -> tuple[float, float]:
    """(cold, warm median) seconds of one AppTest page run; cold includes loading the version (caches empty)."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    times = []
    for _ in range(repeats + 1):
        at = AppTest.from_file(app_path, default_timeout=120)
        at.query_params["handbook"] = handbook
        for key, value in state.items():
            at.session_state[key] = value
        at.run()
        t0 = time.perf_counter()
        at.switch_page(page).run()
        times.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return times[0], statistics.median(times[1:])


def _report(label: str, handbook: str, app_path: str) -> None:
    for name, (page, state) in PAGES.items():
        cold, warm = _time_page(app_path, handbook, page, state)
        target = TARGETS[label]
        print(f"[bench] {name:<14} {handbook:<16} cold {cold:5.2f} s   warm {warm:5.2f} s   "
              f"(target < {target:.0f} s: {'ok' if cold < target else 'OVER'})")


def test_bench_pages_on_the_demo(app_db, app_path):
    for handbook in ("demo-qa", "demo-agents"):
        _report("demo", handbook, app_path)


def test_bench_pages_on_a_thousand_skills(large_db, app_path):
    _report("large", "synthetic-large", app_path)


def test_bench_graph_core_on_a_thousand_skills(large_db):
    from skillorchestra_core.db import session
    from skillorchestra_core.graph.filters import GraphFilter, apply_filter, default_depth
    from skillorchestra_core.graph.render_dot import dot_source
    from skillorchestra_core.graph.render_pyvis import pyvis_html
    from skillorchestra_core.graph.render_vega import vega_spec
    from skillorchestra_core.graph.service import load_version_data, version_graph

    steps = {}
    t = time.perf_counter()
    with session(large_db) as s:
        data = load_version_data(s, "synthetic-large", None)
    steps["load version + competence"] = time.perf_counter() - t
    t = time.perf_counter()
    g = version_graph(data)
    steps["build graph"] = time.perf_counter() - t
    t = time.perf_counter()
    view = apply_filter(g, GraphFilter(depth=default_depth(g), top_k=3))
    steps["filter (collapsed, top-3)"] = time.perf_counter() - t
    for name, fn in (("vega-lite spec", lambda: vega_spec(view.graph)),
                     ("pyvis html", lambda: pyvis_html(view.graph)), ("dot source", lambda: dot_source(view.graph))):
        t = time.perf_counter()
        fn()
        steps[name] = time.perf_counter() - t
    full = apply_filter(g, GraphFilter(edges_from="all"))
    print(f"\n[bench] graph: {g.number_of_nodes()} nodes, {g.number_of_edges()} edges; default view "
          f"{view.shown_skills} skills, {view.graph.number_of_edges()} edges; unfiltered view capped at "
          f"{full.shown_skills} skills")
    for name, secs in steps.items():
        print(f"[bench]   {name:<28} {secs * 1000:7.1f} ms")
