"""The routing math: utilities and argmax against hand-computed cases, deterministic ties, exact lambda intervals."""

import math

import numpy as np
import pytest

from skillorchestra_core.routing.activation import Activation
from skillorchestra_core.routing.engine import RouteOptions, decide_step
from skillorchestra_core.routing.explain import choice_at, path_segments
from skillorchestra_core.routing.model import table_from_arrays
from skillorchestra_core.routing.trace import ActiveSkill
from skillorchestra_core.routing.utility import (
    argmax_tiebreak,
    choose,
    lambda_interval,
    lambda_path,
    normalised_costs,
    tie_ranks,
    winning_set,
)

# Hand-computed: weights s1 0.75, s2 0.25; c = (0.825, 0.70, 0.475); costs 0.010/0.004/0.001 -> k = (1, 0.4, 0.1).
AGENTS = ["alpha", "bravo", "charlie"]
MEAN = [[0.9, 0.6], [0.7, 0.7], [0.5, 0.4]]
COST = [0.010, 0.004, 0.001]


def _table():
    return table_from_arrays("answer", AGENTS, ["s1", "s2"], MEAN, COST)


def _step(lam, cost_unit="normalised", weights=(0.75, 0.25)):
    act = Activation([ActiveSkill(skill=f"s{i + 1}", weight=w) for i, w in enumerate(weights)], "given")
    return decide_step(0, _table(), act, RouteOptions(lam=lam, cost_unit=cost_unit))


def test_utility_matches_the_hand_computation():
    step = _step(0.1)
    u = {c.agent: c.utility for c in step.candidates}
    assert u == pytest.approx({"alpha": 0.725, "bravo": 0.66, "charlie": 0.465})
    alpha = step.candidate("alpha")
    assert alpha.mean == pytest.approx(0.825)
    assert alpha.cost_norm == pytest.approx(1.0) and alpha.penalty == pytest.approx(0.1)
    assert [t.contribution for t in alpha.contributions] == pytest.approx([0.675, 0.15])
    assert sum(t.contribution for t in alpha.contributions) == pytest.approx(alpha.mean)
    assert step.cost_ref == pytest.approx(0.010)
    assert (step.chosen, step.runner_up, step.cause) == ("alpha", "bravo", "skill_utility")
    assert step.margin == pytest.approx(0.065)
    assert step.candidate("alpha").rank == 0 and step.candidate("bravo").rank == 1


def test_the_lambda_interval_is_exact_and_flips_where_predicted():
    step = _step(0.1)
    iv = step.lambda_interval
    assert iv.low == 0.0 and iv.high == pytest.approx(0.125 / 0.6) and iv.above == "bravo" and iv.below is None
    assert _step(iv.high - 1e-6).chosen == "alpha"
    assert _step(iv.high).chosen == "bravo"  # at the end the tie goes to the cheaper agent: the interval is open
    nxt = _step(iv.high).lambda_interval
    assert nxt.low == pytest.approx(iv.high) and nxt.below == "alpha"
    assert nxt.high == pytest.approx(0.225 / 0.3) and nxt.above == "charlie"
    assert _step(nxt.low).chosen == "bravo"  # closed at its low end
    assert _step(nxt.low - 1e-6).chosen == "alpha"
    assert _step(nxt.high - 1e-6).chosen == "bravo" and _step(nxt.high).chosen == "charlie"
    last = _step(5.0).lambda_interval
    assert last.high is None and last.low == pytest.approx(0.75)


def test_usd_cost_unit_uses_raw_dollars():
    step = _step(10.0, cost_unit="usd")
    assert step.cost_ref == 1.0
    assert step.candidate("alpha").penalty == pytest.approx(0.1)  # 10 points per dollar x $0.01
    assert step.chosen == "alpha"
    assert step.lambda_interval.high == pytest.approx(0.125 / 0.006)


def test_ties_break_by_cost_then_name_whatever_the_input_order():
    mean = [[0.8], [0.8], [0.8]]
    for agents, cost in ((["b", "a", "c"], [0.002, 0.002, 0.001]), (["c", "b", "a"], [0.001, 0.002, 0.002])):
        table = table_from_arrays("m", agents, ["s"], mean, cost)
        act = Activation([ActiveSkill(skill="s", weight=1.0)], "given")
        assert decide_step(0, table, act, RouteOptions(lam=0.0)).chosen == "c"  # the cheapest
    table = table_from_arrays("m", ["zed", "amy"], ["s"], [[0.8], [0.8]], [0.002, 0.002])
    step = decide_step(0, table, Activation([ActiveSkill(skill="s", weight=1.0)], "given"), RouteOptions(lam=0.3))
    assert step.chosen == "amy" and step.cause == "tie_break_cost" and step.margin == 0.0
    assert step.lambda_interval.low == 0.0 and step.lambda_interval.high is None


def test_argmax_tiebreak_treats_values_within_eps_as_tied():
    ranks = tie_ranks(np.array([3.0, 1.0, 2.0]), ["a", "b", "c"])
    assert list(ranks) == [2, 0, 1]
    assert argmax_tiebreak(np.array([0.5, 0.5 - 1e-12, 0.1]), ranks) == 1
    assert argmax_tiebreak(np.array([0.5, 0.49, 0.1]), ranks) == 0
    assert argmax_tiebreak(np.array([0.5, 0.5, 0.9]), ranks, mask=np.array([True, True, False])) == 1


def test_normalised_costs():
    k, ref = normalised_costs(np.array([0.01, 0.005, 0.0]))
    assert ref == 0.01 and list(k) == [1.0, 0.5, 0.0]
    k, ref = normalised_costs(np.zeros(2))
    assert ref == 0.0 and list(k) == [0.0, 0.0]
    with pytest.raises(ValueError):
        normalised_costs(np.ones(2), "euro")


def test_a_dominated_agent_never_wins():
    c, k = np.array([0.9, 0.8]), np.array([0.5, 1.0])  # b is worse and dearer
    ranks = tie_ranks(k, ["a", "b"])
    assert winning_set(c, k, 1, ranks) is None
    assert winning_set(c, k, 0, ranks) == (0.0, math.inf)


@pytest.mark.parametrize("seed", range(25))
def test_intervals_and_path_agree_with_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    c, cost = rng.uniform(0.2, 0.95, n), rng.choice([0.001, 0.002, 0.004, 0.01, 0.02], n)
    k = cost / cost.max()
    names = [f"a{i}" for i in range(n)]
    ranks = tie_ranks(cost, names)
    segments = lambda_path(c, k, ranks)
    assert segments[0][0] == 0.0 and math.isinf(segments[-1][1])
    for (lo, hi, agent), nxt in zip(segments, segments[1:] + [None]):
        assert choose(c, k, lo, ranks) == agent
        if not math.isinf(hi):
            assert choose(c, k, hi, ranks) == nxt[2] != agent
            assert choose(c, k, (lo + hi) / 2, ranks) == agent
            assert choose(c, k, hi - 1e-7 * max(1, hi), ranks) == agent
        if lo > 0:
            assert choose(c, k, lo - 1e-7 * max(1, lo), ranks) != agent
    for lam in rng.uniform(0, 3, 40):
        a = choose(c, k, lam, ranks)
        low, high, _, _ = lambda_interval(c, k, a, ranks)
        assert low <= lam < high


def test_choice_at_and_segments_from_a_stored_step():
    step = _step(0.1)
    assert [s.agent for s in path_segments(step)] == ["alpha", "bravo", "charlie"]
    assert choice_at(step, 0.5) == "bravo" and choice_at(step, 1.0) == "charlie"


def test_batch_competence_of_a_mode_without_skills_is_the_general_rate():
    """A version with no skills (a selection candidate that pruned them all) still routes, and its diff draws."""
    import numpy as np

    from skillorchestra_core.routing.batch import batch_competence
    from skillorchestra_core.routing.model import table_from_arrays

    table = table_from_arrays("m", ["a", "b"], [], np.zeros((2, 0)), [1.0, 2.0], general=[0.3, 0.7])
    out = batch_competence(table, np.zeros((3, 0), np.int64), np.zeros((3, 0)))
    assert out.tolist() == [[0.3, 0.7]] * 3
