"""`step_at` / `trace_at`: one view of a step at another lambda; `compare_runs` / `route_all`: all or nothing."""

import pytest
from sqlmodel import func, select

from skillorchestra_core.routing.compare import Run, compare_runs, executions, route_all
from skillorchestra_core.routing.engine import RouteOptions
from skillorchestra_core.routing.explain import choice_at
from skillorchestra_core.routing.views import candidates_frame
from skillorchestra_core.routing.what_if import step_at, trace_at

QUESTION = "Which emperor ruled Rome after the fall of Carthage?"


@pytest.fixture
def trace(demo_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.service import route_query

    with session(demo_db_url) as s:
        return route_query(s, "demo-qa", None, QUESTION, RouteOptions(lam=0.1), store=False)


def test_at_the_routed_lambda_the_stored_decision_is_returned(trace):
    step = trace.steps[0]
    at = step_at(step, trace.lam, trace.lam)
    assert (at.chosen, at.runner_up, at.margin, at.interval) == (step.chosen, step.runner_up, step.margin,
                                                                 step.lambda_interval)
    assert not at.changed and not at.recomputed


def test_past_the_interval_every_figure_names_the_new_winner(trace):
    step = trace.steps[0]
    lam = step.lambda_interval.high + 1e-3
    at = step_at(step, lam, trace.lam)
    assert at.chosen == step.lambda_interval.above == choice_at(step, lam) and at.changed
    assert at.order[0] == at.chosen and at.order[1] == at.runner_up
    u = at.utilities
    assert at.margin == pytest.approx(u[at.chosen] - u[at.runner_up]) and at.margin >= 0
    assert at.interval.contains(lam) and at.interval.low == pytest.approx(step.lambda_interval.high)
    frame = candidates_frame(step, lam, trace.lam)
    assert frame["agent"].tolist() == list(at.order)
    assert frame.loc[frame[""] == "runner-up", "agent"].item() == at.runner_up
    view = trace_at(trace, lam)
    assert view.chosen_agent == at.chosen and view.changed == (0,)


def test_compare_runs_drops_a_duplicate_second_run():
    assert compare_runs("skill", 1, "router", "skill", None) == [Run("skill", 1)]
    assert compare_runs("skill", 1, "version", None, 1) == [Run("skill", 1)]
    assert compare_runs("skill", 1, "router", "cheapest", None) == [Run("skill", 1), Run("cheapest", 1)]
    assert "live" not in executions("offline") and "live" in executions("litellm")


def test_route_all_stores_nothing_when_a_later_run_fails(any_demo_db_url):
    demo_db_url = any_demo_db_url
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace

    seen = []

    def explode(i, step):
        seen.append(i)
        if i == 1:
            raise RuntimeError("drawing failed")

    with session(demo_db_url) as s:
        with pytest.raises(RuntimeError):
            route_all(s, "demo-qa", QUESTION, [Run("skill", 1), Run("cheapest", 1)], RouteOptions(),
                      on_step=explode)
    with session(demo_db_url) as s:
        assert s.exec(select(func.count()).select_from(DecisionTrace)).one() == 0
        traces = route_all(s, "demo-qa", QUESTION, [Run("skill", 1), Run("cheapest", 1)], RouteOptions())
    assert seen == [0, 1] and [t.router for t in traces] == ["skill", "cheapest"]
    with session(demo_db_url) as s:
        assert s.exec(select(func.count()).select_from(DecisionTrace)).one() == 2
