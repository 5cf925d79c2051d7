"""`reference-rule` reproduces the reference code's behaviour on crafted cases (reference doc 6.2 and 6.4)."""

import random

import numpy as np
import pytest
from support.reference_select import select_agent

from skillorchestra_core.routing.activation import Activation
from skillorchestra_core.routing.engine import RouteOptions, decide_step
from skillorchestra_core.routing.model import table_from_arrays
from skillorchestra_core.routing.reference import reference_choice
from skillorchestra_core.routing.trace import ActiveSkill


def _act(**weights):
    return Activation([ActiveSkill(skill=k.replace("__", "."), weight=w) for k, w in weights.items()], "given")


def _decide(table, act, router="reference-rule", lam=0.01, seed=0, variant="weighted_avg"):
    opts = RouteOptions(router=router, lam=lam, seed=seed, reference_variant=variant)
    return decide_step(0, table, act, opts, query="q")


def test_it_scores_with_the_empirical_rate_not_the_posterior_mean():
    # x: 1 of 1 (rate 1.0, posterior mean 2/3); y: 9 of 10 (rate 0.9, mean 10/12).
    t = table_from_arrays("answer", ["x", "y"], ["cat.s"], [[2 / 3], [10 / 12]], [0.001, 0.001],
                          n=[[1], [10]], successes=[[1], [9]])
    act = _act(cat__s=1.0)
    assert _decide(t, act).chosen == "x"
    assert _decide(t, act, router="skill").chosen == "y"
    step = _decide(t, act)
    assert step.cause == "reference_score" and step.margin == pytest.approx(0.1)


def test_an_unseen_skill_scores_zero():
    t = table_from_arrays("answer", ["seen", "unseen"], ["cat.s"], [[0.35], [0.5]], [0.001, 0.001],
                          n=[[10], [0]], successes=[[3], [0]])
    assert _decide(t, _act(cat__s=1.0)).chosen == "seen"  # 0.3 beats the 0.0 of an unseen skill


def test_cost_only_matters_among_exact_ties():
    t = table_from_arrays("answer", ["dear", "cheap"], ["cat.s"], [[0.81], [0.80]], [0.02, 0.0002],
                          n=[[100], [100]], successes=[[81], [80]])
    for lam in (0.0, 0.5, 10.0):
        step = _decide(t, _act(cat__s=1.0), lam=lam)
        assert step.chosen == "dear" and step.lambda_interval.high is None  # lambda never changes it
    assert _decide(t, _act(cat__s=1.0), router="skill", lam=0.5).chosen == "cheap"


def test_percentages_and_fractions_give_the_same_choice():
    t = table_from_arrays("answer", ["a", "b"], ["c.s1", "c.s2"], [[0.9, 0.2], [0.5, 0.6]], [0.01, 0.01],
                          n=[[10, 10], [10, 10]], successes=[[9, 2], [5, 6]])
    assert _decide(t, _act(c__s1=60, c__s2=40)).chosen == _decide(t, _act(c__s1=0.6, c__s2=0.4)).chosen == "a"


def test_exported_scores_are_rounded_to_four_decimals_before_comparing():
    # 0.66666 and 2/3 both export as 0.6667: a tie, settled by the overall success rate.
    t = table_from_arrays("answer", ["p", "q"], ["c.s"], [[0.66], [0.66]], [0.01, 0.01],
                          n=[[100000], [3]], successes=[[66666], [2]], overall_rate=[0.4, 0.7])
    step = _decide(t, _act(c__s=1.0))
    assert step.chosen == "q" and step.cause == "reference_tie_overall"


def test_exact_ties_fall_to_a_seeded_cost_weighted_draw():
    t = table_from_arrays("answer", ["dear", "mid", "cheap"], ["c.s"], [[0.7]] * 3, [0.02, 0.01, 0.001],
                          n=[[10]] * 3, successes=[[7]] * 3, overall_rate=[0.5] * 3)
    picks = [_decide(t, _act(c__s=1.0), lam=1.0, seed=s).chosen for s in range(60)]
    assert "dear" not in picks  # weight max(0, 1 - 1 x 0.02/0.02) = 0
    assert {"mid", "cheap"} <= set(picks)
    assert picks == [_decide(t, _act(c__s=1.0), lam=1.0, seed=s).chosen for s in range(60)]  # deterministic
    step = _decide(t, _act(c__s=1.0), lam=1.0)
    assert step.cause == "reference_tie_random" and step.lambda_interval is None and "draw" in step.lambda_note


def test_select_agent_variant_breaks_ties_on_the_whole_category():
    # Equal on the active skill cat.a; b is better on the inactive sibling cat.b, which the category mean counts.
    t = table_from_arrays("answer", ["a", "b"], ["cat.a", "cat.b"], [[0.5, 0.2], [0.5, 0.9]], [0.01, 0.01],
                          n=[[10, 10], [10, 10]], successes=[[5, 2], [5, 9]])
    step = _decide(t, _act(cat__a=1.0), variant="select_agent")
    assert step.chosen == "b" and step.cause == "reference_tie_category"
    # The model-routing rule only looks at the required skills, so it goes on to the overall rate.
    assert _decide(t, _act(cat__a=1.0)).cause in ("reference_tie_overall", "reference_tie_random")


@pytest.mark.parametrize("seed", range(20))
def test_select_agent_variant_matches_a_pure_python_reimplementation(seed):
    rng = np.random.default_rng(seed)
    agents = [f"agent{i}" for i in range(int(rng.integers(2, 7)))]
    skills = sorted(f"cat{c}.s{i}" for c in range(3) for i in range(3))
    n = rng.integers(0, 6, (len(agents), len(skills))).astype(float)
    s = np.floor(n * rng.uniform(0, 1, n.shape))
    overall = np.round(rng.uniform(0.3, 0.9, len(agents)), 1)
    t = table_from_arrays("m", agents, skills, (s + 1) / (n + 2), rng.uniform(0.001, 0.01, len(agents)), n=n,
                          successes=s, overall_rate=overall)
    active = list(rng.choice(skills, 2, replace=False))
    w = rng.dirichlet(np.ones(2))
    profiles = {a: {"rates": {k: (s[i, j] / n[i, j] if n[i, j] > 0 else 0.0) for j, k in enumerate(skills)},
                    "overall": overall[i], "cost": t.cost[i]} for i, a in enumerate(agents)}
    got, cause, _ = reference_choice(t, active, w, 0.1, np.random.default_rng(0), "select_agent")
    if cause != "reference_tie_random":
        assert t.agents[got] == select_agent(profiles, dict(zip(active, w)), 0.1, random.Random(0))
