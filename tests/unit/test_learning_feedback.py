"""Live feedback: an outcome on a stored decision becomes evidence and moves the next version's posteriors by
exactly its weighted count."""

import pytest
from support.handbooks import MINI_QA, build_mini_qa

from skillorchestra_core.db import session
from skillorchestra_core.errors import NotFound, StudioError
from skillorchestra_core.graph.posterior_views import source_breakdown
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.feedback import record_feedback
from skillorchestra_core.routing.engine import RouteOptions
from skillorchestra_core.routing.service import route_query

QUERY = "Compute the sum of 12 and 30 and then square it twice"


@pytest.fixture
def db_url(any_db_url):
    """Decisions and their feedback are stored on SQLite and on PostgreSQL."""
    return any_db_url


def _competence(s, number=None):
    loaded = load_version(s, MINI_QA, number)
    frames = profile.load_frames(s, loaded)
    return loaded, frames, profile.competence(frames).set_index(["agent", "skill"])


def test_feedback_moves_the_posterior_by_exactly_its_weighted_count(db_url):
    with session(db_url) as s:
        build_mini_qa(s)
        s.commit()
        trace = route_query(s, MINI_QA, None, QUERY, RouteOptions(lam=0.0))
        s.commit()
        before_v, _f, before = _competence(s)
    step = trace.steps[-1]
    assert step.active_skills, "the query should activate a skill"
    result = record_feedback(db_url, trace.id, 0.25, author="tester")
    assert result.version == before_v.number + 1 and result.agent == step.chosen
    assert sum(result.weights.values()) == pytest.approx(1.0)
    with session(db_url) as s:
        after_v, frames, after = _competence(s)
        assert after_v.number == result.version
        for a in step.active_skills:
            w = result.weights[a.skill]
            d_s = after.loc[(step.chosen, a.skill), "S"] - before.loc[(step.chosen, a.skill), "S"]
            d_f = after.loc[(step.chosen, a.skill), "F"] - before.loc[(step.chosen, a.skill), "F"]
            assert d_s == pytest.approx(w * 0.25, abs=1e-12) and d_f == pytest.approx(w * 0.75, abs=1e-12)
        others = [ag for ag in after.index.get_level_values(0).unique() if ag != step.chosen]
        for ag in others:
            assert (after.loc[ag, "n"] == before.loc[ag, "n"]).all()
        fb = frames.outcomes[frames.outcomes["source"] == "feedback"]
        assert len(fb) == 1 and fb["ext_id"].iloc[0] == f"feedback-{trace.id}" and fb["split"].iloc[0] == "train"
        rows = fb.assign(S=0.25, F=0.75)
        assert source_breakdown(rows) == {"feedback": {"S": 0.25, "F": 0.75, "n": 1}}
        with pytest.raises(StudioError, match="already has feedback"):
            record_feedback(db_url, trace.id, 1.0)
        assert load_version(s, MINI_QA).number == result.version  # the refused second feedback wrote nothing


def test_bad_feedback_is_refused_with_one_line(db_url):
    with session(db_url) as s:
        build_mini_qa(s)
        s.commit()
        held = route_query(s, MINI_QA, None, "Which emperor ruled Rome in the year 1100?", RouteOptions())
        s.commit()
    with pytest.raises(StudioError, match="between 0 and 1"):
        record_feedback(db_url, held.id, 1.5)
    with pytest.raises(NotFound, match="no decision trace with id 999"):
        record_feedback(db_url, 999, 1.0)
    with pytest.raises(StudioError, match="held-out query"):
        record_feedback(db_url, held.id, 1.0)
