"""What the playground page and the CLI call: open a version's routing model, route (step by step), store."""

from __future__ import annotations

from sqlmodel import Session

from skillorchestra_core.llm import BaseLlmClient, client_from_settings
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.engine import RouteOptions, RouteRun
from skillorchestra_core.routing.model import RoutingModel
from skillorchestra_core.routing.store import store_trace
from skillorchestra_core.routing.trace import RouteTrace


def price_cards(model: RoutingModel) -> dict[str, tuple[float | None, float | None]]:
    """Agent model string -> its price card, for the litellm client's cost of live calls."""
    cards: dict[str, tuple[float | None, float | None]] = {}
    for t in model.modes.values():
        for m, card in zip(t.models, t.prices):
            if card and card[0] is not None:
                cards.setdefault(m, card)
    return cards


def start_route(s: Session, handbook: str, version: int | None, query: str, options: RouteOptions, *,
                llm: BaseLlmClient | None = None) -> RouteRun:
    """A run whose `steps()` yields each step as it is decided; pass it to `finish_route` afterwards."""
    model = routing_model(s, handbook, version)
    llm = llm or client_from_settings(price_cards=price_cards(model))
    run = RouteRun(model, query, options, llm=llm)
    run.calls_start = len(llm.calls)
    return run


def finish_route(s: Session, run: RouteRun, *, actor: str = "system", store: bool = True) -> RouteTrace:
    """The run's trace, stored with the LLM calls it made when `store` (the caller commits)."""
    for _ in run.steps():  # finish any step the caller did not consume
        pass
    trace = run.trace()
    if store:
        calls = run.llm.calls.since(run.calls_start) if run.llm is not None else []
        store_trace(s, trace, actor=actor, llm_calls=calls)
    return trace


def route_query(s: Session, handbook: str, version: int | None, query: str, options: RouteOptions | None = None,
                *, llm: BaseLlmClient | None = None, actor: str = "system", store: bool = True) -> RouteTrace:
    run = start_route(s, handbook, version, query, options or RouteOptions(), llm=llm)
    return finish_route(s, run, actor=actor, store=store)


def evidence_queries(s: Session, handbook: str, limit: int = 200) -> list[str]:
    """Query texts of a handbook's evidence to pick from: validation and test queries first, then train."""
    from sqlalchemy import case
    from sqlmodel import col, select

    from skillorchestra_core.db.models import Query
    from skillorchestra_core.handbook.store import get_handbook

    hb = get_handbook(s, handbook)
    order = case((col(Query.split) == "val", 0), (col(Query.split) == "test", 1), else_=2)
    rows = s.exec(select(Query.text).where(Query.handbook_id == hb.id).order_by(order, col(Query.id))
                  .limit(limit)).all()
    return list(dict.fromkeys(rows))


def router_choices() -> dict[str, str]:
    """Router name -> label, in registry order (for select boxes)."""
    from skillorchestra_core.routing.routers import list_routers

    return {r.name: r.label for r in list_routers()}
