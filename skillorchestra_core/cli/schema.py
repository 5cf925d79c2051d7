"""`schema` command: create or upgrade the database's schema and print its version."""

from __future__ import annotations

import typer

from skillorchestra_core.cli.common import state


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)


def schema() -> None:
    """Create or upgrade the database schema (under a lock, safe while other instances run); print its version."""
    from skillorchestra_core.db import get_engine
    from skillorchestra_core.db.migrations import LATEST
    from skillorchestra_core.db.schema_lock import schema_version

    engine = get_engine(state.db_url)  # opening migrates, under the schema lock
    typer.echo(f"schema version {schema_version(engine)} (this code: {LATEST}) on {engine.dialect.name}")
