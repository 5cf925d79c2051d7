"""`decisions prune`: apply the decision retention."""

from __future__ import annotations

import typer

from skillorchestra_core.cli.common import db_session, echo_json
from skillorchestra_core.errors import StudioError

decisions_app = typer.Typer(no_args_is_help=True, help="The stored routing decisions.")


def register(app: typer.Typer) -> None:
    app.add_typer(decisions_app, name="decisions")


@decisions_app.command("prune")
def prune(
    keep: int = typer.Option(None, "--keep", help="Keep the newest N decisions per handbook "
                                                  "(default: SKILLORCHESTRA_DECISION_KEEP)"),
    keep_days: float = typer.Option(None, "--keep-days", help="Keep the decisions of the last D days "
                                                              "(default: SKILLORCHESTRA_DECISION_KEEP_DAYS)"),
    handbook: str = typer.Option(None, "--handbook", help="Only this handbook's decisions"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
) -> None:
    """Delete the decisions outside the retention (nothing without a setting or an option)."""
    from pydantic import ValidationError

    from skillorchestra_core.routing.retention import prune_decisions

    with db_session() as s:
        try:
            got = prune_decisions(s, keep=keep, keep_days=keep_days, handbook=handbook)
        except (ValueError, ValidationError) as exc:
            raise StudioError(str(exc).splitlines()[0]) from exc
    if as_json:
        echo_json(vars(got))
        return
    if got.keep is None and got.keep_days is None:
        typer.echo(f"no retention set (--keep, --keep-days or SKILLORCHESTRA_DECISION_KEEP[_DAYS]): nothing "
                   f"deleted, {got.kept} kept")
        return
    typer.echo(f"deleted {got.deleted} decisions, {got.kept} kept")
