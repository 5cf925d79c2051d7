"""The one engine factory: SQLite pragmas on every connection, migrations on first open."""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, TypeVar

from sqlalchemy import event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, create_engine

from skillorchestra_core.db.schema_lock import upgrade_locked
from skillorchestra_core.errors import Conflict, ReadOnlyDatabase
from skillorchestra_core.settings import get_settings

T = TypeVar("T")
# busy_timeout first: switching to WAL needs the lock too. 15 s lets 8 queued writers of a large import finish.
BUSY_TIMEOUT_S = 15.0
_SQLITE_PRAGMAS = (f"busy_timeout={int(BUSY_TIMEOUT_S * 1000)}", "journal_mode=WAL", "synchronous=NORMAL",
                   "foreign_keys=ON")
_READ_ONLY_PRAGMAS = ("foreign_keys=ON",)
_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def _pragmas(pragmas: tuple[str, ...]):
    def apply(dbapi_conn, _record) -> None:
        cur = dbapi_conn.cursor()
        for pragma in pragmas:
            cur.execute(f"PRAGMA {pragma}")
        cur.close()
    return apply


def read_only_mode(path: Path) -> str | None:
    """How to open an SQLite file this user cannot write: "ro" when only the file is read-only (SQLite can still
    make its WAL side files), "immutable" when its folder is read-only too (no side files can exist), else None."""
    if not path.exists():
        return None
    if not os.access(path.parent, os.W_OK):
        return "immutable"
    if not os.access(path, os.W_OK):
        return "ro"
    return None


def _refuse_writes(engine: Engine, where: str) -> None:
    """SQLite's "attempt to write a readonly database" becomes one line a user can act on (and a StudioError, which
    the CLI and the pages already show as such) instead of a driver traceback."""
    def translate(ctx) -> None:
        if isinstance(ctx.original_exception, sqlite3.OperationalError) and \
                "readonly database" in str(ctx.original_exception):
            raise ReadOnlyDatabase(f"{where} is read-only for this user, so nothing was changed (SQLite: "
                                   f"{ctx.original_exception})") from None
    event.listen(engine, "handle_error", translate)


def _read_only_engine(path: Path, mode: str) -> Engine:
    uri = f"{path.resolve().as_uri()}?{'immutable=1' if mode == 'immutable' else 'mode=ro'}"
    engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False,
                                                                         timeout=BUSY_TIMEOUT_S))
    event.listen(engine, "connect", _pragmas(_READ_ONLY_PRAGMAS))
    _refuse_writes(engine, f"the database {path}")
    return engine


def _create(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        file = parsed.database if parsed.database and parsed.database != ":memory:" else None
        if parsed.query.get("mode") == "ro" or parsed.query.get("immutable") == "1":  # a read-only URI as given
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_S})
            event.listen(engine, "connect", _pragmas(_READ_ONLY_PRAGMAS))
            _refuse_writes(engine, "the database (opened read-only)")
            upgrade_locked(engine, read_only=True)
            return engine
        if file and not file.startswith("file:") and (mode := read_only_mode(Path(file))):
            engine = _read_only_engine(Path(file), mode)
            upgrade_locked(engine, read_only=True)
            return engine
        if file and not file.startswith("file:"):
            Path(file).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_S})
        event.listen(engine, "connect", _pragmas(_SQLITE_PRAGMAS))
    else:
        engine = create_engine(url, pool_pre_ping=True)
    upgrade_locked(engine)
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


def lock_for_write(s: Session, key: str) -> None:
    """Serialise writers of one thing (a handbook) for the rest of the transaction.

    SQLite: a no-op UPDATE takes the database's write lock now (waiting up to busy_timeout), so the reads that follow
    see the latest commit. If this transaction already read an older snapshot, SQLite refuses with "database is
    locked"; callers translate that into a Conflict. PostgreSQL: a transaction-scoped advisory lock on the key.
    """
    bind = s.get_bind()
    if bind.dialect.name == "sqlite":
        s.execute(text("UPDATE schema_migration SET version = version WHERE 1 = 0"))
    elif bind.dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(key)})


def _lock_key(key: str) -> int:
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def write_with_retry(work: Callable[[Session], T], url: str | None = None, attempts: int = 8) -> T:
    """Run `work(session)` in its own transaction and commit; when another writer got there first (a Conflict on
    the latest version, SQLite's "database is locked", a unique key taken concurrently), roll back and redo it
    from scratch, so concurrent imports all land, one after the other."""
    for attempt in range(1, attempts + 1):
        with session(url) as s:
            try:
                result = work(s)
                s.commit()
                return result
            except (Conflict, OperationalError, IntegrityError) as exc:
                s.rollback()
                if attempt == attempts or not _retryable(exc):
                    raise
        time.sleep(min(2.0, 0.05 * 2 ** attempt) * (0.5 + random.random()))
    raise AssertionError("unreachable")


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, OperationalError):
        return "locked" in str(exc) or "busy" in str(exc)
    return True
