"""The list-based decision rules give exactly the numpy rules' answers, ties and degenerate cases included."""

import numpy as np
import pytest

from skillorchestra_core.routing import small, utility


def _cases(seed: int, n: int = 400):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        a = int(rng.integers(1, 12))
        # Few distinct values so exact ties, equal costs and equal utilities are common.
        c = rng.choice([0.2, 0.5, 0.5 + 1e-12, 0.7, 0.9], a) if rng.random() < 0.5 else rng.random(a)
        k = rng.choice([0.0, 0.1, 0.5, 1.0], a) if rng.random() < 0.5 else rng.random(a)
        yield c.astype(float), k.astype(float), rng.permutation(a).astype(np.int64), float(rng.choice([0, 0.1, 2]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_argmax_and_interval_match_the_numpy_rules(seed):
    for c, k, rank, lam in _cases(seed):
        u = c - lam * k
        chosen = utility.argmax_tiebreak(u, rank)
        assert small.argmax_tiebreak(u, rank) == chosen
        if len(u) > 1:
            mask = np.arange(len(u)) != chosen
            assert small.argmax_tiebreak(u, rank, exclude=chosen) == utility.argmax_tiebreak(u, rank, mask)
            assert small.argmax_tiebreak(u, rank, mask=mask) == utility.argmax_tiebreak(u, rank, mask)
        for agent in range(len(c)):
            expected = utility.lambda_interval(c, k, agent, rank)
            got = small.lambda_interval(c, k, agent, rank)
            assert got == expected or (np.isnan(got[0]) and np.isnan(expected[0])), (c, k, rank, agent)


def test_special_values_fall_back_to_numpy():
    rank = np.arange(3)
    scores = np.array([np.nan, 0.5, -np.inf])
    for rule in (small.argmax_tiebreak, utility.argmax_tiebreak):  # the same outcome, here an error
        with pytest.raises(IndexError):
            rule(scores, rank)
    assert small.argmax_tiebreak(np.array([-np.inf, 0.1, -np.inf]), rank) == 1
    big = np.random.default_rng(0).random(small.SMALL + 1)
    r = np.arange(len(big))
    assert small.argmax_tiebreak(big, r) == utility.argmax_tiebreak(big, r)
    assert small.lambda_interval(big, big / 2, 3, r) == utility.lambda_interval(big, big / 2, 3, r)


def test_a_lazy_step_dumps_compares_and_reads_like_an_eager_one():
    from skillorchestra_core.routing.activation import Activation
    from skillorchestra_core.routing.engine import RouteOptions, decide_step
    from skillorchestra_core.routing.model import table_from_arrays
    from skillorchestra_core.routing.trace import ActiveSkill, RouteTrace

    rng = np.random.default_rng(4)
    table = table_from_arrays("answer", [f"a{i}" for i in range(6)], [f"s{j}" for j in range(8)],
                              rng.random((6, 8)), rng.uniform(0.001, 0.01, 6))
    act = Activation([ActiveSkill(skill="s1", weight=0.7), ActiveSkill(skill="s5", weight=0.3)], "given")
    for router in ("skill", "reference-rule", "oracle", "best-single"):
        opts = RouteOptions(router=router, lam=0.3)
        eager = decide_step(0, table, act, opts, lazy=False)
        lazy = decide_step(0, table, act, opts)
        assert "candidates" not in lazy.__dict__  # nothing built yet
        assert lazy.model_dump() == eager.model_dump() and "candidates" in lazy.__dict__
        again = decide_step(0, table, act, opts)
        assert again == eager and eager == decide_step(0, table, act, opts)
        assert decide_step(0, table, act, opts).candidate(eager.chosen) == eager.candidate(eager.chosen)
        assert len(decide_step(0, table, act, opts).candidates) == 6
        trace = RouteTrace(handbook="h", router=router, lam=0.3, query="q", steps=[decide_step(0, table, act, opts)])
        full = RouteTrace(handbook="h", router=router, lam=0.3, query="q", steps=[eager],
                          created_at=trace.created_at)
        assert trace.to_json() == full.to_json() and trace.to_dict() == full.to_dict()
        assert RouteTrace.from_json(trace.to_json()) == full
