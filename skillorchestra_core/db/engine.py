"""The one engine factory: SQLite pragmas on every connection, migrations on first open."""

from __future__ import annotations

import threading
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, create_engine

from skillorchestra_core.db.migrations import upgrade
from skillorchestra_core.settings import get_settings

_SQLITE_PRAGMAS = ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=5000")
_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def _set_sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    for pragma in _SQLITE_PRAGMAS:
        cur.execute(f"PRAGMA {pragma}")
    cur.close()


def _create(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _set_sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    upgrade(engine)
    return engine


def get_engine(url: str | None = None) -> Engine:
    """Return the process-wide engine for `url` (default: settings), migrated to the code's schema.

    Raises SchemaTooNew when the database was written by a newer release.
    """
    url = url or get_settings().database_url
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = _create(url)
        return engine


def dispose_engines() -> None:
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def session(url: str | None = None) -> Session:
    return Session(get_engine(url), expire_on_commit=False)
