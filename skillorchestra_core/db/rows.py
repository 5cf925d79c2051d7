"""Bulk reads as plain DB-API tuples, for the few reads large enough that SQLAlchemy's Row objects would cost as
much as the read itself (a version's trajectories, its attributions)."""

from __future__ import annotations

from sqlalchemy.engine import Connection


def fetch_tuples(conn: Connection, stmt) -> list[tuple]:
    """All rows of `stmt` as the driver returns them (no result processing: plain columns only)."""
    result = conn.execute(stmt)
    try:
        return list(result.cursor.fetchall()) if result.cursor is not None else [tuple(r) for r in result]
    finally:
        result.close()
