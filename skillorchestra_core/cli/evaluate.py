"""`evaluate`: held-out evaluation of routers on a split (a thin layer over routing.evaluate)."""

from __future__ import annotations

import typer

from skillorchestra_core.cli.common import DB_INT_MAX, db_session, echo_json
from skillorchestra_core.errors import StudioError


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate)


def _floats(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise StudioError(f"--lambdas expects comma-separated numbers, got {text!r}") from None
    if not values:
        raise StudioError("--lambdas is empty")
    return values


def evaluate(
    name: str = typer.Argument(..., help="Handbook name"),
    split: str = typer.Option("test", "--split", help="test, val or train"),
    router: str = typer.Option("skill", "--router", help="skill, true-label, reference-rule, best-single, cheapest, "
                                                         "random, oracle (comma-separated for several)"),
    lam: float = typer.Option(None, "--lambda", help="One cost weight lambda"),
    lambdas: str = typer.Option(None, "--lambdas", help="Several lambdas, comma-separated (e.g. 0,0.05,0.1)"),
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX, help="Version number (default: latest)"),
    mode: str = typer.Option(None, "--mode", help="Mode to evaluate (default: the only or the terminal mode)"),
    cost_unit: str = typer.Option("normalised", "--cost-unit",
                                  help="normalised (C / best-single's cost), max (C / the dearest agent's) or usd"),
    cost_scope: str = typer.Option(None, "--cost-scope",
                                   help="skill (per-skill costs) or mode (one cost per agent); default: the setting"),
    seed: int = typer.Option(0, "--seed", help="Seed of the random router and reference-rule draws"),
    top_k: int = typer.Option(3, "--top-k", help="Most active skills per query"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per (router, lambda)"),
) -> None:
    """Route every query of a split by its text and score the choices with the recorded outcomes."""
    from skillorchestra_core.routing.evaluate import evaluate as run
    from skillorchestra_core.settings import get_settings

    if lam is not None and lambdas is not None:
        raise StudioError("give --lambda or --lambdas, not both")
    values = _floats(lambdas) if lambdas is not None else [get_settings().default_lambda if lam is None else lam]
    routers = [r.strip() for r in router.split(",") if r.strip()]
    with db_session() as s:
        try:
            results = run(s, name, split=split, routers=routers, lambdas=values, version=version,
                          mode=mode, cost_unit=cost_unit, seed=seed, top_k=top_k, cost_scope=cost_scope)
        except ValueError as exc:
            raise StudioError(str(exc)) from exc
    if as_json:
        echo_json([r.to_dict() for r in results])
        return
    first = results[0]
    ref = f"C_ref {first.cost_ref * 1e6:.1f} u$" + (f" ({first.cost_ref_agent})" if first.cost_ref_agent else "")
    typer.echo(f"{first.handbook} v{first.version} | split {first.split} ({first.n_queries} queries, mode "
               f"{first.mode}) | cost unit {first.cost_unit}, {ref} | cost scope {first.cost_scope}")
    typer.echo(f"{'router':<16}{'lambda':>8}{'accuracy':>10}{'cost u$':>10}{'skill id':>10}  calls by agent")
    for r in results:
        acc = "-" if r.accuracy is None else f"{r.accuracy:.3f}"
        cost = "-" if r.mean_cost_usd is None else f"{r.mean_cost_usd * 1e6:.1f}"
        ident = "-" if r.skill_identification is None else f"{r.skill_identification:.3f}"
        calls = ", ".join(f"{a} {n}" for a, n in sorted(r.calls_by_agent.items(), key=lambda kv: -kv[1]))
        typer.echo(f"{r.router:<16}{r.lam:>8g}{acc:>10}{cost:>10}{ident:>10}  {calls}")
