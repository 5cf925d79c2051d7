"""Route one query under several (router, version) settings, all or nothing: the Playground's single and compare
modes. A failure in any run stores nothing, so the decisions log never holds half of a comparison."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlmodel import Session

from skillorchestra_core.routing.engine import EXECUTIONS, RouteOptions
from skillorchestra_core.routing.service import finish_route, start_route
from skillorchestra_core.routing.trace import RouteTrace, StepTrace


@dataclass(frozen=True)
class Run:
    router: str
    version: int | None


def compare_runs(router: str, version: int | None, compare: str, router2: str | None,
                 version2: int | None) -> list[Run]:
    """The runs a Playground request asks for; a second run identical to the first is dropped (nothing to compare)."""
    runs = [Run(router, version)]
    if compare == "router" and router2 and router2 != router:
        runs.append(Run(router2, version))
    elif compare == "version" and version2 is not None and version2 != version:
        runs.append(Run(router, version2))
    return runs


def executions(llm_backend: str) -> tuple[str, ...]:
    """Execution modes that can work here: `live` needs a configured LLM (offline, every step would error)."""
    return tuple(e for e in EXECUTIONS if e != "live" or llm_backend != "offline")


def route_all(s: Session, handbook: str, query: str, runs: list[Run], options: RouteOptions, *,
              actor: str = "playground", store: bool = True,
              on_step: Callable[[int, StepTrace], None] | None = None) -> list[RouteTrace]:
    """Route `query` once per run; `on_step(run_index, step)` sees each step as it is decided. Commits only when
    every run finished (with `store`); on any error the session is rolled back and the error re-raised."""
    if not query.strip():
        raise ValueError("type a query first")
    traces = []
    try:
        for i, run in enumerate(runs):
            started = start_route(s, handbook, run.version, query, replace(options, router=run.router))
            for step in started.steps():
                if on_step is not None:
                    on_step(i, step)
            traces.append(finish_route(s, started, actor=actor, store=store))
        if store:
            s.commit()
    except BaseException:  # a routing error, or the page's drawing failing mid-run: store nothing
        s.rollback()
        raise
    return traces
