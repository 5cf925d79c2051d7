"""Routing: routers (the paper's skill rule and baselines), skill activation, mode policy, decision traces,
explanations, execution, a vectorised batch path and the in-process production API.

Heavy submodules are imported on use; `from skillorchestra_core.routing import HandbookRouter` works.
"""

from __future__ import annotations

__all__ = ["HandbookRouter", "RouteOptions", "RouteTrace", "route", "list_routers"]


def __getattr__(name: str):
    if name == "HandbookRouter":
        from skillorchestra_core.routing.api import HandbookRouter

        return HandbookRouter
    if name in ("RouteOptions", "route"):
        from skillorchestra_core.routing import engine

        return getattr(engine, name)
    if name == "RouteTrace":
        from skillorchestra_core.routing.trace import RouteTrace

        return RouteTrace
    if name == "list_routers":
        from skillorchestra_core.routing.routers import list_routers

        return list_routers
    raise AttributeError(name)
