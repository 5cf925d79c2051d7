"""SkillOrchestra exploration files (inference_results.jsonl): both layouts, dedup, prices, bad lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query, Trajectory
from skillorchestra_core.errors import ImportRejected
from skillorchestra_core.evidence.costs import default_price_card
from skillorchestra_core.formats.exploration import import_exploration, read_exploration
from skillorchestra_core.formats.rows import MalformedFile
from skillorchestra_core.handbook.store import load_version

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "formats"


@pytest.fixture
def db_url(any_db_url):
    """Every test here that imports into a database does so on SQLite and on PostgreSQL."""
    return any_db_url


def run_import(url, path, name="ex", **kw):
    with session(url) as s:
        report = import_exploration(s, path, name, **kw)
        s.commit()
    return report


def test_explore_layout_last_sample_wins_and_scores_follow_model_succeeded():
    parsed = read_exploration(FIX / "exploration_explore.jsonl")
    rows = {(r.query_id, r.agent): r for r in parsed.rows}
    assert len(parsed.rows) == 6 and {q for q, _ in rows} == {"0", "1"}
    local = rows[("0", "my-local-model")]
    assert local.score == 1.0 and local.line == 3  # line 1 said False; line 3 repeats sample 0 and wins
    assert rows[("1", "qwen2.5-7b-instruct")].score == 0.0
    qwen = rows[("0", "qwen2.5-7b-instruct")]
    assert (qwen.prompt_tokens, qwen.completion_tokens) == (30, 5)
    assert qwen.cost_usd == pytest.approx((30 * 0.0375 + 5 * 0.30) / 1e6)
    assert qwen.response == "Herman Melville." and qwen.ground_truth == "Herman Melville"
    assert rows[("1", "gpt-4o-mini")].ground_truth == '["100", "100 degrees"]'
    assert qwen.mode == "answer" and qwen.task == "literature"
    assert any("1 line(s) repeat an earlier sample_id" in n for n in parsed.notes)


def test_evaluate_layout_success_threshold_is_0_7():
    parsed = read_exploration(FIX / "exploration_evaluate.jsonl", mode="search")
    scores = {(r.query_id, r.agent): r.score for r in parsed.rows}
    assert scores == {("s-10", "llama3.1-8b-instruct"): 1.0, ("s-10", "mistral-7b-instruct"): 0.0,
                      ("s-11", "llama3.1-8b-instruct"): 1.0,  # exact_match 0.75 >= 0.7
                      ("s-11", "mistral-7b-instruct"): 0.0}  # 0.5 < 0.7
    assert {r.mode for r in parsed.rows} == {"search"}


def test_import_prices_pool_keys_from_the_reference_table_and_others_from_litellm(db_url):
    report = run_import(db_url, FIX / "exploration_explore.jsonl", skills_from_task=True)
    assert report.result.trajectories_added == 6
    with session(db_url) as s:
        content = load_version(s, "ex").content
    qwen = content.agents[("qwen2.5-7b-instruct", "answer")]
    assert (qwen.model, qwen.input_price_per_m, qwen.output_price_per_m, qwen.price_source) == (
        "Qwen/Qwen2.5-7B-Instruct", 0.0375, 0.30, "card")
    mini = content.agents[("gpt-4o-mini", "answer")]
    card = default_price_card("gpt-4o-mini")
    assert card is not None  # litellm's bundled map knows gpt-4o-mini
    assert (mini.input_price_per_m, mini.output_price_per_m, mini.price_source) == (*card, "litellm")
    assert content.agents[("my-local-model", "answer")].price_source == "unknown"
    assert sorted(content.skills) == ["answer.literature", "answer.science"]
    assert run_import(db_url, FIX / "exploration_explore.jsonl", skills_from_task=True).result.created_version is False


def test_mode_option_and_bad_mode(db_url):
    run_import(db_url, FIX / "exploration_evaluate.jsonl", mode="search")
    with session(db_url) as s:
        assert set(s.exec(select(Trajectory.mode)).all()) == {"search"}
    with pytest.raises(MalformedFile, match="mode 'a.b'"):
        read_exploration(FIX / "exploration_evaluate.jsonl", mode="a.b")


def test_bad_lines_are_all_reported_and_nothing_is_written(db_url):
    with pytest.raises(ImportRejected) as err:
        run_import(db_url, FIX / "exploration_bad.jsonl")
    bad = {b.line: b.reason for b in err.value.bad_rows}
    assert sorted(bad) == [2, 3, 4, 5, 6, 7]
    assert bad[2].startswith("invalid JSON")
    assert "sample_id" in bad[3]
    assert bad[4] == "missing question"
    assert "model_succeeded of 'x' must be true/false" in bad[5]
    assert "prompt_tokens of 'x' must not be negative" in bad[6]
    assert "no model outcomes" in bad[7]
    with session(db_url) as s:
        assert s.exec(select(func.count()).select_from(Query)).one() == 0
    report = run_import(db_url, FIX / "exploration_bad.jsonl", skip_bad_rows=True)
    assert report.result.trajectories_added == 3 and len(report.skipped) == 6


def test_empty_and_non_utf8(tmp_path):
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    with pytest.raises(MalformedFile, match="file is empty"):
        read_exploration(empty)
    latin = tmp_path / "l.jsonl"
    latin.write_bytes(b'{"sample_id": 1}\n{"sample_id": 2, "question": "caf\xe9"}\n')
    with pytest.raises(MalformedFile, match=r"l.jsonl:2: not UTF-8"):
        read_exploration(latin)


def test_skills_from_task_without_labels_says_so(db_url):
    report = run_import(db_url, FIX / "exploration_evaluate.jsonl", skills_from_task=True)
    assert "--skills-from-task: no row has a task label, so no skill was made" in report.lines()
    with session(db_url) as s:
        assert load_version(s, "ex").content.skills == {}
