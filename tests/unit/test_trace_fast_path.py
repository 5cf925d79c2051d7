"""The fast trace (a step assembled without validation, its JSON made from the engine's plain candidate dicts) is the
validated trace: the same JSON, the same dumps, the same models once read, on ties, fallbacks, every router and a
multi-step route."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
from support.handbooks import routing_models_of

from skillorchestra_core.routing import engine
from skillorchestra_core.routing.activation import Activation
from skillorchestra_core.routing.engine import RouteOptions, decide_step, route
from skillorchestra_core.routing.model import table_from_arrays
from skillorchestra_core.routing.routers import list_routers
from skillorchestra_core.routing.trace import ActiveSkill, RouteTrace, StepTrace


def _tables():
    rng = np.random.default_rng(7)
    agents, skills = [f"a{i}" for i in range(7)], [f"cat{j % 3}.s{j}" for j in range(12)]
    varied = table_from_arrays("answer", agents, skills, rng.random((7, 12)), rng.uniform(0.001, 0.01, 7),
                               n=rng.integers(0, 5, (7, 12)))
    # Equal competence everywhere and two equal costs: ties settled by cost, then by name.
    tied = table_from_arrays("answer", agents, skills, np.full((7, 12), 0.5), [0.002, 0.002, 0.003, 0.004, 0.005,
                                                                              0.006, 0.007])
    single = table_from_arrays("answer", ["only"], skills, rng.random((1, 12)), [0.004])
    return {"varied": varied, "tied": tied, "single": single}


ACTIVATIONS = {
    "two skills": Activation([ActiveSkill(skill="cat1.s1", weight=0.7, probability=0.7, source="classifier"),
                              ActiveSkill(skill="cat2.s5", weight=0.3, similarity=0.2, source="profile")], "given"),
    "nine skills": Activation([ActiveSkill(skill=f"cat{j % 3}.s{j}", weight=1.0 + j) for j in range(9)], "given"),
    "fallback (unknown skills)": Activation([ActiveSkill(skill="other.mode", weight=1.0)], "given", "a note"),
    "none": Activation([], "offline:classifier"),
}


def _same(fast: StepTrace, validated: StepTrace) -> None:
    assert fast.plain() is not None  # the fast path is the one under test
    copied = copy.deepcopy(fast)  # an unread copy shares the engine's inputs and dumps the same
    assert copied.plain() is not None and copied.model_dump_json() == validated.model_dump_json()
    assert fast.model_dump_json() == validated.model_dump_json()
    assert fast.model_dump_json(indent=2) == validated.model_dump_json(indent=2)
    assert StepTrace.model_validate_json(fast.model_dump_json()) == validated
    assert fast.model_dump() == validated.model_dump()  # built now
    assert fast.plain() is None and list(fast.__dict__) == list(validated.__dict__)
    assert fast == validated and fast.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize("router", [r.name for r in list_routers()])
@pytest.mark.parametrize("table_name", ["varied", "tied", "single"])
def test_a_fast_step_equals_the_validated_step(router, table_name):
    table = _tables()[table_name]
    for act in ACTIVATIONS.values():
        for lam in (0.0, 0.3, 50.0):
            opts = RouteOptions(router=router, lam=lam, cost_scope="mode")
            fast = decide_step(1, table, act, opts, query="q", mode_reason="why", mode_source="rule")
            validated = decide_step(1, table, act, opts, query="q", mode_reason="why", mode_source="rule",
                                    validate=True, lazy=False)
            _same(fast, validated)


def test_ties_and_fallbacks_are_among_the_cases():
    tables = _tables()
    causes = {decide_step(0, tables[t], a, RouteOptions(lam=0.3)).cause for t in tables for a in ACTIVATIONS.values()}
    assert {"tie_break_cost", "fallback_no_skills", "single_candidate", "skill_utility"} <= causes


def test_a_multi_step_route_traces_the_same_json_fast_or_validated(mini_db_copy, monkeypatch):
    _, agents = routing_models_of(mini_db_copy("sqlite"))
    query = "How many years passed between the founding of Alba and the death of Gala?"
    for opts in (RouteOptions(lam=0.1), RouteOptions(router="oracle", execute="replay")):
        fast = route(agents, query, opts)
        with monkeypatch.context() as m:
            m.setattr(engine, "decide_step", functools.partial(decide_step, validate=True))
            validated = route(agents, query, opts)
        assert len(fast.steps) > 1 and all(s.plain() is not None for s in fast.steps)  # candidates unbuilt
        fast.created_at = validated.created_at
        assert fast.to_json() == validated.to_json() and fast.to_json(indent=None) == validated.to_json(indent=None)
        assert fast.model_dump_json() == validated.model_dump_json()
        assert RouteTrace.from_json(fast.to_json()) == validated
        assert fast.to_dict() == validated.to_dict()
