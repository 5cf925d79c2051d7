"""The compact decision log on SQLite and PostgreSQL: stored traces re-render exactly, and a database whose traces
are stored as full JSON (the earlier layout) is converted by the migration and reads back unchanged."""

import pytest
from sqlalchemy import text
from sqlmodel import select
from support.handbooks import MINI_AGENTS, MINI_QA, routing_models

from skillorchestra_core.routing.decision_codec import CODEC_DERIVED, CODEC_JSON, CODEC_PACKED
from skillorchestra_core.routing.engine import RouteOptions, route

QUERIES = ["What is 12 plus 5?", "Who wrote the play about the prince of Denmark?", "Spell the word harbour."]


def _traces(db_url):
    qa, agents = routing_models(db_url)
    out = [route(qa, q, RouteOptions(router=r, lam=lam)) for q in QUERIES
           for r, lam in (("skill", 0.1), ("reference-rule", 0.3), ("cheapest", 0.0))]
    out.append(route(agents, "How many years passed between the founding of Alba and the death of Dova?",
                     RouteOptions(lam=0.2)))
    return out


def test_compact_decisions_re_render_exactly(any_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace
    from skillorchestra_core.routing import build
    from skillorchestra_core.routing.store import load_trace, store_trace, trace_facets

    traces = _traces(any_db_url)
    with session(any_db_url) as s:
        ids = [store_trace(s, t, actor="ada") for t in traces]
        s.commit()
    build._CACHE.clear()
    with session(any_db_url) as s:
        assert {s.get(DecisionTrace, i).codec for i in ids} == {CODEC_DERIVED}
        for trace, trace_id in zip(traces, ids):
            assert load_trace(s, trace_id).to_dict() == trace.to_dict()
        facets = trace_facets(s, MINI_QA)
        assert facets["router"] == ["cheapest", "reference-rule", "skill"]
        assert facets["handbook"] == sorted([MINI_QA, MINI_AGENTS])


def _to_earlier_layout(db_url):
    """Take the compact columns, the facet table and the migration's record away, as before the migration."""
    from skillorchestra_core.db import dispose_engines, get_engine

    with get_engine(db_url).begin() as conn:
        conn.execute(text("DROP INDEX ix_decision_trace_handbook_name_id"))
        conn.execute(text("DROP TABLE decision_facet"))
        for column in ("codec", "payload", "tags"):
            conn.execute(text(f"ALTER TABLE decision_trace DROP COLUMN {column}"))
        conn.execute(text("DELETE FROM schema_migration WHERE version = 7"))
    dispose_engines()


def test_the_migration_converts_stored_json_traces(any_db_url):
    from skillorchestra_core.db import dispose_engines, get_engine, session
    from skillorchestra_core.db.models import DecisionTrace
    from skillorchestra_core.routing.store import TraceFilter, list_traces, load_trace, trace_facets

    traces = _traces(any_db_url)
    with session(any_db_url) as s:
        for t in traces:  # the earlier layout: the whole trace as JSON, nothing else
            last = t.steps[-1]
            s.add(DecisionTrace(handbook_id=t.handbook_id, handbook_name=t.handbook, version_id=t.version_id,
                                version_number=t.version, content_hash=t.content_hash, router=t.router, lam=t.lam,
                                cost_unit=t.cost_unit, execution=t.execution, query_text=t.query,
                                chosen_agent=t.chosen_agent, cause=t.cause, n_steps=len(t.steps),
                                margin=last.margin, total_cost_usd=t.total_cost_usd, outcome=t.outcome,
                                actor="old", created_at=t.created_at, trace=t.to_dict()))
        s.commit()
        ids = s.exec(select(DecisionTrace.id).order_by(DecisionTrace.id)).all()
    dispose_engines()
    _to_earlier_layout(any_db_url)

    with get_engine(any_db_url).connect() as conn:
        assert 7 in conn.execute(text("SELECT version FROM schema_migration")).scalars().all()
    with session(any_db_url) as s:
        rows = [s.get(DecisionTrace, i) for i in ids]
        assert {r.codec for r in rows} == {CODEC_PACKED} and all(r.trace == {} for r in rows)
        for trace, trace_id in zip(traces, ids):
            again = load_trace(s, trace_id).to_dict()
            assert again == {**trace.to_dict(), "id": trace_id}
        skill = traces[0].steps[0].active_skills[0].skill
        expected = [i for t, i in zip(traces, ids) if any(a.skill == skill for st in t.steps
                                                          for a in st.active_skills)]
        assert sorted(list_traces(s, TraceFilter(skill=skill))["id"]) == expected
        assert trace_facets(s, MINI_QA)["router"] == ["cheapest", "reference-rule", "skill"]
    dispose_engines()


def test_rows_written_before_the_compact_form_stay_readable(db_url):
    """A row still holding its JSON (codec 0) is read as it always was."""
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace
    from skillorchestra_core.routing.store import load_trace

    trace = _traces(db_url)[0]
    with session(db_url) as s:
        row = DecisionTrace(handbook_name=trace.handbook, router=trace.router, lam=trace.lam, query_text=trace.query,
                            trace=trace.to_dict(), codec=CODEC_JSON)
        s.add(row)
        s.commit()
        assert load_trace(s, row.id).to_dict() == {**trace.to_dict(), "id": row.id}


@pytest.mark.parametrize("codec", [9])
def test_an_unknown_codec_is_a_clear_error(db_url, codec):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace
    from skillorchestra_core.routing.store import load_trace

    with session(db_url) as s:
        row = DecisionTrace(handbook_name="x", router="skill", lam=0.1, query_text="q", codec=codec)
        s.add(row)
        s.commit()
        with pytest.raises(ValueError, match="unknown decision codec 9"):
            load_trace(s, row.id)
