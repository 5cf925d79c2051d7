"""`skillorchestra` command: a thin layer over the same core functions the pages call.

Sub-command groups live in sibling modules, each exposing `register(app)`.
"""

from __future__ import annotations

import sys

import typer

from skillorchestra_core.cli import common, evaluate, handbooks, io, route, select
from skillorchestra_core.errors import StudioError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="SkillOrchestra Studio: curate skill handbooks, inspect competence, route queries.")


@app.callback()
def _global(db: str = typer.Option(None, "--db", help="Database URL (default: SKILLORCHESTRA_DB_URL or data/)")):
    common.state.db_url = db


for module in (handbooks, io, route, evaluate, select):
    module.register(app)


def main() -> None:
    try:
        app(standalone_mode=False)
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except (typer.Exit, SystemExit) as exc:
        code = getattr(exc, "exit_code", getattr(exc, "code", 0))
        sys.exit(code or 0)
    except typer.Abort:
        sys.exit(1)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
