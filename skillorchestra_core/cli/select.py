"""`select`, `publish`, `report`: validation sweeps, the Pareto choice and the published routing configuration."""

from __future__ import annotations

from pathlib import Path

import typer

from skillorchestra_core.cli.common import DB_INT_MAX, db_session, echo_json
from skillorchestra_core.cli.evaluate import _floats
from skillorchestra_core.errors import StudioError

DEFAULT_LAMBDAS = ",".join(f"{i / 20:g}" for i in range(21))


def _micro_usd(cost: float | None) -> str:
    """A run's mean cost per query in micro-dollars (a run that has not finished has none yet)."""
    return "n/a" if cost is None else f"{cost * 1e6:.1f} u$"


def register(app: typer.Typer) -> None:
    app.command("select")(select)
    app.command("publish")(publish)
    app.command("report")(report)
    app.command("live")(live)
    app.command("runs")(runs)


def select(
    name: str = typer.Argument(..., help="Handbook name"),
    split: str = typer.Option("val", "--split", help="val (default), test or train"),
    lambdas: str = typer.Option(DEFAULT_LAMBDAS, "--lambdas", help="Routing lambdas, comma-separated"),
    candidates: str = typer.Option("auto", "--candidates",
                                   help="auto (depth maps + pruned), none (the version alone) or numbers 1,3,4"),
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX,
                                help="Source version (default: latest non-candidate)"),
    routers: str = typer.Option("skill", "--routers", help="skill, true-label, reference-rule (comma-separated)"),
    objective: float = typer.Option(None, "--objective-lambda",
                                    help="lambda of accuracy - lambda x normalised cost (default: settings)"),
    cost_unit: str = typer.Option("normalised", "--cost-unit", help="normalised, max or usd"),
    as_json: bool = typer.Option(False, "--json", help="Print runs, frontier and selected as JSON"),
) -> None:
    """Replay every candidate x lambda on a split, with the baselines; print the frontier and the selection."""
    from skillorchestra_core.selection.service import select as run
    from skillorchestra_core.selection.sweep import SweepOptions

    with db_session() as s:
        try:
            opts = SweepOptions(split=split, lambdas=tuple(_floats(lambdas)), cost_unit=cost_unit,
                                routers=tuple(r.strip() for r in routers.split(",") if r.strip()))
            sel = run(s, name, opts, candidates=candidates, source=version, objective_lambda=objective)
            s.commit()
        except ValueError as exc:
            raise StudioError(str(exc)) from exc
    if as_json:
        echo_json(sel.to_dict())
        return
    typer.echo(f"{name}: {len(sel.candidates)} candidate(s) of v{sel.source_version}, {len(sel.runs)} runs on "
               f"{split}")
    for r in sel.frontier:
        typer.echo(f"  frontier  {r.label:<40} accuracy {r.accuracy:.3f}  cost {_micro_usd(r.mean_cost_usd)}")
    if sel.selected:
        r = sel.selected
        typer.echo(f"selected at objective lambda {sel.objective_lambda:g}: {r.label} (accuracy {r.accuracy:.3f}, "
                   f"cost {_micro_usd(r.mean_cost_usd)}); publish with: skillorchestra publish {name} "
                   f"--version {r.version} --lambda {r.lam:g}")


def publish(
    name: str = typer.Argument(..., help="Handbook name"),
    version: int = typer.Option(..., "--version", min=1, max=DB_INT_MAX, help="Version to publish"),
    lam: float = typer.Option(..., "--lambda", help="Routing lambda"),
    router: str = typer.Option("skill", "--router", help="Router"),
    cost_unit: str = typer.Option("normalised", "--cost-unit", help="normalised, max or usd"),
    actor: str = typer.Option("cli", "--actor", help="Who publishes (audit log)"),
    note: str = typer.Option("", "--note", help="Why (audit log)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Mark a version, router and lambda as the routing configuration production loads by default."""
    from skillorchestra_core.selection.publish import publish as run

    with db_session() as s:
        try:
            pub = run(s, name, version, lam, router=router, cost_unit=cost_unit, actor=actor, note=note)
            s.commit()
        except ValueError as exc:
            raise StudioError(str(exc)) from exc
    if as_json:
        echo_json(pub.to_dict())
    else:
        typer.echo(f"published {name} v{pub.version} router {pub.router} lambda {pub.lam:g} ({pub.cost_unit})")


def report(
    name: str = typer.Argument(..., help="Handbook name"),
    out: Path = typer.Option(..., "-o", "--out", help="Directory for the table and plot"),
    lambdas: str = typer.Option(DEFAULT_LAMBDAS, "--lambdas", help="Routing lambdas, comma-separated"),
    objective: float = typer.Option(None, "--objective-lambda", help="Selection lambda (default: settings)"),
    candidates: str = typer.Option("auto", "--candidates", help="auto, none or version numbers"),
) -> None:
    """Select on val, evaluate on test for every router; write report.csv, report.md, pareto.html, pareto.png."""
    from skillorchestra_core.selection.report import write_report

    with db_session() as s:
        try:
            written = write_report(s, name, out, lambdas=_floats(lambdas), objective_lambda=objective,
                                   candidates=candidates)
            s.commit()
        except ValueError as exc:
            raise StudioError(str(exc)) from exc
    for line in written:
        typer.echo(line)


def live(
    name: str = typer.Argument(..., help="Handbook name"),
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX,
                                help="Version (default: latest; ignored with --resume)"),
    lam: float = typer.Option(0.1, "--lambda", help="Routing lambda"),
    split: str = typer.Option("val", "--split", help="val (default), test or train"),
    router: str = typer.Option("skill", "--router", help="Router"),
    cap: float = typer.Option(None, "--cap", help="Total cost cap in USD: no new call starts once it is reached"),
    concurrency: int = typer.Option(4, "--concurrency", help="Calls in flight at once"),
    prefix: str = typer.Option("", "--model-prefix", help="Prefix for the agents' model strings, e.g. openai/"),
    resume: int = typer.Option(None, "--resume", help="Finish this live run (its id) instead of planning one"),
) -> None:
    """Live validation: call each routed agent through litellm and score its answer against the ground truth."""
    from skillorchestra_core.cli.common import state
    from skillorchestra_core.db import session
    from skillorchestra_core.handbook.store import get_version
    from skillorchestra_core.llm import client_from_settings
    from skillorchestra_core.routing.execution import NO_LIVE_BACKEND
    from skillorchestra_core.selection.live import LiveOptions, execute_live_run, plan_live_run

    llm = client_from_settings()
    if not getattr(llm, "configured", True) or llm.backend == "offline":
        raise StudioError(NO_LIVE_BACKEND)
    with db_session() as s:
        try:
            run_id = resume or plan_live_run(s, name, get_version(s, name, version).number, lam, split=split,
                                             router=router)
            s.commit()
        except ValueError as exc:
            raise StudioError(str(exc)) from exc
    with typer.progressbar(length=1, label=f"live run #{run_id}") as bar:
        def tick(p):
            bar.length = p.total
            bar.update(1)
        end = execute_live_run(lambda: session(state.db_url), run_id, llm,
                               LiveOptions(concurrency=concurrency, cost_cap_usd=cap, model_prefix=prefix),
                               progress=tick)
    typer.echo(f"live run #{run_id}: {end.status}, {end.done}/{end.total} queries, spent {end.spent_usd:.6f} USD"
               + ("" if end.status == "done" else f"; finish with: skillorchestra live {name} --resume {run_id}"))


def runs(
    name: str = typer.Argument(..., help="Handbook name"),
    kind: str = typer.Option(None, "--kind", help="live or replay (default: both)"),
    limit: int = typer.Option(50, "--limit", min=1, max=DB_INT_MAX, help="Newest runs shown"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List the stored validation runs, newest first; a killed live run shows as interrupted, with how to resume it."""
    from skillorchestra_core.db.models import key
    from skillorchestra_core.handbook.store import get_handbook
    from skillorchestra_core.selection.runs import run_rows

    with db_session() as s:
        rows = run_rows(s, key(get_handbook(s, name)), kind=kind, limit=limit)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        typer.echo(f"{name}: no validation run")
    for r in rows:
        acc = "n/a" if r["accuracy"] is None else f"{r['accuracy']:.3f}"
        line = (f"#{r['id']} {r['kind']} v{r['version']} {r['router']} lambda {r['lambda']:g} {r['split']}: "
                f"{r['status']}, {r['answered']}/{r['queries']} queries, accuracy {acc}, "
                f"cost {_micro_usd(r['mean_cost_usd'])}")
        if r["kind"] == "live" and r["status"] in ("interrupted", "stopped"):
            line += f"; resume with: skillorchestra live {name} --resume {r['id']}"
        typer.echo(line)
