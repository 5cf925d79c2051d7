"""The one validation of routing input, shared by `route`, `route_batch`, the Python API and the LiteLLM strategy."""

from __future__ import annotations

import math
from numbers import Real

from skillorchestra_core.errors import StudioError


class RoutingInputError(StudioError, ValueError):
    """A lambda or a query the router cannot use."""


def check_lambda(lam) -> float:
    """lambda as a float; refuses negative, NaN and infinite values (NaN would silently pick one agent for all)."""
    if isinstance(lam, bool) or not isinstance(lam, Real) or not math.isfinite(float(lam)) or float(lam) < 0:
        raise RoutingInputError(f"lambda must be a finite number >= 0, got {lam!r}")
    return float(lam)


def check_query(query, position: int | None = None) -> str:
    """The query stripped of surrounding blanks; refuses a blank or non-text query."""
    if not isinstance(query, str) or not query.strip():
        where = f" (query {position + 1})" if position is not None else ""
        raise RoutingInputError(f"the query is blank{where}: give the text to route")
    return query.strip()
