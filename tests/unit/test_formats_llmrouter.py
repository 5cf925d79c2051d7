"""LLMRouter outcome set: the rules on a small made-up copy of its layout, and the counts on the real folder."""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import HandbookVersion, Query, Trajectory
from skillorchestra_core.errors import ImportRejected
from skillorchestra_core.formats.llmrouter import (
    COMPLETION_BUDGET,
    import_llmrouter,
    prompt_tokens,
    read_llmrouter,
)
from skillorchestra_core.formats.rows import MalformedFile, hash_split, short_hash
from skillorchestra_core.handbook.store import load_version

MINI = Path(__file__).resolve().parent.parent / "fixtures" / "formats" / "llmrouter_mini"


@pytest.fixture
def db_url(any_db_url):
    """Every test here that imports into a database does so on SQLite and on PostgreSQL."""
    return any_db_url


def run_import(url, directory, name="lr", **kw):
    with session(url) as s:
        report = import_llmrouter(s, directory, name, **kw)
        s.commit()
    return report


def test_mini_rules_dedup_labels_tokens_prices(db_url):
    parsed, hints = read_llmrouter(MINI)
    by_q = {}
    for r in parsed.rows:
        by_q.setdefault(r.query_id, []).append(r)
    assert len(by_q) == 5 and len(parsed.rows) == 15  # question two is in both files: kept once
    train = json.loads((MINI / "dcrouter_train.json").read_text())
    dup = train[1]["question"]
    rows = {r.agent: r for r in by_q[short_hash(dup)]}
    assert {a: r.score for a, r in rows.items()} == train[1]["scores"]  # the train record wins
    assert rows["small-a"].task == "mmlu"  # first label in train-then-test order (test says openbook_qa)
    assert rows["small-a"].split == hash_split(dup) and rows["small-a"].mode == "answer"
    assert rows["small-a"].prompt_tokens == math.ceil(len(dup) / 4) == prompt_tokens(dup)
    assert rows["small-a"].completion_tokens == COMPLETION_BUDGET["mmlu"]
    assert rows["small-a"].cost_usd == pytest.approx((prompt_tokens(dup) * 0.2 + 16 * 0.4) / 1e6)
    assert rows["mystery-model"].cost_usd is None  # no price card: C(A, mode) falls back to litellm's map
    assert hints["big-b"].model == "vendor/big-b" and hints["big-b"].input_price_per_m == 0.9
    assert any("1 question(s) appear in both" in n for n in parsed.notes)
    assert any("no price card in default_llm.json for: mystery-model" in n for n in parsed.notes)


def test_mini_import_makes_task_skills_and_agents_with_prices(db_url):
    report = run_import(db_url, MINI)
    assert (report.result.queries_added, report.result.trajectories_added) == (5, 15)
    with session(db_url) as s:
        content = load_version(s, "lr").content
    assert sorted(content.skills) == ["answer.gsm8k", "answer.mbpp", "answer.mmlu", "answer.natural_qa"]
    small = content.agents[("small-a", "answer")]
    assert (small.model, small.input_price_per_m, small.output_price_per_m, small.price_source) == (
        "vendor/small-a", 0.2, 0.4, "card")
    assert ("unscored-c", "answer") not in content.agents
    again = run_import(db_url, MINI)
    assert again.result.created_version is False and again.result.trajectories_skipped == 15


def test_no_skills_without_the_flag(db_url):
    run_import(db_url, MINI, skills_from_task=False)
    with session(db_url) as s:
        assert load_version(s, "lr").content.skills == {}


def test_bad_records_are_reported_with_file_and_record(db_url, tmp_path):
    folder = tmp_path / "lr"
    shutil.copytree(MINI, folder)
    test = json.loads((folder / "dcrouter_test.json").read_text())
    test.append({"question": "", "scores": {"small-a": 1}})
    test.append({"question": "Another made-up question", "scores": {"small-a": 2, "big-b": "x"}})
    (folder / "dcrouter_test.json").write_text(json.dumps(test))
    with pytest.raises(ImportRejected) as err:
        run_import(db_url, folder)
    assert [(b.line, b.unit) for b in err.value.bad_rows] == [(3, "record"), (4, "record")]
    assert f"{folder / 'dcrouter_test.json'} record 3: missing question text" in str(err.value)
    assert "score of 'small-a' 2 is outside [0, 1]" in str(err.value)
    with session(db_url) as s:
        assert s.exec(select(func.count()).select_from(Query)).one() == 0
    report = run_import(db_url, folder, skip_bad_rows=True)
    assert report.result.queries_added == 5 and len(report.skipped) == 2


def test_malformed_folder(tmp_path):
    with pytest.raises(MalformedFile, match="not a directory"):
        read_llmrouter(tmp_path / "missing")
    folder = tmp_path / "lr"
    shutil.copytree(MINI, folder)
    (folder / "dcrouter_train.json").write_text('[{"question": "q", "scores": {"a": 1}},\n  oops]')
    with pytest.raises(MalformedFile, match=r"dcrouter_train.json:2: invalid JSON"):
        read_llmrouter(folder)


# --- the real data (../shared/data/llmrouter) ----------------------------------------------------------------------
# SQLite only: 54,000 rows make these the slowest import tests, and the mini set above runs the same code on both.

def test_real_set_counts_and_split(sqlite_db_url, llmrouter_dir):
    report = run_import(sqlite_db_url, llmrouter_dir)
    assert report.result.queries_added == 5989 and report.result.trajectories_added == 5989 * 9
    with session(sqlite_db_url) as s:
        content = load_version(s, "lr").content
        splits = Counter(s.exec(select(Query.split)).all())
        tasks = Counter(s.exec(select(Query.task)).all())
        n_traj = s.exec(select(func.count()).select_from(Trajectory)).one()
        priced = s.exec(select(func.count()).select_from(Trajectory).where(Trajectory.cost_usd.is_not(None))).one()
    assert len(content.agents) == 9 and len(content.skills) == 14 and len(tasks) == 14
    assert n_traj == priced == 53901  # every scored model has a price card
    total = sum(splits.values())
    for split, share in (("train", 0.70), ("val", 0.10), ("test", 0.20)):
        assert abs(splits[split] / total - share) < 0.03, splits
    assert sum(1 for (q, m, k) in content.attributions) == 5989  # one label per question


def test_real_set_is_deterministic_and_reimport_is_a_no_op(sqlite_db_url, llmrouter_dir):
    a, _ = read_llmrouter(llmrouter_dir)
    b, _ = read_llmrouter(llmrouter_dir)
    assert [(r.query_id, r.agent, r.split, r.task, r.score) for r in a.rows] == [
        (r.query_id, r.agent, r.split, r.task, r.score) for r in b.rows]
    assert len({r.query_id for r in a.rows}) == 5989  # the short hash has no collision
    run_import(sqlite_db_url, llmrouter_dir)
    again = run_import(sqlite_db_url, llmrouter_dir)
    assert again.result.created_version is False and again.result.trajectories_skipped == 53901
    with session(sqlite_db_url) as s:
        assert s.exec(select(func.count()).select_from(HandbookVersion)).one() == 1
