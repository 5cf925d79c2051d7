"""Live validation through the real litellm path against the loopback fake server: cost cap, resume, scoring."""

import os

import pytest
from sqlmodel import select
from support.fake_openai import FakeOpenAI
from support.handbooks import QA_HINTS

from skillorchestra_core.db import session
from skillorchestra_core.db.selection_tables import LiveResult, ValidationRun
from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.llm import LiteLlmClient
from skillorchestra_core.selection.live import LiveOptions, execute_live_run, plan_live_run
from skillorchestra_core.selection.scoring import normalise, score_answer


def _build(s) -> None:
    rows, line = [], 0
    for q in range(30):
        split = "train" if q < 10 else "val"
        truth = "4" if q % 2 else "Paris"
        for agent in ("big", "small"):
            line += 1
            rows.append(OutcomeRow(line=line, query_id=f"q{q}", query=f"question number {q} about topic {q % 3}",
                                   agent=agent, score=float(agent == "big" or q % 3 == 0), task=f"t{q % 3}",
                                   split=split, ground_truth=truth, cost_usd=0.01 if agent == "big" else 0.001))
    ingest_outcomes(s, "live-qa", rows, source_label="test", skills_from_task=True,
                    agent_hints={k: QA_HINTS[k] for k in ("big", "small")}, synthetic=True)


def test_a_cost_cap_stops_the_run_and_a_resume_finishes_it(db_url):
    with session(db_url) as s:
        _build(s)
        s.commit()
        run_id = plan_live_run(s, "live-qa", 1, 0.0, split="val")
        s.commit()
    with FakeOpenAI(default="The answer is 4.") as server:
        client = LiteLlmClient("openai/big", api_base=server.base_url, api_key="sk-test", retries=0, timeout_s=10)
        seen = []
        first = execute_live_run(lambda: session(db_url), run_id, client,
                                 LiveOptions(concurrency=2, cost_cap_usd=1e-9), progress=seen.append)
        assert first.status == "stopped" and 1 <= first.done <= 2 and first.spent_usd > 0
        assert [p.done for p in seen] == list(range(1, first.done + 1))
        calls_before = len(server.requests)
        last = execute_live_run(lambda: session(db_url), run_id, client, LiveOptions(concurrency=3))
        assert last.status == "done" and last.done == last.total == 20
        assert len(server.requests) == calls_before + 20 - first.done  # nothing is asked twice
    with session(db_url) as s:
        run = s.get(ValidationRun, run_id)
        rows = s.exec(select(LiveResult).where(LiveResult.run_id == run_id)).all()
    assert run.status == "done" and run.kind == "live" and run.n_scored == 20
    assert run.accuracy == pytest.approx(0.5)  # the fake always answers 4: right on the ten "4" questions
    big, small = QA_HINTS["big"], QA_HINTS["small"]
    card = {"big": (big.input_price_per_m, big.output_price_per_m),
            "small": (small.input_price_per_m, small.output_price_per_m)}
    for r in rows:  # cost from usage (12 prompt, 7 completion tokens) x the chosen agent's price card
        assert r.cost_usd == pytest.approx((12 * card[r.agent][0] + 7 * card[r.agent][1]) / 1e6)
    assert sum(run.calls_by_agent.values()) == 20


@pytest.mark.parametrize("answer, truth, want", [
    ("The answer is Paris.", "paris", 1.0), ("1,000", "1000", 1.0), ("$3.50", "3.5", 1.0), ("1", "1945", 0.0),
    ("Final answer: Mount  Everest!", "mount everest", 1.0), ("x", '["y", "X"]', 1.0), ("42", None, None),
    ("3.5000001", "3.5", 1.0), ("3.6", "3.5", 0.0), ("the Beatles", "Beatles", 1.0),
])
def test_the_documented_normaliser(answer, truth, want):
    assert score_answer(answer, truth) == want


def test_normalise_keeps_numbers_and_drops_punctuation():
    assert normalise("  -2.5, said the MAN. ") == "-2.5 said man"
    assert normalise("Hello,   World!") == "hello world"


def test_cli_live_stops_at_the_cap_and_resumes(db_url, monkeypatch):
    from typer.testing import CliRunner

    from skillorchestra_core.cli import app
    from skillorchestra_core.settings import get_settings

    with session(db_url) as s:
        _build(s)
        s.commit()
    with FakeOpenAI(default="Paris") as server:
        monkeypatch.setenv("SKILLORCHESTRA_LLM_BACKEND", "litellm")
        monkeypatch.setenv("SKILLORCHESTRA_LLM_API_BASE", server.base_url)
        monkeypatch.setenv("SKILLORCHESTRA_LLM_API_KEY", "sk-test")
        get_settings.cache_clear()
        try:
            runner = CliRunner()
            first = runner.invoke(app, ["--db", db_url, "live", "live-qa", "--lambda", "0", "--cap", "1e-9",
                                        "--concurrency", "1"])
            assert first.exit_code == 0, first.output
            assert "stopped, 1/20 queries" in first.output and "--resume 1" in first.output
            done = runner.invoke(app, ["--db", db_url, "live", "live-qa", "--resume", "1"])
            assert done.exit_code == 0, done.output
            assert "done, 20/20 queries" in done.output
        finally:
            get_settings.cache_clear()
    with session(db_url) as s:
        assert s.get(ValidationRun, 1).accuracy == pytest.approx(0.5)


def _planned(db_url) -> int:
    with session(db_url) as s:
        _build(s)
        s.commit()
        run_id = plan_live_run(s, "live-qa", 1, 0.0, split="val")
        s.commit()
    return run_id


def _set_owner(db_url, run_id, pid, host_name, beat_ago_s: float | None) -> str:
    from datetime import timedelta

    from skillorchestra_core.db.models import utcnow
    from skillorchestra_core.selection.runs import run_status

    with session(db_url) as s:
        run = s.get(ValidationRun, run_id)
        run.owner_pid, run.owner_host = pid, host_name
        run.heartbeat_at = None if beat_ago_s is None else utcnow() - timedelta(seconds=beat_ago_s)
        s.add(run)
        s.commit()
        return run_status(s.get(ValidationRun, run_id))


def test_a_running_live_run_reads_interrupted_once_its_owner_is_gone(db_url):
    import subprocess

    from skillorchestra_core.processes import STALE_S, host

    run_id = _planned(db_url)
    dead = subprocess.Popen(["true"])
    dead.wait()
    me = host()
    assert _set_owner(db_url, run_id, os.getpid(), me, 1.0) == "running"  # the planner itself, beating
    assert _set_owner(db_url, run_id, dead.pid, me, 1.0) == "interrupted"  # killed: its pid is gone at once
    assert _set_owner(db_url, run_id, os.getpid(), me, STALE_S + 5) == "interrupted"  # alive but hung: no beat
    assert _set_owner(db_url, run_id, dead.pid, "another-host", 1.0) == "running"  # a pid of elsewhere: beat counts
    assert _set_owner(db_url, run_id, dead.pid, "another-host", STALE_S + 5) == "interrupted"


def test_a_run_still_executed_elsewhere_cannot_be_resumed_twice(db_url):
    import subprocess

    from skillorchestra_core.errors import StudioError
    from skillorchestra_core.processes import host

    run_id = _planned(db_url)
    other = subprocess.Popen(["sleep", "60"])
    try:
        _set_owner(db_url, run_id, other.pid, host(), 1.0)
        client = LiteLlmClient("openai/big", api_base="http://127.0.0.1:9", api_key="sk-test", retries=0)
        with pytest.raises(StudioError, match=f"being executed by process {other.pid}"):
            execute_live_run(lambda: session(db_url), run_id, client, LiveOptions())
    finally:
        other.kill()
        other.wait()
    with session(db_url) as s:
        assert s.exec(select(LiveResult).where(LiveResult.run_id == run_id)).all() == []


def test_cli_runs_lists_an_interrupted_live_run_with_how_to_resume_it(db_url):
    import json
    import subprocess

    from typer.testing import CliRunner

    from skillorchestra_core.cli import app
    from skillorchestra_core.processes import host

    run_id = _planned(db_url)
    dead = subprocess.Popen(["true"])
    dead.wait()
    _set_owner(db_url, run_id, dead.pid, host(), 1.0)
    runner = CliRunner()
    out = runner.invoke(app, ["--db", db_url, "runs", "live-qa", "--kind", "live"])
    assert out.exit_code == 0, out.output
    assert f"#{run_id} live v1 skill lambda 0 val: interrupted, 0/20 queries" in out.output
    assert f"resume with: skillorchestra live live-qa --resume {run_id}" in out.output
    rows = json.loads(runner.invoke(app, ["--db", db_url, "runs", "live-qa", "--json"]).output)
    assert [(r["id"], r["status"], r["answered"]) for r in rows] == [(run_id, "interrupted", 0)]
