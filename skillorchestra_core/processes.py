"""Whether a local process still runs, and what crash recovery does with that: learning workers, live validation
runs and the temporary files of atomic writers (routing cache, exports) are judged by the same rules here."""

from __future__ import annotations

import os
import re
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator

HEARTBEAT_S = 5.0  # a long-running owner (learning worker, live run) touches its row this often
STALE_S = 120.0  # a row untouched this long has no live owner (a kill, a reboot, another host)


def alive(pid: int) -> bool:
    """True while process `pid` runs on this machine; a finished child not yet reaped (a zombie) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def host() -> str:
    """This machine's name, recorded next to an owner's pid (a pid means nothing on another host)."""
    return socket.gethostname()[:255]


def stale(beat_at: datetime | None, stale_s: float = STALE_S) -> bool:
    """True when a heartbeat is older than `stale_s`; no heartbeat at all is not stale (nothing to judge by)."""
    if beat_at is None:
        return False
    seen = beat_at if beat_at.tzinfo else beat_at.replace(tzinfo=timezone.utc)  # SQLite keeps no zone
    return datetime.now(timezone.utc) - seen > timedelta(seconds=stale_s)


def owner_gone(pid: int | None, beat_at: datetime | None, owner_host: str | None = None) -> bool:
    """Whether the process that owns a queued or running row is gone: its pid is dead (checked only on its own
    host; a row without a host is taken to be this host's), or its heartbeat stopped."""
    local = owner_host is None or owner_host == host()
    return bool(pid and local and not alive(pid)) or stale(beat_at)


@contextmanager
def heartbeat(beat: Callable[[], object], name: str, every_s: float = HEARTBEAT_S) -> Iterator[None]:
    """Call `beat` every `every_s` in a daemon thread while the block runs: a row whose beat stops (see
    `owner_gone`) belongs to a process that died. A failed beat (a busy database) only delays the next one."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                beat()
            except Exception:  # noqa: BLE001  (the next beat tries again)
                continue

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()


def temp_file(folder: Path, prefix: str, suffix: str = ".tmp") -> tuple[int, str]:
    """`mkstemp` named `<prefix><pid>-<random><suffix>`: `remove_orphans` can tell whether its writer still runs."""
    return tempfile.mkstemp(dir=folder, prefix=f"{prefix}{os.getpid()}-", suffix=suffix)


def remove_orphans(folder: Path, prefix: str, suffix: str = ".tmp", *, own_folder: bool = False) -> list[Path]:
    """Delete the temp files of `temp_file(folder, prefix)` whose writer is dead (SIGKILL skips a writer's own
    cleanup). In a folder of the writer's own (`own_folder`, e.g. the routing cache) every other temp file is an
    orphan too; in a shared one only plain `mkstemp` names (an older release's, no pid) untouched for STALE_S are,
    and names of another shape (another target's, whose name merely starts the same) are left alone. Returns what
    was removed."""
    removed: list[Path] = []
    try:
        names = [p for p in folder.iterdir() if p.name.startswith(prefix) and p.name.endswith(suffix)]
    except OSError:
        return removed
    for path in names:
        middle = path.name[len(prefix):len(path.name) - len(suffix)]
        owned = _OURS.fullmatch(middle)
        try:
            if owned and alive(int(owned.group(1))):
                continue
            if not owned and not own_folder and not (_LEGACY.fullmatch(middle) and _age_s(path) > STALE_S):
                continue
            path.unlink(missing_ok=True)
        except OSError:  # another cleaner got there, or the folder is read-only: nothing to do
            continue
        removed.append(path)
    return removed


_OURS = re.compile(r"(\d+)-[a-z0-9_]+")
_LEGACY = re.compile(r"[a-z0-9_]{8}")  # mkstemp's random part


def _age_s(path: Path) -> float:
    return time.time() - path.stat().st_mtime
