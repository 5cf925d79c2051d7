"""State shared by CLI commands: the database chosen with --db."""

from __future__ import annotations

import json
from dataclasses import dataclass

import typer
from sqlmodel import Session

from skillorchestra_core.db import get_engine

# The largest integer SQLite (and a PostgreSQL bigint) stores: a larger id or version would fail in the driver.
DB_INT_MAX = 2**63 - 1


@dataclass
class _State:
    db_url: str | None = None


state = _State()


def db_session() -> Session:
    return Session(get_engine(state.db_url), expire_on_commit=False)


def echo_json(payload) -> None:
    typer.echo(json.dumps(payload, indent=2, default=str))
