"""`skillorchestra learn` and `feedback`: the JSON contract, the text summary, and one-line errors."""

import json
import subprocess
import sys

from support.learning import NAME, build_contrast
from typer.testing import CliRunner

from skillorchestra_core.cli import app
from skillorchestra_core.db import session

runner = CliRunner()


def test_learn_json_lists_the_new_version_skills_with_provenance_and_attributions(db_url):
    with session(db_url) as s:
        build_contrast(s)
        s.commit()
    out = runner.invoke(app, ["--db", db_url, "learn", NAME, "--ignore-task-labels", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)  # strict JSON: no NaN
    assert report["version"] == 2 and report["parent"] == 1 and report["created"] and report["method"] == "offline"
    skills = report["skills_added"]["answer"]
    assert skills and all(k["provenance"]["source"] == "offline" for k in skills)
    assert report["attributed"] == {"offline:tfidf-kmeans": 70} and report["heldout_attributed"] == 30
    shown = json.loads(runner.invoke(app, ["--db", db_url, "show", NAME, "--json"]).output)
    by_key = {k["key"]: k for k in shown["skills"]}
    assert all(by_key[k["key"]]["provenance"] == k["provenance"] for k in skills)
    again = runner.invoke(app, ["--db", db_url, "learn", NAME])
    assert again.exit_code == 0 and "contrast: unchanged, v2 already holds" in again.output
    assert "every train query is already attributed" in again.output


def test_learn_and_feedback_errors_are_one_line(db_url):
    with session(db_url) as s:
        build_contrast(s)
        s.commit()
    for args, msg in ((["learn", "nope"], "no handbook named 'nope'"),
                      (["feedback", "42", "--score", "1"], "no decision trace with id 42"),
                      (["feedback", "42", "--score", "2"], "between 0 and 1")):
        p = subprocess.run([sys.executable, "-c", "from skillorchestra_core.cli import main; main()", "--db", db_url,
                            *args], capture_output=True, text=True)
        assert p.returncode == 1 and p.stderr.strip().startswith("error: ") and msg in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
