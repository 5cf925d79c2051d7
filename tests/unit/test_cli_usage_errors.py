"""Usage mistakes print one line on stderr and no traceback, whatever click copy the installed typer raises."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "from skillorchestra_core.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120)


@pytest.mark.parametrize("args, expected", [
    (["show"], "Missing argument 'name'"),
    (["route", "demo-qa"], "Missing argument 'query'"),
    (["nosuch"], "No such command 'nosuch'"),
    (["show", "demo-qa", "--version", "abc"], "Invalid value for '--version'"),
    (["--db", "nosuch://x", "handbooks"], "not a database URL 'nosuch://x'"),
    (["handbooks", "--db", "nosuch://x"], "not a database URL 'nosuch://x'"),
    (["handbooks", "--db", "::::"], "not a database URL '::::'"),
    (["handbooks", "--no-such-flag"], "No such option: --no-such-flag"),
])
def test_usage_mistake_is_one_line(args, expected):
    out = _cli(*args)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_db_option_after_the_command_is_used(tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    out = _cli("handbooks", "--json", "--db", url)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert (tmp_path / "cli.db").exists()


def test_bare_command_prints_help_and_succeeds():
    out = _cli()
    assert out.returncode == 0
    assert "Usage" in out.stdout and "Traceback" not in out.stdout + out.stderr
