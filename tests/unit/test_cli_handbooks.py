import json
import subprocess
import sys

from typer.testing import CliRunner

from skillorchestra_core.cli import app

runner = CliRunner()


def test_demo_handbooks_and_show_json(db_url):
    result = runner.invoke(app, ["--db", db_url, "demo"])
    assert result.exit_code == 0, result.output
    assert "demo-qa: built v1" in result.output
    listing = json.loads(runner.invoke(app, ["--db", db_url, "handbooks", "--json"]).output)
    assert {h["name"] for h in listing} == {"demo-qa", "demo-agents"}
    shown = runner.invoke(app, ["--db", db_url, "show", "demo-qa", "--json"])
    record = json.loads(shown.output)
    assert record["counts"]["agents"] == 6 and record["counts"]["modes"] == 1
    assert record["counts"]["trajectories"] == record["counts"]["queries"] * 6
    first = record["competence"][0]
    assert {"agent", "skill", "mean", "n", "ci_low", "ci_high", "empirical_rate"} <= set(first)
    assert all(r["ci_low"] <= r["mean"] <= r["ci_high"] for r in record["competence"])
    flat = json.loads(runner.invoke(app, ["--db", db_url, "show", "demo-qa", "--json", "--prior", "flat",
                                          "--version", "1"]).output)
    assert flat["competence"][0]["mean"] != first["mean"]


def test_errors_are_one_line_without_traceback(db_url):
    code = ("import sys; sys.argv = ['skillorchestra', '--db', %r, 'show', 'nope'];"
            "from skillorchestra_core.cli import main; main()") % db_url
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == ["error: no handbook named 'nope' (known: none)"]
