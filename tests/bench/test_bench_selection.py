"""Replay sweep benchmark: 30 candidates x 21 lambdas x 1,000 queries (9 agents), activation excluded.

Prints the sweep time and decisions per second, against two baselines measured in the same run: the held-out
evaluator's per-lambda loop (`routing.evaluate.choose_all`, one candidate at a time; same choices, checked equal) and
one decision at a time (a numpy argmax per (candidate, lambda, query), on a sample). No timed assertions.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from skillorchestra_core.routing.evaluate import choose_all
from skillorchestra_core.routing.model import table_from_arrays
from skillorchestra_core.selection.replay import replay, score_grid

pytestmark = pytest.mark.bench

N_CAND, N_LAM, N_Q, N_AGENTS = 30, 21, 1000, 9


def test_bench_replay_sweep(bench_report):
    rng = np.random.default_rng(0)
    agents = [f"agent-{i}" for i in range(N_AGENTS)]
    table = table_from_arrays("answer", agents, ["s"], rng.random((N_AGENTS, 1)), rng.uniform(1e-5, 1e-3, N_AGENTS))
    c = rng.random((N_CAND, N_Q, N_AGENTS))
    score = (rng.random((N_Q, N_AGENTS)) < 0.6).astype(float)
    cost = np.tile(table.cost, (N_Q, 1))
    lambdas = np.linspace(0, 1, N_LAM)
    k = table.costs_in("normalised")[0]

    start = time.perf_counter()
    grid = replay(c, k, table.tie_rank, lambdas, score, cost)
    sweep_s = time.perf_counter() - start

    start = time.perf_counter()
    loop = np.stack([choose_all(table, c[n], lambdas, "normalised") for n in range(N_CAND)])
    loop_grid = score_grid(loop, score, cost)
    loop_s = time.perf_counter() - start

    sample = [(int(n), float(lambdas[j]), int(q)) for n, j, q in zip(rng.integers(0, N_CAND, 5000),
                                                                      rng.integers(0, N_LAM, 5000),
                                                                      rng.integers(0, N_Q, 5000))]
    start = time.perf_counter()
    one = [int(np.argmax(c[n, q] - lam * k)) for n, lam, q in sample]
    one_rate = len(sample) / (time.perf_counter() - start)

    assert one == [int(grid.chosen[n, int(round(lam * (N_LAM - 1))), q]) for n, lam, q in sample]
    np.testing.assert_array_equal(grid.chosen, loop)
    np.testing.assert_allclose(grid.accuracy, loop_grid.accuracy)
    decisions = N_CAND * N_LAM * N_Q
    bench_report(f"Replay sweep, {N_CAND} candidates x {N_LAM} lambdas x {N_Q} queries", decisions / sweep_s,
                 "decisions/s", baseline=one_rate, baseline_label="one decision at a time", higher_is_better=True)
    print(f"\nreplay sweep {N_CAND} candidates x {N_LAM} lambdas x {N_Q} queries ({N_AGENTS} agents): "
          f"{sweep_s:.3f} s, {decisions / sweep_s:,.0f} decisions/s; per-candidate evaluator loop {loop_s:.3f} s "
          f"({loop_s / sweep_s:.2f}x the sweep's time); one decision at a time {one_rate:,.0f} decisions/s "
          f"(the sweep is {decisions / sweep_s / one_rate:.0f}x faster)")
