"""The in-process production API: load a handbook version once, route queries with no Streamlit and no database
write (optionally logging traces to a sink).

    router = HandbookRouter.from_database("demo-qa", version=3, lam=0.1)      # or HandbookRouter.from_export(path)
    trace = router.route("Who wrote the Iliad?")
    trace.chosen_agent, trace.steps[0].margin, trace.steps[0].lambda_interval
    router.choose("Who wrote the Iliad?")                                     # just the agent name
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from skillorchestra_core.llm import LlmClient
from skillorchestra_core.routing.batch import BatchResult, route_batch
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.engine import RouteOptions, RouteRun
from skillorchestra_core.routing.model import RoutingModel
from skillorchestra_core.routing.snapshot import load_model_file, to_snapshot
from skillorchestra_core.routing.trace import RouteTrace

if TYPE_CHECKING:
    from skillorchestra_core.selection.publish import Published

TraceSink = Callable[[RouteTrace], None]


class HandbookRouter:
    """Thread-safe after construction: the model is read-only, each call builds its own run."""

    def __init__(self, model: RoutingModel, *, router: str = "skill", lam: float = 0.1,
                 cost_unit: str = "normalised", llm: LlmClient | None = None, max_steps: int = 4, top_k: int = 3,
                 seed: int = 0, activation: str = "auto", trace_sink: TraceSink | None = None):
        self.model, self.llm, self.trace_sink = model, llm, trace_sink
        self.defaults = RouteOptions(router=router, lam=lam, cost_unit=cost_unit, execute="dry-run",
                                     max_steps=max_steps, top_k=top_k, seed=seed, activation=activation)
        self.defaults.make_router()  # fail early on an unknown router
        self.published: Published | None = None  # the published configuration this router was loaded from

    @classmethod
    def from_database(cls, handbook: str, version: int | None = None, *, db_url: str | None = None,
                      use_published: bool = True, **kwargs) -> "HandbookRouter":
        """Load a stored version once; routing then never touches the database. With no `version`, the handbook's
        published configuration (version, router, lambda, cost unit; explicit keywords win) when there is one,
        else the latest version."""
        from skillorchestra_core.db import session
        from skillorchestra_core.selection.publish import published

        with session(db_url) as s:
            pub = published(s, handbook) if version is None and use_published else None
            if pub is not None:
                version, kwargs = pub.version, {**pub.router_options(), **kwargs}
            model = routing_model(s, handbook, version)
        router = cls(model, **kwargs)
        router.published = pub
        return router

    @classmethod
    def from_export(cls, source: str | Path | dict, **kwargs) -> "HandbookRouter":
        """Load a routing snapshot (`export()`) or a SkillOrchestra reference handbook JSON."""
        return cls(load_model_file(source), **kwargs)

    def export(self, path: str | Path, include_queries: bool = True) -> Path:
        """Write this router's model as a routing snapshot JSON that `from_export` reloads exactly."""
        p = Path(path)
        p.write_text(json.dumps(to_snapshot(self.model, include_queries)))
        return p

    def options(self, **overrides) -> RouteOptions:
        base = {k: getattr(self.defaults, k) for k in self.defaults.__dataclass_fields__}
        base.update({k: v for k, v in overrides.items() if v is not None})
        return RouteOptions(**base)

    def route(self, query: str, *, lam: float | None = None, router: str | None = None,
              execute: str | None = None) -> RouteTrace:
        """Route `query` and return its full trace (dry-run by default; `execute="live"` needs an LLM client)."""
        run = RouteRun(self.model, query, self.options(lam=lam, router=router, execute=execute), llm=self.llm)
        for _ in run.steps():
            pass
        trace = run.trace()
        if self.trace_sink is not None:
            self.trace_sink(trace)
        return trace

    def choose(self, query: str, *, lam: float | None = None, router: str | None = None) -> str:
        """The agent the route ends with (the only step's agent in a single-mode handbook)."""
        chosen = self.route(query, lam=lam, router=router).chosen_agent
        if chosen is None:  # a route always ends with an agent; a trace without one is a bug
            raise ValueError(f"routing {query[:60]!r} chose no agent")
        return chosen

    def route_batch(self, queries: list[str], *, lam: float | None = None, mode: str | None = None) -> BatchResult:
        """One vectorised skill-rule decision per query in one mode (see routing.batch)."""
        return route_batch(self.model, queries, lam=self.defaults.lam if lam is None else lam, mode=mode,
                           cost_unit=self.defaults.cost_unit, top_k=self.defaults.top_k)

    @property
    def agents(self) -> dict[str, list[str]]:
        return {m: list(t.agents) for m, t in self.model.modes.items()}


class DatabaseTraceSink:
    """Stores every trace in a database (a separate session per trace): `trace_sink=DatabaseTraceSink(url)`."""

    def __init__(self, db_url: str | None = None, actor: str = "api"):
        self.db_url, self.actor = db_url, actor

    def __call__(self, trace: RouteTrace) -> None:
        from skillorchestra_core.db import session
        from skillorchestra_core.routing.store import store_trace

        with session(self.db_url) as s:
            store_trace(s, trace, actor=self.actor)
            s.commit()


class JsonlTraceSink:
    """Appends every trace as one JSON line to a file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def __call__(self, trace: RouteTrace) -> None:
        line = trace.to_json(indent=None)
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
