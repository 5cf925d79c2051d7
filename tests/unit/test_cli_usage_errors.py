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


# --- misuse that reaches the database or the file system -----------------------------------------------------------

FIX = ROOT / "tests" / "fixtures" / "formats"


def _one_line_error(out: subprocess.CompletedProcess, code: int, *expected: str) -> str:
    assert out.returncode == code, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: ") and all(e in lines[0] for e in expected), lines[0]
    assert "Traceback" not in out.stderr + out.stdout
    return lines[0]


@pytest.fixture(scope="module")
def small_db(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('cli') / 'small.db'}"
    out = _cli("--db", url, "import", "outcomes", str(FIX / "outcomes_good.csv"), "-H", "hb")
    assert out.returncode == 0, out.stderr
    return url


@pytest.mark.parametrize("version, bound", [
    ("0", "1"), ("-1", "1"), ("9223372036854775808", "9223372036854775807"),
    ("99999999999999999999999999", "9223372036854775807"),
])
def test_version_out_of_range_is_a_usage_error(small_db, version, bound):
    out = _cli("--db", small_db, "show", "hb", "--version", version)
    line = _one_line_error(out, 2, "Invalid value for '--version'")
    assert bound in line.split("'--version'")[1], line


@pytest.mark.parametrize("args", [
    ["export", "hb", "--version", "99999999999999999999", "-o", "-"],
    ["route", "hb", "a query", "--version", "-3"],
])
def test_version_range_holds_for_every_command(small_db, args):
    _one_line_error(_cli("--db", small_db, *args), 2, "'--version'")


def test_version_at_the_top_of_the_range_is_simply_not_found(small_db):
    out = _cli("--db", small_db, "show", "hb", "--version", "9223372036854775807")
    _one_line_error(out, 1, "9223372036854775807")


def test_id_argument_beyond_the_database_range_is_one_line(small_db):
    out = _cli("--db", small_db, "diff", "hb", "1", "99999999999999999999")
    line = _one_line_error(out, out.returncode, "")
    assert out.returncode in (1, 2) and ("out of range" in line or "99999999999999999999" in line)


def test_export_into_a_directory_is_one_line(small_db, tmp_path):
    out = _cli("--db", small_db, "export", "hb", "-o", str(tmp_path))
    _one_line_error(out, 1, str(tmp_path), "is a folder")
    assert list(tmp_path.iterdir()) == []


def test_export_into_a_missing_folder_is_one_line(small_db, tmp_path):
    target = tmp_path / "nope" / "hb.json"
    _one_line_error(_cli("--db", small_db, "export", "hb", "-o", str(target)), 1, "does not exist")


def test_export_under_a_file_is_one_line(small_db, tmp_path):
    (tmp_path / "plain").write_text("x")
    target = tmp_path / "plain" / "hb.json"
    _one_line_error(_cli("--db", small_db, "export", "hb", "-o", str(target)), 1, "is not a folder")


def test_export_into_an_unwritable_folder_is_one_line(small_db, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        out = _cli("--db", small_db, "export", "hb", "-o", str(folder / "hb.json"))
    finally:
        folder.chmod(0o700)
    _one_line_error(out, 1, "cannot write")


def test_unwritable_export_target_is_one_line(small_db, tmp_path):
    # /proc files exist and are regular-looking to stat but refuse a temp file beside them, even for root
    out = _cli("--db", small_db, "export", "hb", "-o", "/proc/version")
    _one_line_error(out, 1, "/proc/version")


@pytest.mark.parametrize("where", ["dir", "missing", "under-file"])
def test_routing_snapshot_to_a_bad_path_is_one_line(small_db, tmp_path, where):
    (tmp_path / "plain").write_text("x")
    target = {"dir": tmp_path, "missing": tmp_path / "nope" / "s.json", "under-file": tmp_path / "plain" / "s.json"}
    out = _cli("--db", small_db, "routing-snapshot", "hb", str(target[where]))
    _one_line_error(out, 1, str(target[where]))


def test_import_from_a_fifo_is_refused_at_once(small_db, tmp_path):
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    out = _cli("--db", small_db, "import", "outcomes", str(fifo), "-H", "hb2")  # _cli's timeout fails a hang
    _one_line_error(out, 1, f"{fifo}: is a FIFO, expected a regular file")
