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

_LOG = None
_AT = ""
_NTH = 1
_IN_COMMIT_S = 0.002
_wrote: set[int] = set()  # ids of the pooled connections whose open transaction has written
_commits = 0
_WRITES = ("INSERT", "UPDATE", "DELETE")


def configure() -> None:
    """Read this run's settings from the environment (a forked child calls it again with its own)."""
    global _LOG, _AT, _NTH, _IN_COMMIT_S, _commits
    _LOG = open(os.environ["CRASH_LOG"], "a", buffering=1)  # line-buffered: each event reaches the OS at once
    _AT = os.environ.get("CRASH_AT", "")
    _NTH = int(os.environ.get("CRASH_COMMIT", "1"))
    _IN_COMMIT_S = float(os.environ.get("CRASH_IN_COMMIT_S", "0.002"))
    _wrote.clear()
    _commits = 0


def mark(event: str) -> None:
    assert _LOG is not None
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
        timer = threading.Timer(_IN_COMMIT_S, die) if armed and _AT == "in-commit" else None
        if timer is not None:
            timer.start()
        original(self, dbapi_connection)
        mark("commit-end")
        if timer is not None:  # the commit beat the timer: die now, so this point always ends in a kill
            die()
        if armed and _AT == "after-commit":
            die()

    rollback = DefaultDialect.do_rollback

    def do_rollback(self, dbapi_connection) -> None:
        _wrote.discard(id(dbapi_connection))
        rollback(self, dbapi_connection)

    DefaultDialect.do_commit = do_commit  # type: ignore[method-assign]
    DefaultDialect.do_rollback = do_rollback  # type: ignore[method-assign]


def run(argv: list[str]) -> int:
    """One command line, as the `skillorchestra` script runs it; returns its exit code."""
    from skillorchestra_core.cli import main
    from skillorchestra_core.settings import get_settings

    get_settings.cache_clear()  # a forked child reads its own environment
    mark("ready")
    try:
        main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        mark("exit")
    return 0


def serve() -> None:
    """Fork server: import everything once, then fork one child per request line on stdin (JSON: argv, env, out,
    err), answering `{"pid": N}` at once and `{"returncode": R}` (negative: killed by that signal) when it ends.
    Each child is a process of its own, killed for real; only the import time of a fresh interpreter is saved."""
    import json

    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(json.dumps({"returncode": code}), flush=True)


def _child(req: dict) -> None:
    code = 1
    try:
        for fd, name in ((1, req["out"]), (2, req["err"])):
            target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        sys.stdin.close()
        os.environ.clear()
        os.environ.update(req["env"])
        configure()
        mark("start")
        code = run(req["argv"])
    except BaseException:  # noqa: BLE001  (reported on the child's stderr, as a traceback would be)
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def preload() -> None:
    """What the commands under test import lazily, so forked children start warm."""
    import skillorchestra_core.cli  # noqa: F401
    import skillorchestra_core.formats.outcomes  # noqa: F401
    import skillorchestra_core.learning.run  # noqa: F401
    import skillorchestra_core.selection.live  # noqa: F401
    import skillorchestra_core.selection.service  # noqa: F401

    if os.environ.get("CRASH_PRELOAD") == "litellm":  # ~3 s a child would pay again on every live run
        from skillorchestra_core.llm.litellm_client import _litellm

        _litellm()


if __name__ == "__main__":
    _install()
    if sys.argv[1:] == ["--serve"]:
        preload()
        serve()
    else:
        configure()
        mark("start")
        sys.exit(run(sys.argv[1:]))
