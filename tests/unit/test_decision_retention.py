"""Decision retention: the newest N per handbook and/or the last D days, applied by `decisions prune`."""

import json
from datetime import datetime, timedelta, timezone

import pytest
from sqlmodel import select
from support.handbooks import MINI_AGENTS, MINI_QA, routing_models_of
from typer.testing import CliRunner

from skillorchestra_core.cli import app
from skillorchestra_core.errors import StudioError
from skillorchestra_core.routing.engine import RouteOptions, route

runner = CliRunner()
NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)


@pytest.fixture
def db_url(any_mini_db_url):
    """Decisions are stored and pruned on SQLite and on PostgreSQL."""
    return any_mini_db_url


@pytest.fixture
def stored(db_url):
    """Six mini-qa decisions one day apart (the newest now) and two mini-agents ones; one with an LLM call."""
    from skillorchestra_core.db import session
    from skillorchestra_core.llm.base import LlmCallRecord
    from skillorchestra_core.routing.store import store_trace

    qa, agents = routing_models_of(db_url)
    ids = {MINI_QA: [], MINI_AGENTS: []}
    with session(db_url) as s:
        for day in range(5, -1, -1):
            trace = route(qa, f"What is {day} plus 5?", RouteOptions())
            trace.created_at = NOW - timedelta(days=day)
            calls = [LlmCallRecord(purpose="routing.activation", backend="offline", model="m", prompt_hash="h")] \
                if day == 5 else None
            ids[MINI_QA].append(store_trace(s, trace, llm_calls=calls))
        for day in (9, 0):
            trace = route(agents, "How many years passed between the founding of Alba and the death of Dova?",
                          RouteOptions())
            trace.created_at = NOW - timedelta(days=day)
            ids[MINI_AGENTS].append(store_trace(s, trace))
        s.commit()
    return ids


def _left(db_url, handbook):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace

    with session(db_url) as s:
        return list(s.exec(select(DecisionTrace.id).where(DecisionTrace.handbook_name == handbook)
                           .order_by(DecisionTrace.id)).all())


def test_keep_the_newest_n_per_handbook(db_url, stored):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import LlmCall
    from skillorchestra_core.routing.retention import prune_decisions

    with session(db_url) as s:
        got = prune_decisions(s, keep=2)
    assert got.deleted == 4
    assert _left(db_url, MINI_QA) == stored[MINI_QA][-2:]
    assert _left(db_url, MINI_AGENTS) == stored[MINI_AGENTS]
    with session(db_url) as s:  # the LLM call stays in the cost log, unlinked
        assert [c.decision_trace_id for c in s.exec(select(LlmCall)).all()] == [None]


def test_keep_the_last_days_from_the_setting(db_url, stored, monkeypatch):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.retention import prune_decisions

    monkeypatch.setenv("SKILLORCHESTRA_DECISION_KEEP_DAYS", "2.5")
    with session(db_url) as s:
        got = prune_decisions(s, now=NOW)
    assert (got.deleted, got.keep_days) == (4, 2.5)
    assert _left(db_url, MINI_QA) == stored[MINI_QA][-3:]
    assert _left(db_url, MINI_AGENTS) == stored[MINI_AGENTS][-1:]


def test_prune_command(db_url, stored):
    result = runner.invoke(app, ["--db", db_url, "decisions", "prune"])
    assert result.exit_code == 0 and "nothing deleted, 8 kept" in result.output
    result = runner.invoke(app, ["--db", db_url, "decisions", "prune", "--keep", "1", "--handbook", MINI_QA,
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["deleted"] == 5
    assert _left(db_url, MINI_QA) == stored[MINI_QA][-1:] and len(_left(db_url, MINI_AGENTS)) == 2
    bad = runner.invoke(app, ["--db", db_url, "decisions", "prune", "--keep", "-1"])
    assert bad.exit_code != 0 and isinstance(bad.exception, StudioError)  # the command line prints its one line
    assert str(bad.exception) == "keep must be >= 0, got -1"
    assert len(_left(db_url, MINI_QA)) == 1
