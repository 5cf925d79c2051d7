"""Pareto frontier properties (hypothesis), the selection objective's tie rule and the bootstrap bands."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skillorchestra_core.selection.pareto import bootstrap, frontier, select

values = st.floats(min_value=0, max_value=1, allow_nan=False).map(lambda x: round(x, 2))  # rounding makes ties
points = st.lists(st.tuples(values, values), min_size=1, max_size=40)


def dominated(i, pts):
    ci, ai = pts[i]
    return any(c <= ci and a >= ai and (c < ci or a > ai) for c, a in pts)


@given(points)
def test_frontier_keeps_exactly_the_non_dominated_points(pts):
    keep = frontier([c for c, _ in pts], [a for _, a in pts])
    assert [bool(k) for k in keep] == [not dominated(i, pts) for i in range(len(pts))]


@given(points, st.randoms(use_true_random=False))
def test_frontier_does_not_depend_on_the_order(pts, rnd):
    order = list(range(len(pts)))
    rnd.shuffle(order)
    keep = frontier([c for c, _ in pts], [a for _, a in pts])
    shuffled = frontier([pts[i][0] for i in order], [pts[i][1] for i in order])
    assert [bool(shuffled[j]) for j in range(len(order))] == [bool(keep[i]) for i in order]


@settings(max_examples=50)
@given(values, values, st.integers(min_value=2, max_value=5))
def test_identical_points_are_all_kept_and_a_cheaper_equal_point_wins(c, a, n):
    assert frontier([c] * n, [a] * n).all()
    if c > 0:
        assert frontier([c, c / 2], [a, a]).tolist() == [False, True]


def test_nan_points_are_never_on_the_frontier():
    assert frontier([0.1, np.nan, 0.2], [0.5, 0.9, np.nan]).tolist() == [True, False, False]


def test_selection_maximises_the_objective_and_ties_to_fewer_skills():
    acc, cost, skills = [0.8, 0.7, 0.7, 0.5], [1.0, 0.5, 0.5, 0.1], [10, 7, 3, 0]
    assert select(acc, cost, skills, 0.0) == 0
    assert select(acc, cost, skills, 0.2) == 2  # 0.6 for both the 7- and the 3-skill run: fewer skills wins
    assert select(acc, cost, skills, 5.0) == 3


def test_bootstrap_bands_bracket_the_estimate_and_are_reproducible():
    rng = np.random.default_rng(0)
    score = (rng.random((3, 300)) < np.array([[0.2], [0.5], [0.9]])).astype(float)
    cost = rng.random((3, 300))
    a = bootstrap(score, cost, np.random.default_rng(7))
    b = bootstrap(score, cost, np.random.default_rng(7))
    np.testing.assert_array_equal(a.acc_low, b.acc_low)
    mean = score.mean(axis=1)
    assert (a.acc_low < mean).all() and (mean < a.acc_high).all()
    assert (a.acc_high - a.acc_low < 0.15).all() and (a.cost_low < cost.mean(axis=1)).all()
