"""The compact decision log: stored decisions re-render exactly as routed, in their compact form."""

import pytest
from sqlmodel import select

from skillorchestra_core.routing.decision_codec import CODEC_DERIVED, CODEC_PACKED
from skillorchestra_core.routing.engine import RouteOptions

QA = ["Which emperor ruled Rome after the fall of Carthage?", "What is 15% of 240?",
      "What is the capital of Peru?", "Translate 'good morning' into French."]
AGENTS_Q = "How many years passed between the founding of the harbour of Turku and the death of its first mayor?"
SAMPLE = [("demo-qa", q, RouteOptions(router=r, lam=lam, cost_unit=cu, execute=ex))
          for q, (r, lam, cu, ex) in zip(QA * 3, [
              ("skill", 0.0, "normalised", "dry-run"), ("skill", 0.1, "max", "replay"),
              ("skill", 0.7, "usd", "dry-run"), ("reference-rule", 0.1, "normalised", "dry-run"),
              ("best-single", 0.3, "normalised", "replay"), ("cheapest", 0.1, "normalised", "dry-run"),
              ("random", 0.2, "normalised", "dry-run"), ("oracle", 0.1, "normalised", "replay"),
              ("skill", 1.5, "normalised", "replay"), ("skill", 0.05, "normalised", "dry-run"),
              ("reference-rule", 0.5, "max", "replay"), ("random", 0.0, "usd", "replay")])]
SAMPLE += [("demo-agents", AGENTS_Q, RouteOptions(lam=lam, router=r)) for r, lam in
           [("skill", 0.1), ("skill", 0.9), ("reference-rule", 0.2), ("oracle", 0.1)]]


@pytest.fixture
def demo_db_url(any_demo_db_url):
    """Each test here stores and reads decisions on SQLite and on PostgreSQL."""
    return any_demo_db_url


@pytest.fixture
def routed(demo_db_url):
    """Each sample routed and stored: (trace as routed, its id)."""
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.service import route_query

    out = []
    with session(demo_db_url) as s:
        for handbook, query, options in SAMPLE:
            trace = route_query(s, handbook, None, query, options, actor="ada")
            out.append((trace.to_dict(), trace.id))
        s.commit()
    return out


def _fresh_process_state():
    """Drop the in-process model cache, as a new process that opens the log would have it."""
    from skillorchestra_core.routing import build

    build._CACHE.clear()


def test_stored_decisions_re_render_exactly_field_by_field(routed, demo_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace
    from skillorchestra_core.routing.store import load_trace

    _fresh_process_state()
    with session(demo_db_url) as s:
        for routed_dict, trace_id in routed:
            row = s.get(DecisionTrace, trace_id)
            assert row.codec == CODEC_DERIVED and row.trace == {} and row.content_hash == ""
            again = load_trace(s, trace_id).to_dict()
            assert set(again) == set(routed_dict)
            for field in routed_dict:
                if field != "steps":
                    assert again[field] == routed_dict[field], field
            assert len(again["steps"]) == len(routed_dict["steps"])
            for mine, theirs in zip(again["steps"], routed_dict["steps"]):
                for field in theirs:
                    assert mine[field] == theirs[field], (trace_id, field)
            assert again == routed_dict


def test_a_compact_decision_is_small(routed, demo_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace

    with session(demo_db_url) as s:
        rows = s.exec(select(DecisionTrace).where(DecisionTrace.n_steps == 1)).all()
        assert rows
        assert max(len(r.payload) for r in rows) < 400  # the routed trace's JSON is several KB


def test_a_trace_whose_model_is_not_in_the_database_is_stored_whole(demo_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace
    from skillorchestra_core.routing.build import routing_model
    from skillorchestra_core.routing.engine import route
    from skillorchestra_core.routing.store import load_trace, store_trace

    with session(demo_db_url) as s:
        model = routing_model(s, "demo-qa")
        trace = route(model, QA[0], RouteOptions(lam=0.2))
        trace.content_hash = "0" * 64  # as if routed from an edited handbook file
        trace_id = store_trace(s, trace, actor="api")
        s.commit()
        assert s.get(DecisionTrace, trace_id).codec == CODEC_PACKED
        assert load_trace(s, trace_id).to_dict() == trace.to_dict()


def test_skill_and_agent_filters_use_the_stored_tags(routed, demo_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.store import TraceFilter, list_traces

    first, first_id = routed[0]
    skill = first["steps"][0]["active_skills"][0]["skill"]
    agent = first["steps"][0]["chosen"]
    with session(demo_db_url) as s:
        by_skill = set(list_traces(s, TraceFilter(skill=skill))["id"])
        by_agent = set(list_traces(s, TraceFilter(used_agent=agent))["id"])
        assert first_id in by_skill and first_id in by_agent
        assert list_traces(s, TraceFilter(skill=skill + "x")).empty
    expected = {i for d, i in routed if any(a["skill"] == skill for st in d["steps"] for a in st["active_skills"])}
    assert by_skill == expected
