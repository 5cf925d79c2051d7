"""Schema creation and upgrade under a database-wide lock, so any number of processes may open a fresh or old
database at once: the first one migrates, the others wait for it and then find nothing to do.

The steps themselves live in `migrations`; this module only decides whether they are needed and serialises them
(SQLite: `BEGIN IMMEDIATE`, the database's write lock; PostgreSQL: a transaction-scoped advisory lock).
"""

from __future__ import annotations

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

from skillorchestra_core.db import migrations
from skillorchestra_core.errors import StudioError

# A fixed key for pg_advisory_xact_lock: "skillorchestra schema" in a signed 64-bit integer.
SCHEMA_LOCK_KEY = 0x5C4E_0A11_5C4E_0A11


def applied_versions(conn: Connection) -> set[int]:
    if migrations.current_version(conn) == 0:
        return set()
    return set(conn.execute(text("SELECT version FROM schema_migration")).scalars())


def _up_to_date(engine: Engine) -> tuple[bool, int]:
    with engine.connect() as conn:
        applied = applied_versions(conn)
        # tables with no step of their own count too: an upgrade recreates them (see migrations)
        tables_there = all(inspect(conn).has_table(t.name) for t in migrations.WITHOUT_A_STEP) if applied else True
        conn.rollback()
    wanted = {number for number, _, _ in migrations.MIGRATIONS}
    done = wanted <= applied and max(applied, default=0) <= migrations.LATEST and tables_there
    return done, max(applied, default=0)


def upgrade_locked(engine: Engine, *, read_only: bool = False) -> int:
    """Bring the database to the code's schema (see `migrations.upgrade`) unless it is already there; returns the
    schema version. A read-only database that would need an upgrade is a one-line error."""
    done, found = _up_to_date(engine)
    if done:
        return migrations.LATEST
    if read_only:
        if found > migrations.LATEST:
            return migrations.upgrade(engine)  # raises SchemaTooNew before writing anything
        raise StudioError(f"the database is read-only and its schema (version {found}) is older than this code's "
                          f"({migrations.LATEST}); open it once with write access to upgrade it")
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # waits (busy_timeout) for a migrating process to finish
        elif engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK_KEY})
        reached = migrations.upgrade_on(conn)  # re-reads the version under the lock
        conn.commit()
    return reached


def schema_version(engine: Engine) -> int:
    with engine.connect() as conn:
        found = migrations.current_version(conn)
        conn.rollback()
    return found
