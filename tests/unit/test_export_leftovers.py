"""An export SIGKILLed mid-write leaves its hidden temp file next to the target; the next export of that file
removes it (its writer is dead), and leaves alone the temp file of a writer still running and other files'."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from skillorchestra_core.formats.export import write_json

# The child writes part of the document, says so, and hangs there until it is killed.
CHILD = """
import json, sys, time
from skillorchestra_core.formats import export

def stuck(doc, fh, **kw):
    fh.write('{"half": ')
    fh.flush()
    open(sys.argv[2], "w").close()
    time.sleep(120)

export.json.dump = stuck
export.write_json({"a": 1}, sys.argv[1])
"""


def _killed_mid_write(target, ready) -> int:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(target), str(ready)])
    deadline = time.monotonic() + 60
    while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ready.exists(), "the child never started writing"
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    return proc.pid


def _temps(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_the_next_export_removes_what_a_killed_export_left(tmp_path):
    target = tmp_path / "handbook.json"
    pid = _killed_mid_write(target, tmp_path / "ready")
    left = _temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(f".handbook.json.{pid}-"), left
    assert not target.exists()  # all or nothing: the half document never took the target's name
    busy = tmp_path / f".handbook.json.{os.getpid()}-busy1234.tmp"  # a writer still running: left alone
    other = tmp_path / ".handbook.json.bak.1-abcdefgh.tmp"  # another file's (handbook.json.bak) temp file
    for p in (busy, other):
        p.write_text("partial")
    write_json({"b": 2}, target)
    assert json.loads(target.read_text()) == {"b": 2}
    assert _temps(tmp_path) == sorted([busy.name, other.name])


def test_an_old_unnamed_temp_file_goes_only_once_it_is_stale(tmp_path):
    target = tmp_path / "out.json"
    fresh, old = tmp_path / ".out.json.abcd1234.tmp", tmp_path / ".out.json.wxyz9876.tmp"
    for p in (fresh, old):
        p.write_text("partial")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    write_json({"a": 1}, target)
    assert _temps(tmp_path) == [fresh.name]
