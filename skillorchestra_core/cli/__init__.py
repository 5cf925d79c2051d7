"""`skillorchestra` command: a thin layer over the same core functions the pages call.

Sub-command groups live in sibling modules, each exposing `register(app)`.
"""

from __future__ import annotations

import importlib
import sys

import typer

from skillorchestra_core.cli import common, decisions, evaluate, handbooks, io, learn, refine, route, schema, select
from skillorchestra_core.errors import StudioError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="SkillOrchestra Studio: curate skill handbooks, inspect competence, route queries.")


def _check_db_url(url: str | None) -> str | None:
    """Refuse a malformed or unsupported URL up front, as a usage error (one line), not a driver traceback."""
    if url is None:
        return None
    from sqlalchemy.engine import make_url  # noqa: PLC0415
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError  # noqa: PLC0415

    try:
        make_url(url).get_dialect()
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        raise typer.BadParameter(f"not a database URL {url!r} ({exc})", param_hint="'--db'") from None
    return url


@app.callback()
def _global(db: str = typer.Option(None, "--db", callback=_check_db_url,
                                   help="Database URL (default: SKILLORCHESTRA_DB_URL or data/)")):
    common.state.db_url = db


for module in (handbooks, io, route, evaluate, learn, refine, select, decisions, schema):
    module.register(app)


def _click_errors() -> tuple[type[Exception], ...]:
    """ClickException as typer raises it: recent typer bundles its own click copy (typer._click), older ones use
    the standalone package. Catch whichever classes exist."""
    found = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            found.append(importlib.import_module(name).ClickException)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _hoist_db(argv: list[str]) -> list[str]:
    """`--db URL` is accepted anywhere on the line (`skillorchestra handbooks --db URL`): move it to the front,
    where the group option lives."""
    out, front, i = [], [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            out.extend(argv[i:])
            break
        if arg == "--db" and i + 1 < len(argv):
            front, i = ["--db", argv[i + 1]], i + 2
            continue
        if arg.startswith("--db="):
            front = [arg]
        else:
            out.append(arg)
        i += 1
    return front + out


def _usage_line(exc: Exception) -> str:
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    ctx = getattr(exc, "ctx", None)
    hint = f" (see `{ctx.command_path} --help`)" if ctx is not None and ctx.command_path else ""
    return f"error: {message}{hint}"


def main(argv: list[str] | None = None) -> None:
    args = _hoist_db(list(sys.argv[1:] if argv is None else argv))
    try:
        app(args=args, prog_name="skillorchestra", standalone_mode=False)
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except (typer.Exit, SystemExit) as exc:
        code = getattr(exc, "exit_code", getattr(exc, "code", 0))
        sys.exit(code or 0)
    except typer.Abort:
        sys.exit(1)
    except _click_errors() as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `skillorchestra`: the help text is the answer
            exc.show()  # type: ignore[attr-defined]  # a ClickException, whichever click copy raised it
            sys.exit(0)
        typer.echo(_usage_line(exc), err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    except OSError as exc:  # a file named on the command line cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)
    except OverflowError:  # a number given on the command line beyond what the database stores
        typer.echo(f"error: a number on the command line is out of range (at most {common.DB_INT_MAX})", err=True)
        sys.exit(2)
    except Exception as exc:
        from sqlalchemy.exc import OperationalError  # noqa: PLC0415

        if not isinstance(exc, OperationalError):
            raise
        typer.echo(f"error: cannot use the database: {str(exc.orig or exc).splitlines()[0]}", err=True)
        sys.exit(1)
