"""Replay validation: a hand-computed case, and agreement with the held-out evaluator's choices."""

import numpy as np
import pytest

from skillorchestra_core.routing.evaluate import choose_all
from skillorchestra_core.routing.model import table_from_arrays
from skillorchestra_core.selection.replay import choose_grid, replay


def test_replay_accuracy_and_cost_by_hand():
    # Two agents: "big" (competence 0.9, cost 1.0) and "small" (0.6, 0.2). Utilities at lambda 0.5:
    # big 0.9 - 0.5 = 0.4, small 0.6 - 0.1 = 0.5 -> small; at lambda 0: big.
    c = np.array([[[0.9, 0.6]] * 3])  # (N=1, Q=3, A=2)
    k = np.array([1.0, 0.2])
    rank = np.array([1, 0])
    score = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, np.nan]])  # query 3: no record for small
    cost = np.array([[2e-4, 4e-5], [2e-4, 4e-5], [2e-4, 4e-5]])
    g = replay(c, k, rank, [0.0, 0.5], score, cost)
    assert g.chosen[0].tolist() == [[0, 0, 0], [1, 1, 1]]
    assert g.accuracy[0, 0] == pytest.approx(2 / 3)
    assert g.accuracy[0, 1] == pytest.approx(1 / 2)  # two scored queries, one success
    assert g.n_scored[0].tolist() == [3, 2]
    assert g.mean_cost[0].tolist() == pytest.approx([2e-4, 4e-5])


def test_grid_equals_the_evaluator_choice_for_every_candidate_and_lambda():
    rng = np.random.default_rng(3)
    t = table_from_arrays("answer", ["a", "b", "c", "d"], ["s1", "s2"], rng.random((4, 2)), [0.1, 0.1, 0.3, 0.05])
    c = rng.random((5, 50, 4)).round(1)  # rounding makes exact ties, which both must break alike
    lambdas = np.linspace(0, 1, 21)
    k = t.costs_in("normalised")[0]
    got = choose_grid(c, k, t.tie_rank, lambdas)
    for n in range(5):
        np.testing.assert_array_equal(got[n], choose_all(t, c[n], lambdas, "normalised"))
