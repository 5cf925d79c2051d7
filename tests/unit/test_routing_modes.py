"""Multi-mode stepping: the offline mode policy from evidence paths, the LLM orchestrator and its fallback."""

import pytest
from support.handbooks import routing_models

from skillorchestra_core.llm import FakeLlm
from skillorchestra_core.routing.engine import RouteOptions, RouteRun, route
from skillorchestra_core.routing.modes import offline_plan

DATES_Q = "How many years passed between the founding of Alba and the death of Dova?"  # in the evidence (train)
NEW_Q = "How many years passed between the founding of Alba and the death of Gala?"
RIVER_Q = "Which river is longer, the one in Bera or the one in Hera?"


@pytest.fixture
def models(db_url):
    return routing_models(db_url)


def test_offline_plan_follows_the_successful_paths_of_similar_queries(models):
    _, agents = models
    path, reason, source = offline_plan(agents, DATES_Q, 4)
    assert path == ["search", "code", "answer"] and source == "offline:evidence-paths"
    assert "most similar" in reason
    assert offline_plan(agents, NEW_Q, 4)[0] == ["search", "code", "answer"]  # a new query, similar ones
    assert offline_plan(agents, RIVER_Q, 4)[0] == ["search", "answer"]
    assert offline_plan(agents, DATES_Q, 2)[0] == ["search", "answer"]  # cut, still ending in the terminal mode
    assert "overall" in offline_plan(agents, "zzyzx", 4)[1]


def test_single_mode_handbooks_skip_the_mode_choice(models):
    qa, _ = models
    step = route(qa, "Who ruled Rome in 300?").steps[0]
    assert step.mode == "answer" and step.mode_source == "single-mode"


def test_routing_steps_appear_one_by_one(models):
    _, agents = models
    run = RouteRun(agents, DATES_Q, RouteOptions(execute="replay"))
    it = run.steps()
    first = next(it)
    assert first.mode == "search" and len(run.done) == 1 and first.execution.status == "ok"
    rest = list(it)
    trace = run.trace()
    assert [s.mode for s in trace.steps] == ["search", "code", "answer"] == [first.mode] + [s.mode for s in rest]
    assert trace.chosen_agent == trace.steps[-1].chosen and trace.chosen_agent.startswith("a-")
    assert all(s.chosen.startswith(s.mode[0]) for s in trace.steps)  # each mode's own pool
    assert trace.total_cost_usd == pytest.approx(sum(s.execution.cost_usd for s in trace.steps))
    assert trace.steps[1].active_skills[0].skill == "code.dates"


def test_max_steps_caps_the_run(models):
    _, agents = models
    assert len(route(agents, DATES_Q, RouteOptions(max_steps=2)).steps) == 2
    assert len(route(agents, DATES_Q, RouteOptions(max_steps=1)).steps) == 1


def test_llm_orchestrator_picks_modes_with_insights_in_the_prompt(models):
    _, agents = models
    agents.modes["code"].insights = [{"content": "Use code when the answer needs date arithmetic."}]
    llm = FakeLlm([
        {"mode": "code", "reason": "dates need arithmetic"},
        {"required_skills": [{"skill_id": "code.dates", "weight": 1}]},
        {"mode": "answer", "reason": "done"},
        {"required_skills": [{"skill_id": "answer.numeric", "weight": 1}]},
    ])
    trace = route(agents, DATES_Q, RouteOptions(), llm=llm)
    assert [s.mode for s in trace.steps] == ["code", "answer"]
    assert trace.steps[0].mode_reason == "dates need arithmetic" and trace.steps[0].mode_source == "llm:fake/model"
    assert "Use code when the answer needs date arithmetic." in llm.prompts[0]
    assert "code by c-" in llm.prompts[2]  # the steps so far are in the next prompt
    assert trace.llm_backend == "fake"


def test_a_bad_mode_choice_falls_back_to_the_offline_path(models):
    _, agents = models
    llm = FakeLlm([{"mode": "dance"}, {"mode": "sing"}] + [{"required_skills": []}] * 2 + [{"mode": "answer"}]
                  + [{"required_skills": [{"skill_id": "answer.numeric", "weight": 1}]}])
    trace = route(agents, DATES_Q, RouteOptions(max_steps=3), llm=llm)
    first = trace.steps[0]
    assert first.mode == "search" and first.mode_source == "fallback"
    assert "LLM mode choice failed" in first.mode_reason and "dance" in llm.calls.records[0].error
    assert trace.steps[-1].mode == "answer"
