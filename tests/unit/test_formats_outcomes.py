"""Outcomes long format: CSV, JSONL and Parquet, bad rows with their lines, skip, idempotence, malformed files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Handbook, HandbookVersion, Query, Trajectory
from skillorchestra_core.errors import ImportRejected
from skillorchestra_core.formats.outcomes import import_outcomes, read_outcomes
from skillorchestra_core.formats.rows import MalformedFile, hash_split
from skillorchestra_core.handbook.store import load_version

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "formats"


@pytest.fixture
def db_url(any_db_url):
    """Every test here that imports into a database does so on SQLite and on PostgreSQL."""
    return any_db_url


def counts(url: str) -> dict[str, int]:
    with session(url) as s:
        return {m.__name__: s.exec(select(func.count()).select_from(m)).one()
                for m in (Handbook, HandbookVersion, Query, Trajectory)}


def run_import(url: str, path, handbook: str = "hb", **kw):
    """Like the CLI: one session, commit only on success."""
    with session(url) as s:
        report = import_outcomes(s, path, handbook, **kw)
        s.commit()
    return report


def test_csv_good_file_imports_every_field(db_url):
    report = run_import(db_url, FIX / "outcomes_good.csv", skills_from_task=True)
    r = report.result
    assert (report.rows, r.queries_added, r.trajectories_added, r.version, r.created_version) == (8, 4, 8, 1, True)
    with session(db_url) as s:
        q2 = s.exec(select(Query).where(Query.ext_id == "q2")).one()
        assert q2.text == "Name the capital of France,\nin one word." and q2.split == "val" and q2.task == "geography"
        assert q2.dataset == "outcomes_good" and q2.ground_truth == "Paris"
        q3 = s.exec(select(Query).where(Query.ext_id == "q3")).one()
        assert q3.split == hash_split(q3.text)  # no split given: the hash rule
        t = s.exec(select(Trajectory).join(Query).where(Query.ext_id == "q1", Trajectory.agent == "alpha")).one()
        assert (t.score, t.prompt_tokens, t.completion_tokens, t.cost_usd, t.latency_s, t.response) == (
            1.0, 12, 3, 2e-05, 0.4, "4")
        half = s.exec(select(Trajectory.score).join(Query).where(Query.ext_id == "q3", Trajectory.agent == "alpha"))
        assert half.one() == 0.5
        content = load_version(s, "hb").content
    assert sorted(content.skills) == ["answer.arithmetic", "answer.geography"]
    assert sorted(n for n, _ in content.agents) == ["alpha", "beta"]


def test_jsonl_good_file_with_success_bools_modes_and_split_alias(db_url):
    report = run_import(db_url, FIX / "outcomes_good.jsonl", dataset="mine")
    assert report.rows == 4 and report.result.queries_added == 2
    with session(db_url) as s:
        rows = {(q.ext_id, t.agent): (t.score, t.mode, q.split, q.dataset, q.ground_truth)
                for t, q in s.exec(select(Trajectory, Query).join(Query))}
    assert rows[("j1", "alpha")][:1] == (1.0,) and rows[("j1", "beta")][0] == 0.0
    assert rows[("2", "alpha")] == (1.0, "code", "val", "mine", '["yes", "true"]')  # int id -> "2"
    assert rows[("2", "beta")][0] == 0.25


def test_parquet_good_file(db_url, tmp_path):
    df = pd.read_csv(FIX / "outcomes_good.csv", keep_default_na=False, dtype=str)
    df["score"] = df["score"].astype(float)
    df["prompt_tokens"] = pd.to_numeric(df["prompt_tokens"]).astype("Int64")
    path = tmp_path / "outcomes.parquet"
    df.to_parquet(path)
    report = run_import(db_url, path)
    assert report.rows == 8 and report.result.trajectories_added == 8


def test_csv_bad_rows_are_all_reported_with_physical_lines_and_nothing_is_written(db_url):
    with pytest.raises(ImportRejected) as err:
        run_import(db_url, FIX / "outcomes_bad.csv")
    bad = {b.line: b.reason for b in err.value.bad_rows}
    assert sorted(bad) == [3, 4, 5, 6, 7, 8, 11, 12, 13]
    assert "score 1.5 is outside [0, 1]" in bad[3]
    assert "missing query_id" in bad[4]
    assert "missing agent" in bad[5]
    assert "success must be true/false" in bad[6]
    assert "unknown split 'holdout'" in bad[7]
    assert "score must be a number" in bad[8] and "prompt_tokens must not be negative" in bad[8]  # multi-line row
    assert "cost_usd must not be negative" in bad[11]
    assert "duplicate attempt of agent 'alpha' on query 'q1'" in bad[12] and "line 2" in bad[12]
    assert "has 9 field(s), the header has 8" in bad[13]
    assert f"{FIX / 'outcomes_bad.csv'}:3: score 1.5" in str(err.value)
    assert counts(db_url) == {"Handbook": 0, "HandbookVersion": 0, "Query": 0, "Trajectory": 0}


def test_jsonl_bad_rows(db_url):
    with pytest.raises(ImportRejected) as err:
        run_import(db_url, FIX / "outcomes_bad.jsonl")
    bad = {b.line: b.reason for b in err.value.bad_rows}
    assert sorted(bad) == [2, 3, 4, 5, 6, 7]
    assert bad[2].startswith("invalid JSON")
    assert "expected a JSON object, got list" in bad[3]
    assert "success must be true/false" in bad[4]
    assert "completion_tokens must not be negative" in bad[5] and "latency_s must be a number" in bad[5]
    assert "different text than on line 1" in bad[6]
    assert "mode 'code.v2'" in bad[7]
    assert counts(db_url)["Trajectory"] == 0


def test_parquet_bad_rows_say_row(db_url, tmp_path):
    path = tmp_path / "bad.parquet"
    pd.DataFrame({"query_id": ["a", "b", "c"], "query": ["x", "y", "z"], "agent": ["m", "m", None],
                  "score": [0.5, -0.1, 1.0]}).to_parquet(path)
    with pytest.raises(ImportRejected) as err:
        run_import(db_url, path)
    assert [(b.line, b.unit) for b in err.value.bad_rows] == [(2, "row"), (3, "row")]
    assert f"{path} row 2: score -0.1 is outside [0, 1]" in str(err.value)
    assert f"{path} row 3: missing agent" in str(err.value)
    assert counts(db_url)["Query"] == 0


def test_skip_bad_rows_imports_the_rest_and_lists_the_skipped(db_url):
    report = run_import(db_url, FIX / "outcomes_bad.csv", skip_bad_rows=True)
    assert report.rows == 2 and report.result.trajectories_added == 2
    assert [b.line for b in report.skipped] == [3, 4, 5, 6, 7, 8, 11, 12, 13]
    text = "\n".join(report.lines())
    assert "skipped 9 bad row(s)" in text and f"{FIX / 'outcomes_bad.csv'}:7: unknown split 'holdout'" in text
    with session(db_url) as s:
        ids = sorted(s.exec(select(Query.ext_id)).all())
    assert ids == ["q1", "q6"]


def test_reimport_is_idempotent(db_url):
    first = run_import(db_url, FIX / "outcomes_good.csv", skills_from_task=True)
    before = counts(db_url)
    second = run_import(db_url, FIX / "outcomes_good.csv", skills_from_task=True)
    assert second.result.created_version is False and second.result.version == first.result.version
    assert (second.result.trajectories_added, second.result.trajectories_skipped) == (0, 8)
    assert counts(db_url) == before


def test_contradicting_a_stored_outcome_is_rejected(db_url, tmp_path):
    run_import(db_url, FIX / "outcomes_good.csv")
    changed = tmp_path / "changed.csv"
    text = (FIX / "outcomes_good.csv").read_text().replace("q1,What is 2 + 2?,alpha,1,", "q1,What is 2 + 2?,alpha,0,")
    changed.write_text(text)
    before = counts(db_url)
    with pytest.raises(ImportRejected, match="append-only"):
        run_import(db_url, changed)
    assert counts(db_url) == before


def test_long_query_reimport_makes_no_new_version(db_url, tmp_path):
    # A task whose only query is longer than the 300-character example cut-off.
    path = tmp_path / "long.jsonl"
    long_q = "Explain in detail " + "why " * 120
    path.write_text("\n".join(json.dumps({"query_id": "L", "query": long_q, "agent": a, "score": 1, "task": "t"})
                              for a in ("x", "y")) + "\n")
    run_import(db_url, path, skills_from_task=True)
    again = run_import(db_url, path, skills_from_task=True)
    assert again.result.created_version is False


def test_split_and_task_given_on_one_row_fill_the_others(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("query_id,query,agent,score,split,task\nq,text,a,1,test,t1\nq,text,b,0,,\n")
    rows = read_outcomes(path).rows
    assert [(r.split, r.task) for r in rows] == [("test", "t1"), ("test", "t1")]


def test_conflicting_split_or_task_within_a_query_is_a_bad_row(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("query_id,query,agent,score,split,task\nq,text,a,1,test,t1\nq,text,b,0,train,t2\n")
    with pytest.raises(ImportRejected) as err:
        read_outcomes(path)
    (bad,) = err.value.bad_rows
    assert bad.line == 3 and "split 'train' here but 'test' on line 2" in bad.reason and "task 't2'" in bad.reason


def test_score_wins_over_success_and_success_alone_is_enough(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("query_id,query,agent,score,success\nq,t,a,0.25,true\nq,t,b,,no\nq,t,c,,\n")
    with pytest.raises(ImportRejected) as err:
        read_outcomes(path)
    assert [(b.line, b.reason) for b in err.value.bad_rows] == [(4, "missing score (or success)")]
    rows = read_outcomes(path, skip_bad_rows=True).rows
    assert [r.score for r in rows] == [0.25, 0.0]


# The file is refused while it is read, before any database work: one engine is enough.
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.csv", b"", "file is empty"),
        ("blank.jsonl", b"\n\n  \n", "file is empty"),
        ("latin1.csv", "query_id,query,agent,score\nq,caf\xe9,a,1\n".encode("latin-1"), ":2: not UTF-8"),
        ("nocols.csv", b"query_id,text,agent,score\nq,t,a,1\n", ":1: missing required column(s) query"),
        ("noscore.csv", b"query_id,query,agent\nq,t,a\n", "missing required column(s) score (or success)"),
        ("header_only.csv", b"query_id,query,agent,score\n", "no data rows"),
        ("data.xlsx", b"whatever", "unknown extension '.xlsx'"),
        ("dupe.csv", b"query_id,query,agent,score,score\nq,t,a,1,1\n", "duplicate column(s) score"),
        ("broken.parquet", b"PAR1 not really", "not a readable Parquet file"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path, sqlite_db_url, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(MalformedFile) as err:
        run_import(sqlite_db_url, path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(MalformedFile, match="no such file"):
        read_outcomes(tmp_path / "nope.csv")


def test_unknown_columns_are_named_in_the_report(db_url, tmp_path):
    path = tmp_path / "extra.csv"
    shutil.copy(FIX / "outcomes_good.csv", path)
    df = pd.read_csv(path, dtype=str, keep_default_na=False).assign(notes="n")
    df.to_csv(path, index=False)
    report = run_import(db_url, path)
    assert "ignored unknown column(s): notes" in report.lines()
