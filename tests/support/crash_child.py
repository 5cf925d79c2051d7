"""Run one `skillorchestra` command line in this process for a crash test, logging what it reached.

    CRASH_LOG=events.log [CRASH_AT=before-commit|in-commit|after-commit CRASH_COMMIT=N CRASH_IN_COMMIT_S=0.003] \
        python crash_child.py import outcomes f.csv --handbook x --db URL

Test-only: nothing here ships. Each event is one line `<monotonic time> <event>` appended to CRASH_LOG and flushed
at once, so the parent reads what the child reached even after a SIGKILL: `ready` (imports done), `write` (the first
write statement of a transaction), `commit-start`, `commit-end`, `exit`. With CRASH_AT the child kills itself
with SIGKILL at the N-th commit of a transaction that wrote: just before it, during it (a timer), or just after it.
The hooks sit on SQLAlchemy's dialect and engine events, so the product code runs unchanged.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

_LOG = open(os.environ["CRASH_LOG"], "a", buffering=1)  # line-buffered: every event reaches the OS at once
_AT = os.environ.get("CRASH_AT", "")
_NTH = int(os.environ.get("CRASH_COMMIT", "1"))
_IN_COMMIT_S = float(os.environ.get("CRASH_IN_COMMIT_S", "0.002"))
_wrote: set[int] = set()  # ids of DBAPI connections whose open transaction has written
_commits = 0
_WRITES = ("INSERT", "UPDATE", "DELETE")


def mark(event: str) -> None:
    _LOG.write(f"{time.monotonic():.6f} {event}\n")


def die() -> None:
    mark(f"kill {_AT}")
    os.kill(os.getpid(), signal.SIGKILL)


def _on_execute(conn, cursor, statement, parameters, context, executemany) -> None:
    key = id(conn.connection)  # the pooled connection, as `do_commit` receives it
    if key not in _wrote and statement.lstrip()[:6].upper() in _WRITES:
        _wrote.add(key)
        mark("write")


def _install() -> None:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine
    from sqlalchemy.engine.default import DefaultDialect

    event.listen(Engine, "before_cursor_execute", _on_execute)
    original = DefaultDialect.do_commit

    def do_commit(self, dbapi_connection) -> None:
        global _commits
        wrote = id(dbapi_connection) in _wrote
        _wrote.discard(id(dbapi_connection))
        if not wrote:
            original(self, dbapi_connection)
            return
        _commits += 1
        armed = bool(_AT) and _commits == _NTH
        mark("commit-start")
        if armed and _AT == "before-commit":
            die()
        if armed and _AT == "in-commit":
            threading.Timer(_IN_COMMIT_S, die).start()
        original(self, dbapi_connection)
        mark("commit-end")
        if armed and _AT == "after-commit":
            die()

    rollback = DefaultDialect.do_rollback

    def do_rollback(self, dbapi_connection) -> None:
        _wrote.discard(id(dbapi_connection))
        rollback(self, dbapi_connection)

    DefaultDialect.do_commit = do_commit  # type: ignore[method-assign]
    DefaultDialect.do_rollback = do_rollback  # type: ignore[method-assign]


if __name__ == "__main__":
    mark("start")
    _install()
    from skillorchestra_core.cli import main

    mark("ready")
    try:
        main(sys.argv[1:])
    finally:
        mark("exit")
