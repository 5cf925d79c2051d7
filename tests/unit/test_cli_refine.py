"""The refinement commands: detect, propose, review, versions, diff, restore, members (JSON contracts)."""

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from skillorchestra_core.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
MERGE = ["answer.entities.capitals", "answer.entities.currencies"]


def _run(db, *args):
    result = runner.invoke(app, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_detect_propose_review_versions_diff_and_restore(demo_db_url):
    db = demo_db_url
    found = json.loads(_run(db, "refine", "demo-qa", "detect", "--json"))
    cands = found["candidates"]
    assert found["action"] == "detect" and cands[0]["skills"] == ["answer.math.word_problems"]
    assert {"id", "kind", "skills", "statistic", "status", "row_version", "evidence", "proposal"} <= set(cands[0])
    assert cands[0]["evidence"]["agents"][0]["successes"] and cands[0]["status"] == "pending"
    proposed = json.loads(_run(db, "refine", "demo-qa", "propose", "--json"))["candidates"]
    assert all(c["proposal_status"] == "ok" and c["proposal"]["source"] == "offline proposal" for c in proposed)
    split_id = cands[0]["id"]
    merge_id = [c["id"] for c in cands if c["skills"] == MERGE][0]

    assert "-> v2" in _run(db, "review", "approve", str(split_id), "--as", "alice")
    assert "rejected" in _run(db, "review", "reject", str(merge_id), "--reason", "keep apart", "--as", "bob")
    listed = {c["id"]: c for c in json.loads(_run(db, "review", "list", "--json"))}
    assert (listed[split_id]["status"], listed[split_id]["decided_by"], listed[split_id]["result_version"]) == (
        "approved", "alice", 2)
    assert (listed[merge_id]["status"], listed[merge_id]["decision_note"]) == ("rejected", "keep apart")

    assert "v2 (from v1)" in _run(db, "versions", "demo-qa")
    d = json.loads(_run(db, "diff", "demo-qa", "1", "2", "--json"))
    assert len(d["skills_added"]) == 2 and d["skills_removed"] == [] and d["val_queries"] > 0
    assert d["routing"] and {"query_id", "text", "before", "after"} <= set(d["routing"][0])
    assert "restored v1 as v3" in _run(db, "restore", "demo-qa", "1", "--as", "alice")
    back = json.loads(_run(db, "diff", "demo-qa", "1", "3", "--json"))
    assert back["skills_added"] == back["skills_removed"] == back["routing"] == []


def test_members_and_denied_decisions_are_one_line_errors(demo_db_url):
    _run(demo_db_url, "refine", "demo-qa", "detect")
    _run(demo_db_url, "members", "add", "alice", "--role", "admin")
    assert "carol: viewer" in _run(demo_db_url, "members", "add", "carol", "--role", "viewer", "--as", "alice")
    code = ("import sys; sys.argv = ['skillorchestra', '--db', %r, 'review', 'approve', '1', '--as', 'carol'];"
            "from skillorchestra_core.cli import main; main()") % demo_db_url
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "error: 'carol' is a viewer and may not approve a candidate (needs the reviewer role)"]
