"""The production API (HandbookRouter), exports, the LiteLLM Router integration and the `route` CLI."""

import asyncio
import json
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest
from typer.testing import CliRunner

from skillorchestra_core.routing.api import DatabaseTraceSink, HandbookRouter, JsonlTraceSink
from skillorchestra_core.routing.litellm_integration import HandbookRoutingStrategy, query_text

ROME = "Which emperor ruled Rome in the year 2500?"


@pytest.fixture
def built(any_mini_db_url):
    """A database holding mini-qa and mini-agents, on SQLite and on PostgreSQL."""
    return any_mini_db_url


def test_from_database_routes_without_touching_the_database_again(built, monkeypatch):
    router = HandbookRouter.from_database("mini-qa", db_url=built, lam=0.0)
    import skillorchestra_core.db.engine as engine

    monkeypatch.setattr(engine, "get_engine", lambda *a, **k: pytest.fail("routing opened the database"))
    trace = router.route(ROME)
    assert trace.chosen_agent == "big" and trace.version == 1 and trace.id is None
    assert router.choose(ROME, lam=1.0) in ("mid", "small")
    assert router.agents == {"answer": ["big", "mid", "small"]}
    assert router.route_batch([ROME]).agents == ["big"]


def test_snapshot_export_round_trip_gives_identical_decisions(built, tmp_path):
    router = HandbookRouter.from_database("mini-agents", db_url=built)
    path = router.export(tmp_path / "snap.json")
    again = HandbookRouter.from_export(path)
    q = "How many years passed between the founding of Bera and the death of Hera?"
    a, b = router.route(q), again.route(q)
    assert [s.model_dump() for s in a.steps] == [s.model_dump() for s in b.steps]
    assert (b.handbook, b.version, b.content_hash) == (a.handbook, a.version, a.content_hash)


def test_from_export_reads_the_canonical_handbook_json(built, tmp_path):
    from skillorchestra_core.db import session
    from skillorchestra_core.formats.export import export_document

    with session(built) as s:
        doc, _ = export_document(s, "mini-qa", "skillorchestra")
    router = HandbookRouter.from_export(doc, lam=0.0)
    assert router.model.handbook == "mini-qa" and router.model.version == 1
    trace = router.route(ROME)
    assert trace.chosen_agent == "big" and trace.steps[0].active_skills[0].skill == "answer.history"


def test_a_bad_export_is_a_clear_error(tmp_path):
    from skillorchestra_core.errors import StudioError

    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(StudioError, match="unrecognised"):
        HandbookRouter.from_export(tmp_path / "x.json")
    with pytest.raises(StudioError, match="cannot read"):
        HandbookRouter.from_export(tmp_path / "missing.json")


def test_trace_sinks(built, tmp_path):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.store import list_traces

    path = tmp_path / "traces.jsonl"
    router = HandbookRouter.from_database("mini-qa", db_url=built, trace_sink=JsonlTraceSink(path))
    router.route(ROME)
    router.route("Fix the python bug in loop 99")
    assert [json.loads(line)["query"] for line in path.read_text().splitlines()] == [ROME,
                                                                                     "Fix the python bug in loop 99"]
    HandbookRouter.from_database("mini-qa", db_url=built, trace_sink=DatabaseTraceSink(built)).route(ROME)
    with session(built) as s:
        assert list_traces(s)["query"].tolist() == [ROME]


def test_query_text_reads_the_last_user_message():
    assert query_text([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                       {"role": "user", "content": [{"type": "text", "text": "c"}]}]) == "c"
    assert query_text(None, "embed me") == "embed me"


def test_a_litellm_router_picks_the_deployment_with_the_handbook(built):
    from litellm import Router

    handbook = HandbookRouter.from_database("mini-qa", db_url=built, lam=0.0)
    router = Router(model_list=[
        {"model_name": "pool", "litellm_params": {"model": "openai/big", "mock_response": "from big"}},
        {"model_name": "pool", "litellm_params": {"model": "gpt-4o-mini", "mock_response": "from small"},
         "model_info": {"handbook_agent": "small"}},
        {"model_name": "other", "litellm_params": {"model": "openai/mid", "mock_response": "from mid"}},
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # uses the current plugin API
        strategy = HandbookRoutingStrategy(handbook).install(router)
    msgs = [{"role": "user", "content": ROME}]
    assert router.completion(model="pool", messages=msgs).choices[0].message.content == "from big"
    assert strategy.last_trace.chosen_agent == "big"
    strategy.lam = 1.0  # the handbook now prefers mid, which has no deployment in "pool": next best is small

    def call_async():  # last_trace is per thread, like the requests it explains
        return asyncio.run(router.acompletion(model="pool", messages=msgs)), strategy.last_trace

    # In a thread of its own: an event loop may already run in this one (Playwright's sync API in the e2e tests).
    with ThreadPoolExecutor(1) as pool:
        reply, trace = pool.submit(call_async).result()
    assert reply.choices[0].message.content == "from small"
    assert trace.chosen_agent == "mid"


def test_cli_route_prints_the_trace_as_json(built):
    from skillorchestra_core.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["--db", built, "route", "mini-agents", "How many years passed between the founding "
                              "of Alba and the death of Dova?", "--lambda", "0.05", "--execute", "replay", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["chosen_agent"] == data["steps"][-1]["chosen"] and data["lambda"] == 0.05 and data["id"]
    step = data["steps"][0]
    for key in ("mode", "active_skills", "candidates", "chosen", "runner_up", "margin", "lambda_interval", "cause"):
        assert key in step
    assert {"agent", "utility", "mean", "cost"} <= set(step["candidates"][0])
    assert step["execution"]["status"] == "ok"
    text = runner.invoke(app, ["--db", built, "route", "mini-qa", ROME, "--router", "cheapest", "--no-store"])
    assert text.exit_code == 0 and "chosen agent: small" in text.output


def test_cli_route_errors_are_one_line(built):
    import subprocess
    import sys

    def run(*args):
        code = f"import sys; sys.argv = ['skillorchestra', *{['--db', built, *args]!r}]; " \
               "from skillorchestra_core.cli import main; main()"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    bad = run("route", "mini-qa", ROME, "--router", "psychic")
    assert bad.returncode == 1 and "unknown router" in bad.stderr
    missing = run("route", "nope", ROME)
    assert missing.returncode == 1 and "no handbook named 'nope'" in missing.stderr


def test_cli_routing_snapshot(built, tmp_path):
    from skillorchestra_core.cli import app

    out = CliRunner().invoke(app, ["--db", built, "routing-snapshot", "mini-qa", str(tmp_path / "s.json")])
    assert out.exit_code == 0, out.output
    assert HandbookRouter.from_export(tmp_path / "s.json", lam=0.0).choose(ROME) == "big"
