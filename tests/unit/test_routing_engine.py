"""Routers through one interface, execution, storage of traces, explanations and the vectorised batch path."""

import copy
import json

import numpy as np
import pytest
from support.handbooks import routing_models_of

from skillorchestra_core.llm import FakeLlm, OfflineLlm
from skillorchestra_core.routing.activation import Activation
from skillorchestra_core.routing.batch import batch_choose, pad_activations, route_batch
from skillorchestra_core.routing.engine import RouteOptions, decide_step, route
from skillorchestra_core.routing.explain import choice_at, why_not
from skillorchestra_core.routing.model import table_from_arrays
from skillorchestra_core.routing.routers import list_routers
from skillorchestra_core.routing.trace import ActiveSkill, RouteTrace
from skillorchestra_core.routing.views import (
    candidates_frame,
    contributions_frame,
    lambda_figure,
    segments_frame,
    steps_frame,
    utility_figure,
)

IN_EVIDENCE = "Which emperor ruled Rome in the year 500?"  # history-2: big, mid and small all succeeded
NEW = "Which emperor ruled Rome in the year 2500?"


@pytest.fixture(scope="module")
def _built() -> dict:
    return {}


@pytest.fixture(params=["sqlite", "postgresql"])
def models(request, mini_db_copy, _built):
    """(mini-qa, mini-agents) routing models read from SQLite and from PostgreSQL: each read once per module, then
    copied, because some tests change the model they are given."""
    if request.param not in _built:
        _built[request.param] = routing_models_of(mini_db_copy(request.param))
    return copy.deepcopy(_built[request.param])


def test_the_registry_lists_every_router():
    assert [r.name for r in list_routers()] == ["skill", "reference-rule", "best-single", "cheapest", "random",
                                               "oracle"]
    with pytest.raises(ValueError, match="unknown router"):
        RouteOptions(router="nope").make_router()


@pytest.mark.parametrize("router", [r.name for r in list_routers()])
def test_every_router_is_deterministic_and_traced(models, router):
    qa, _ = models
    a = route(qa, NEW, RouteOptions(router=router, seed=3))
    b = route(qa, NEW, RouteOptions(router=router, seed=3))
    assert a.model_dump(exclude={"created_at"}) == b.model_dump(exclude={"created_at"})
    step = a.steps[0]
    assert step.chosen in {"big", "mid", "small"} and len(step.candidates) == 3
    assert sorted(c.rank for c in step.candidates) == [0, 1, 2]
    assert RouteTrace.from_json(a.to_json()).model_dump() == a.model_dump()


def test_baselines(models):
    qa, _ = models
    assert route(qa, NEW, RouteOptions(router="cheapest")).chosen_agent == "small"
    best = route(qa, NEW, RouteOptions(router="best-single")).steps[0]
    assert best.chosen == "big" and best.cause == "best_single"  # the best train success rate
    oracle = route(qa, IN_EVIDENCE, RouteOptions(router="oracle")).steps[0]
    assert oracle.chosen == "small" and oracle.cause == "oracle_recorded"  # all succeeded: the cheapest
    assert route(qa, NEW, RouteOptions(router="oracle")).steps[0].cause == "oracle_no_record"
    picks = {route(qa, NEW, RouteOptions(router="random", seed=s)).chosen_agent for s in range(12)}
    assert len(picks) >= 2


def test_skill_router_trades_competence_for_cost(models):
    qa, _ = models
    step = route(qa, NEW, RouteOptions(lam=0.0)).steps[0]
    assert step.chosen == "big" and step.lambda_interval.above == "mid"
    high = step.lambda_interval.high
    assert route(qa, NEW, RouteOptions(lam=high - 1e-6)).chosen_agent == "big"
    assert route(qa, NEW, RouteOptions(lam=high)).chosen_agent == "mid"


def test_replay_dry_run_and_live_execution(models):
    qa, _ = models
    replay = route(qa, IN_EVIDENCE, RouteOptions(execute="replay", lam=0.0))
    ex = replay.steps[0].execution
    assert ex.status == "ok" and ex.score == 1.0 and ex.cost_usd == pytest.approx(0.010)
    assert replay.outcome == 1.0 and replay.query_ref == "history-2"
    assert route(qa, NEW, RouteOptions(execute="replay")).steps[0].execution.status == "no_record"
    dry = route(qa, NEW, RouteOptions(lam=0.0)).steps[0].execution
    assert dry.status == "skipped" and dry.estimated_cost_usd == pytest.approx(0.010)
    llm = FakeLlm(["Theodoric the Great"])
    live = route(qa, NEW, RouteOptions(execute="live", lam=0.0, activation="offline"), llm=llm)
    ex = live.steps[0].execution
    assert ex.status == "ok" and ex.output == "Theodoric the Great"
    assert ex.cost_usd == pytest.approx((10 * 5.0 + 5 * 15.0) / 1e6)  # fake usage x big's price card
    assert llm.requests[0].model == "openai/big" and NEW in llm.prompts[0]
    offline = route(qa, NEW, RouteOptions(execute="live"), llm=OfflineLlm()).steps[0].execution
    assert offline.status == "error" and "SKILLORCHESTRA_LLM_BACKEND" in offline.detail


def test_store_list_and_load_traces_with_their_llm_calls(any_mini_db_url):
    from sqlmodel import select

    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import LlmCall
    from skillorchestra_core.routing.service import route_query
    from skillorchestra_core.routing.store import TraceFilter, list_traces, load_trace, trace_facets

    db_url = any_mini_db_url
    llm = FakeLlm([{"required_skills": [{"skill_id": "answer.history", "weight": 1}]}])
    with session(db_url) as s:
        first = route_query(s, "mini-qa", None, NEW, RouteOptions(), llm=llm, actor="t")
        second = route_query(s, "mini-qa", 1, NEW, RouteOptions(router="cheapest", activation="offline"),
                             llm=FakeLlm([]))
        s.commit()
    with session(db_url) as s:
        loaded = load_trace(s, first.id)
        assert loaded.model_dump() == first.model_dump()
        assert loaded.version == 1 and loaded.content_hash and loaded.steps[0].activation_source == "llm:fake/model"
        table = list_traces(s)
        assert table["id"].tolist() == [second.id, first.id]
        assert list_traces(s, TraceFilter(cause="cheapest"))["id"].tolist() == [second.id]
        assert list_traces(s, TraceFilter(agent="nobody")).empty
        assert trace_facets(s)["router"] == ["cheapest", "skill"]
        calls = s.exec(select(LlmCall)).all()
        assert [(c.purpose, c.decision_trace_id) for c in calls] == [("routing.activation", first.id)]


def test_why_not_says_what_the_rival_needs(models):
    qa, _ = models
    step = route(qa, NEW, RouteOptions(lam=0.1)).steps[0]
    rival = [c.agent for c in step.candidates if c.agent != step.chosen][0]
    w = why_not(step, rival, 0.1)
    assert w.gap > 0 and w.competence_needed >= w.gap
    lifted = step.model_copy(deep=True)
    lifted.candidate(rival).mean += w.competence_needed + 1e-9
    assert choice_at(lifted, 0.1) == rival
    if w.lambda_range is not None:
        assert choice_at(step, w.lambda_range[0]) == rival
    assert any("Lambda:" in line for line in w.lines)
    same = why_not(step, step.chosen, 0.1)
    assert same.gap == 0 and "chosen" in same.lines[0]
    cheap = route(qa, NEW, RouteOptions(router="cheapest")).steps[0]
    assert "cheapest rule" in why_not(cheap, "big", 0.1).lines[0]


def test_views_build_tables_and_figures(models):
    _, agents = models
    trace = route(agents, "How many years passed between the founding of Alba and the death of Gala?")
    assert len(steps_frame(trace)) == 3
    step = trace.steps[1]
    frame = candidates_frame(step, lam=5.0)
    assert frame.loc[frame[""] == "chosen", "agent"].item() == choice_at(step, 5.0)
    assert len(contributions_frame(step)) == len(step.candidates) * len(step.active_skills)
    fig = utility_figure(step, 0.1)
    assert {t.name for t in fig.data} >= {"utility", "cost penalty (lambda = 0.1)"}
    assert len(lambda_figure(step, 0.1).data) >= len(step.candidates)
    assert segments_frame(step)["to lambda"].iloc[-1] == "+inf"


def test_batch_routing_makes_the_same_choices_as_one_by_one():
    rng = np.random.default_rng(7)
    agents, skills = [f"agent-{i:02d}" for i in range(12)], [f"cat{i % 5}.skill{i:03d}" for i in range(60)]
    mean = np.round(rng.uniform(0.2, 0.95, (12, 60)), 2)  # rounded: plenty of exact ties
    table = table_from_arrays("answer", agents, skills, mean, rng.choice([0.001, 0.002, 0.01], 12))
    acts = [[(skills[j], float(w)) for j, w in zip(rng.choice(60, 3, replace=False), rng.dirichlet(np.ones(3)))]
            for _ in range(300)] + [[]]
    idx, w = pad_activations(table, acts)
    for lam in (0.0, 0.05, 0.3):
        chosen, best = batch_choose(table, idx, w, lam)
        for q, act in enumerate(acts):
            one = decide_step(0, table, Activation([ActiveSkill(skill=s, weight=x) for s, x in act], "given"),
                              RouteOptions(lam=lam))
            assert table.agents[chosen[q]] == one.chosen
            assert best[q] == pytest.approx(one.candidate(one.chosen).utility)


def test_route_batch_matches_the_router_on_real_queries(models):
    qa, _ = models
    queries = [t for t, _, _ in qa.skill_queries] + [NEW, "zzyzx"]
    got = route_batch(qa, queries, lam=0.1)
    assert got.agents == [route(qa, q, RouteOptions(lam=0.1)).chosen_agent for q in queries]
    assert list(got.frame(queries).columns) == ["query", "mode", "agent", "utility"]


def test_options_are_validated():
    with pytest.raises(ValueError, match="execution"):
        RouteOptions(execute="fly")
    with pytest.raises(ValueError, match="lambda"):
        RouteOptions(lam=-1)
    with pytest.raises(ValueError, match="cost unit"):
        RouteOptions(cost_unit="eur")


def test_an_empty_query_is_refused(models):
    qa, _ = models
    with pytest.raises(ValueError, match="blank"):
        route(qa, "   ")


def test_trace_json_uses_lambda_as_the_key(models):
    qa, _ = models
    data = json.loads(route(qa, NEW, RouteOptions(lam=0.25)).to_json())
    assert data["lambda"] == 0.25 and "lam" not in data
    assert RouteTrace.model_validate(data).lam == 0.25


def test_traces_are_strict_json(models):
    qa, _ = models
    qid = qa.evidence.lookup(IN_EVIDENCE)
    qa.evidence = qa.evidence.without(qid, "answer", "mid")  # no recorded outcome: -inf for the oracle
    trace = route(qa, IN_EVIDENCE, RouteOptions(router="oracle"))
    assert trace.steps[0].candidate("mid").score is None
    json.loads(trace.to_json(), parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    json.dumps(trace.to_dict(), allow_nan=False)
