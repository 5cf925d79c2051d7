"""Pause the cyclic garbage collector around bulk loads.

Reading a million evidence rows allocates millions of short-lived tuples and floats; each allocation burst
triggers collections that walk the whole live heap again (measured: 30-50% of a cold version load). Those
objects hold no reference cycles and die by reference counting, so nothing is lost by collecting once, after.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # nested or concurrent pauses: the collector comes back when the last one ends


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth
    with _lock:
        ours = _depth > 0 or gc.isenabled()  # disabled by someone else: leave it as it is
        if ours:
            _depth += 1
            gc.disable()
    try:
        yield
    finally:
        if ours:
            with _lock:
                _depth -= 1
                if _depth == 0:
                    gc.enable()
