"""`demo`, `handbooks` and `show` commands."""

from __future__ import annotations

import typer

from skillorchestra_core.cli.common import DB_INT_MAX, db_session, echo_json

# Heavier modules (scipy through the posterior math) are imported inside the commands that need them.


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
    app.command("handbooks")(handbooks)
    app.command("show")(show)


def demo(force: bool = typer.Option(False, "--force", help="Rebuild the demo handbooks even if present")) -> None:
    """Build the synthetic demo handbooks (demo-qa, demo-agents) from a fixed seed."""
    from skillorchestra_core.demo import build_demo

    with db_session() as s:
        made = build_demo(s, force=force)
        s.commit()
    for name, status in made.items():
        typer.echo(f"{name}: {status}")


def handbooks(as_json: bool = typer.Option(False, "--json")) -> None:
    """List handbooks with their versions and counts."""
    from skillorchestra_core.handbook.store import summarise_handbooks

    with db_session() as s:
        rows = summarise_handbooks(s)
    if as_json:
        echo_json([vars(r) for r in rows])
        return
    if not rows:
        typer.echo("no handbooks; run `skillorchestra demo` or `skillorchestra import ...`")
    for r in rows:
        tag = " [synthetic]" if r.synthetic else ""
        typer.echo(f"{r.name}{tag}: v{r.latest} ({r.versions} versions) modes={r.modes} skills={r.skills} "
                   f"agents={r.agents} queries={r.queries} trajectories={r.trajectories}")


def show(
    name: str,
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX, help="Version number (default: latest)"),
    as_json: bool = typer.Option(False, "--json"),
    prior: str = typer.Option("hierarchical", "--prior", help="hierarchical or flat"),
    level: float = typer.Option(0.95, "--level", help="Credible interval level"),
) -> None:
    """Show one handbook version: counts, modes, skills, agents and each agent-skill posterior."""
    from skillorchestra_core.handbook.overview import show_record
    from skillorchestra_core.learning.competence import PriorConfig

    with db_session() as s:
        record = show_record(s, name, version, prior=PriorConfig(prior), level=level)
    if as_json:
        echo_json(record)
        return
    typer.echo(f"{record['handbook']} v{record['version']} ({record['content_hash'][:12]})")
    typer.echo("  " + ", ".join(f"{k}={v}" for k, v in record["counts"].items()))
    for r in record["competence"]:
        rate = "-" if r["empirical_rate"] is None else f"{r['empirical_rate']:.3f}"
        typer.echo(f"  {r['agent']:<28} {r['skill']:<40} mean={r['mean']:.3f} "
                   f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}] n={r['n']:.1f} rate={rate}")
