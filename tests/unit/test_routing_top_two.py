"""`small.top_two` (the skill router's one-pass choice, runner-up and cause) agrees with two argmax calls."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skillorchestra_core.routing import small, utility


def _two_calls(values: np.ndarray, rank: np.ndarray):
    chosen = utility.argmax_tiebreak(values, rank)
    if len(values) == 1:
        return chosen, None, -math.inf
    mask = np.arange(len(values)) != chosen
    rest = np.where(mask, values, -np.inf)
    return chosen, utility.argmax_tiebreak(values, rank, mask), float(rest.max())


@pytest.mark.parametrize("n", [1, 2, 5, 20, small.SMALL + 3])
def test_top_two_matches_two_argmax_calls(n):
    rng = np.random.default_rng(n)
    for trial in range(300):
        values = rng.choice([0.1, 0.2, 0.2 + 1e-10, 0.5, -np.inf], n) if trial % 3 == 0 else rng.random(n)
        rank = rng.permutation(n)
        got = small.top_two(values, rank)
        assert got == _two_calls(values, rank), (values, rank)

