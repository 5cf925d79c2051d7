"""`skillorchestra import ...` and `skillorchestra export ...` through typer's CliRunner and a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import select
from typer.testing import CliRunner

from skillorchestra_core.cli import app
from skillorchestra_core.db import session
from skillorchestra_core.db.models import HandbookVersion, Query, Trajectory
from skillorchestra_core.errors import ImportRejected, StudioError

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
runner = CliRunner()


def cli(url, *args):
    return runner.invoke(app, ["--db", url, *map(str, args)])


def count(url, model):
    with session(url) as s:
        return s.exec(select(func.count()).select_from(model)).one()


def test_import_outcomes_prints_what_it_did_and_is_idempotent(db_url):
    first = cli(db_url, "import", "outcomes", FIX / "outcomes_good.csv", "--handbook", "hb", "--skills-from-task")
    assert first.exit_code == 0, first.output
    assert "8 row(s), 4 query(ies) added, 8 trajectory(ies) added, 0 already present; created version 1" in first.output
    again = cli(db_url, "import", "outcomes", FIX / "outcomes_good.csv", "--handbook", "hb", "--skills-from-task")
    assert again.exit_code == 0
    assert "0 trajectory(ies) added, 8 already present; unchanged (still version 1)" in again.output
    assert count(db_url, HandbookVersion) == 1


def test_import_outcomes_bad_file_fails_and_writes_nothing(db_url):
    result = cli(db_url, "import", "outcomes", FIX / "outcomes_bad.csv", "--handbook", "hb")
    assert result.exit_code == 1 and isinstance(result.exception, ImportRejected)
    assert len(result.exception.bad_rows) == 9
    assert count(db_url, Query) == 0 and count(db_url, Trajectory) == 0


def test_import_outcomes_skip_bad_rows_lists_them(db_url):
    result = cli(db_url, "import", "outcomes", FIX / "outcomes_bad.jsonl", "--handbook", "hb", "--skip-bad-rows",
                 "--dataset", "demo")
    assert result.exit_code == 0, result.output
    assert "skipped 6 bad row(s):" in result.output
    assert f"{FIX / 'outcomes_bad.jsonl'}:3: expected a JSON object, got list" in result.output
    with session(db_url) as s:
        assert s.exec(select(Query.dataset)).all() == ["demo"]


def test_import_llmrouter_defaults_to_task_skills(db_url):
    mini = FIX / "llmrouter_mini"
    result = cli(db_url, "import", "llmrouter", mini, "--handbook", "lr")
    assert result.exit_code == 0, result.output
    assert "15 trajectory(ies) added" in result.output and "kept the train record" in result.output
    shown = cli(db_url, "show", "lr", "--json")
    assert len(json.loads(shown.output)["skills"]) == 4
    plain = cli(db_url, "import", "llmrouter", mini, "--handbook", "lr2", "--no-skills-from-task")
    assert plain.exit_code == 0 and json.loads(cli(db_url, "show", "lr2", "--json").output)["skills"] == []


def test_import_exploration_with_mode(db_url):
    result = cli(db_url, "import", "exploration", FIX / "exploration_evaluate.jsonl", "--handbook", "ex",
                 "--mode", "search")
    assert result.exit_code == 0, result.output
    with session(db_url) as s:
        assert set(s.exec(select(Trajectory.mode)).all()) == {"search"}


def test_import_handbook_then_export_every_format(db_url, tmp_path):
    result = cli(db_url, "import", "handbook", FIX / "handbook_frames.json", "--handbook", "f")
    assert result.exit_code == 0 and "3 mode(s), 5 skill(s), 4 agent(s)" in result.output
    expected_keys = {"skillorchestra": "agent_profiles", "rsl": "skill_catalog", "stage-router": "usage_patterns",
                     "json": "competence"}
    for fmt, key in expected_keys.items():
        out = tmp_path / f"f-{fmt}.json"
        res = cli(db_url, "export", "f", "--format", fmt, "-o", out)
        assert res.exit_code == 0, res.output
        assert f"exported f v1 as {fmt} to {out}" in res.output
        assert key in json.loads(out.read_text())
    stdout = cli(db_url, "export", "f", "--format", "rsl", "-o", "-", "--version", "1")
    assert json.loads(stdout.output)["version"] == 0


def test_export_errors(db_url, tmp_path):
    cli(db_url, "import", "handbook", FIX / "handbook_reference.json", "--handbook", "ref")
    bad_format = cli(db_url, "export", "ref", "--format", "yaml", "-o", tmp_path / "x.json")
    assert bad_format.exit_code == 1 and isinstance(bad_format.exception, StudioError)
    assert not (tmp_path / "x.json").exists()
    missing = cli(db_url, "export", "ref", "-o", tmp_path / "x.json", "--version", "3")
    assert missing.exit_code == 1 and "no version 3" in str(missing.exception)
    no_folder = cli(db_url, "export", "ref", "-o", tmp_path / "nope" / "x.json")
    assert no_folder.exit_code == 1 and "does not exist" in str(no_folder.exception)


def test_missing_handbook_option_is_a_usage_error(db_url):
    result = cli(db_url, "import", "outcomes", FIX / "outcomes_good.csv")
    assert result.exit_code == 2 and "--handbook" in result.output


def _run_main(db_url, *args):
    env = {**os.environ, "SKILLORCHESTRA_DB_URL": db_url}
    code = "from skillorchestra_core.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize(("path", "needle"), [
    (FIX / "outcomes_bad.csv", f"{FIX / 'outcomes_bad.csv'}:3: score 1.5 is outside [0, 1]"),
    (FIX / "handbook_reference.json", "unknown extension '.json'"),
])
def test_real_process_bad_file_exits_1_with_one_line(db_url, path, needle):
    proc = _run_main(db_url, "import", "outcomes", path, "--handbook", "hb")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_real_process_happy_path(db_url):
    proc = _run_main(db_url, "import", "outcomes", FIX / "outcomes_good.jsonl", "--handbook", "hb")
    assert proc.returncode == 0, proc.stderr
    assert "4 trajectory(ies) added" in proc.stdout and "created version 1" in proc.stdout
    assert count(db_url, Trajectory) == 4
