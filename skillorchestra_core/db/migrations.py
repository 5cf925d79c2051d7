"""Append-only schema migrations, recorded in `schema_migration`.

A new database gets every table at once and is stamped with the latest version. An older database runs the
migrations above its version in order. Rules for new entries: never edit or reorder an entry; a migration that adds a
column must tolerate the column already existing (a brand-new database was created from the current models).
"""

from __future__ import annotations

from typing import Callable

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel

from skillorchestra_core.db import models  # noqa: F401  (registers the tables)
from skillorchestra_core.errors import SchemaTooNew


def _m001_initial(conn: Connection) -> None:
    SQLModel.metadata.create_all(conn)


def _m003_refinement_review(conn: Connection) -> None:
    # checkfirst: a database created by newer code already has these tables.
    SQLModel.metadata.create_all(conn, tables=[models.RefinementCandidate.__table__, models.Member.__table__])


MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial schema", _m001_initial),
    (3, "refinement candidates and members", _m003_refinement_review),
]
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table("schema_migration"):
        return 0
    return conn.execute(text("SELECT COALESCE(MAX(version), 0) FROM schema_migration")).scalar_one()


def upgrade(engine: Engine) -> int:
    """Bring the database to LATEST; refuse one written by newer code. Returns the version reached."""
    with engine.begin() as conn:
        found = current_version(conn)
        if found > LATEST:
            raise SchemaTooNew(
                f"database schema is version {found}, newer than this code ({LATEST}); upgrade skillorchestra-studio"
            )
        if found == 0:
            SQLModel.metadata.create_all(conn)
            pending = MIGRATIONS  # all stamped: create_all already made the current schema
        else:
            pending = [m for m in MIGRATIONS if m[0] > found]
            for _, _, step in pending:
                step(conn)
        for number, name, _ in pending:
            conn.execute(
                text("INSERT INTO schema_migration (version, name, applied_at) VALUES (:v, :n, CURRENT_TIMESTAMP)"),
                {"v": number, "n": name},
            )
    return LATEST
