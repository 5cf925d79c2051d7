"""`route` and `routing-snapshot` commands (owned by the routing work)."""

from __future__ import annotations

from pathlib import Path

import typer

from skillorchestra_core.cli.common import DB_INT_MAX, db_session, echo_json
from skillorchestra_core.errors import StudioError


def register(app: typer.Typer) -> None:
    app.command("route")(route)
    app.command("routing-snapshot")(routing_snapshot)


def route(
    name: str = typer.Argument(..., help="Handbook name"),
    query: str = typer.Argument(..., help="The query to route"),
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX, help="Version number (default: latest)"),
    router: str = typer.Option("skill", "--router", help="skill, reference-rule, best-single, cheapest, random, "
                                                         "oracle"),
    lam: float = typer.Option(None, "--lambda", help="Cost weight lambda (default: SKILLORCHESTRA_DEFAULT_LAMBDA)"),
    execute: str = typer.Option("dry-run", "--execute", help="replay, live or dry-run"),
    cost_unit: str = typer.Option("normalised", "--cost-unit", help="normalised (C / the best single agent's cost), "
                                                                    "max (C / the dearest agent's cost) or usd"),
    max_steps: int = typer.Option(4, "--max-steps", help="Most steps in a multi-mode handbook"),
    top_k: int = typer.Option(3, "--top-k", help="Most active skills per step"),
    seed: int = typer.Option(0, "--seed", help="Seed of the random router and reference-rule draws"),
    activation: str = typer.Option("auto", "--activation", help="auto, offline or llm"),
    store: bool = typer.Option(True, "--store/--no-store", help="Store the trace (Decisions page)"),
    as_json: bool = typer.Option(False, "--json", help="Print the full trace as JSON"),
) -> None:
    """Route QUERY with handbook NAME and print the decision trace."""
    from skillorchestra_core.routing.engine import RouteOptions
    from skillorchestra_core.routing.explain import interval_label
    from skillorchestra_core.routing.service import route_query
    from skillorchestra_core.settings import get_settings

    try:
        options = RouteOptions(router=router, lam=get_settings().default_lambda if lam is None else lam,
                               cost_unit=cost_unit, execute=execute, max_steps=max_steps, top_k=top_k, seed=seed,
                               activation=activation)
        options.make_router()
    except ValueError as exc:
        raise StudioError(str(exc)) from exc
    with db_session() as s:
        try:
            trace = route_query(s, name, version, query, options, actor="cli", store=store)
        except ValueError as exc:
            raise StudioError(str(exc)) from exc
        s.commit()
    if as_json:
        echo_json(trace.to_dict())
        return
    typer.echo(f"{trace.handbook} v{trace.version} | router {trace.router} | lambda {trace.lam:g} | "
               f"{trace.execution}" + (f" | trace #{trace.id}" if trace.id else ""))
    for st in trace.steps:
        skills = ", ".join(f"{a.skill} ({a.weight:.2f})" for a in st.active_skills) or "none"
        margin = "-" if st.margin is None else f"{st.margin:.4f}"
        typer.echo(f"step {st.index + 1} [{st.mode}] {st.mode_reason}")
        typer.echo(f"  skills: {skills} via {st.activation_source}"
                   + (f" ({st.activation_note})" if st.activation_note else ""))
        for c in sorted(st.candidates, key=lambda c: c.rank):
            mark = "*" if c.agent == st.chosen else " "
            typer.echo(f"  {mark} {c.agent:<24} U={c.utility:.4f} mean={c.mean:.4f} cost=${c.cost:.6f} "
                       f"penalty={c.penalty:.4f}")
        typer.echo(f"  chosen {st.chosen} (runner-up {st.runner_up}, margin {margin}, cause {st.cause}, "
                   f"lambda interval {interval_label(st)})")
        if st.execution is not None:
            ex = st.execution
            typer.echo(f"  execution {ex.mode}: {ex.status}" + (f", score {ex.score}" if ex.score is not None else "")
                       + (f", ${ex.cost_usd:.6f}" if ex.cost_usd is not None else "") + f" ({ex.detail})")
    typer.echo(f"chosen agent: {trace.chosen_agent}")


def routing_snapshot(
    name: str = typer.Argument(..., help="Handbook name"),
    path: Path = typer.Argument(..., help="Output JSON file"),
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX, help="Version number (default: latest)"),
    no_queries: bool = typer.Option(False, "--no-queries", help="Leave the evidence query texts out"),
) -> None:
    """Write a version's routing model as JSON for HandbookRouter.from_export (routing without a database)."""
    import json

    from skillorchestra_core.routing.build import routing_model
    from skillorchestra_core.routing.snapshot import to_snapshot

    with db_session() as s:
        model = routing_model(s, name, version)
    path.write_text(json.dumps(to_snapshot(model, include_queries=not no_queries)))
    typer.echo(f"wrote {path} ({model.label}, {sum(len(t.agents) for t in model.modes.values())} agents)")
