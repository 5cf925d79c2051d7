"""Whether a local process still runs: crash recovery asks it of learning workers and of routing-cache writers."""

from __future__ import annotations

import os


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
