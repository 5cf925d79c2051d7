"""The Playground's first Route click, server side: the core functions the page calls (`start_route`, its steps,
`finish_route` storing the trace) on a 100,000-trajectory handbook and on a 5,000-skill handbook. Target < 2 s.

Three situations are timed: the version was never routed (the model is built and cached), a new app process (the
model comes from the cache file), and a later click in the same process. The first is the baseline the cache is
measured against. Prints figures; no timed assertions.
"""

from __future__ import annotations

import shutil
import time

import pytest
from support.synthetic_evidence import build_synthetic_evidence

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.routing import build, cache
from skillorchestra_core.routing.engine import RouteOptions
from skillorchestra_core.routing.service import finish_route, start_route

pytestmark = pytest.mark.bench

QUERY = "synthetic question about topic 7: which answer follows?"


def _click(url: str, handbook: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of this process, chosen agent)."""
    with session(url) as s:
        t0, c0 = time.perf_counter(), time.process_time()
        run = start_route(s, handbook, None, QUERY, RouteOptions(router="skill", lam=0.1, execute="replay"))
        for _ in run.steps():
            pass
        trace = finish_route(s, run, actor="bench")
        s.commit()
        return time.perf_counter() - t0, time.process_time() - c0, trace.chosen_agent


def _report(label: str, url: str, handbook: str, bench_report, figure: str) -> list[str]:
    build.clear_memory_cache()
    shutil.rmtree(cache.cache_dir(url), ignore_errors=True)
    never, never_cpu, chosen = _click(url, handbook)
    build.clear_memory_cache()
    dispose_engines()
    new_process, new_cpu, again = _click(url, handbook)
    later, _, _ = _click(url, handbook)
    assert again == chosen
    verdict = "met" if never < 2 else ("met once cached" if new_process < 2 else "NOT met")
    first_use = ("a never-routed version first builds its routing model, activation index and classifier and "
                 f"writes the cache file; with the cache, a new app process clicks in {new_process:.2f} s")
    bench_report(f"First Playground Route click, {figure}, version never routed", never, "s", target="< 2 s",
                 met=never < 2, why=f"{never_cpu:.2f} s of it is CPU time: {first_use}")
    bench_report(f"First Playground Route click, {figure}, version never routed, CPU time", never_cpu, "s",
                 target="< 2 s", met=never_cpu < 2, why=first_use)
    bench_report(f"First Playground Route click, {figure}, new app process (cached model)", new_process, "s",
                 target="< 2 s", met=new_process < 2, baseline=never, baseline_label="version never routed")
    return [f"  {label}",
            f"    version never routed (build + cache + route + store): {never:6.2f} s   target < 2 s: {verdict}"
            f"   (CPU time {never_cpu:.2f} s)",
            f"    new app process (model from the cache file):          {new_process:6.2f} s   "
            f"{never / new_process:5.1f}x faster   (CPU time {new_cpu:.2f} s)",
            f"    later click, same process:                            {later:6.3f} s"]


def test_bench_first_route_click(tmp_path, capsys, bench_report):
    from skillorchestra_core.graph.synthetic import SyntheticSpec, build_synthetic_handbook

    url = f"sqlite:///{tmp_path / 'playground.db'}"
    build_synthetic_evidence(url, "rows-100k", 100_000)
    t0 = time.perf_counter()
    with session(url) as s:
        build_synthetic_handbook(s, SyntheticSpec(name="skills-5000", n_skills=5000, n_agents=20,
                                                  queries_per_leaf=1))
        s.commit()
    made = time.perf_counter() - t0
    lines = ["\nfirst Playground Route click, server side (start_route + steps + finish_route with the trace stored)"]
    lines += _report("100,000 trajectories (10,000 queries, 10 agents, 100 skills)", url, "rows-100k", bench_report,
                     "100,000-row handbook")
    lines += _report(f"5,000 skills x 20 agents, one query per leaf (generated in {made:.0f} s)", url, "skills-5000",
                     bench_report, "5,000-skill handbook")
    with capsys.disabled():
        print("\n".join(lines))
