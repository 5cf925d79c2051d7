import numpy as np
import pytest
from scipy import stats

from skillorchestra_core import posterior


def test_mean_and_interval_match_scipy_on_a_grid():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.2, 60, 500), rng.uniform(0.2, 60, 500)
    for level in (0.5, 0.8, 0.9, 0.95, 0.99):
        lo, hi = posterior.credible_interval(a, b, level)
        ref_lo, ref_hi = stats.beta.interval(level, a, b)
        np.testing.assert_allclose(lo, ref_lo, rtol=1e-10)
        np.testing.assert_allclose(hi, ref_hi, rtol=1e-10)
    np.testing.assert_allclose(posterior.posterior_mean(a, b), stats.beta.mean(a, b))


def test_shared_posteriors_are_computed_once_with_the_same_values_bit_for_bit():
    """Large inputs go through the distinct (alpha, beta) pairs: the values equal the one-by-one computation, in
    shape and to the bit, with repeats, a grid shape and a scalar beta broadcast."""
    from scipy import special

    rng = np.random.default_rng(3)
    a = np.round(rng.uniform(0.5, 30, (40, 50)), 1)  # many repeats
    b = np.round(rng.uniform(0.5, 30, (40, 50)), 1)
    tail = (1.0 - 0.9) / 2.0  # as the function computes it (0.04999...)
    lo, hi = posterior.credible_interval(a, b, 0.9)
    assert lo.shape == hi.shape == a.shape and len(np.unique(a + 1j * b)) < a.size
    np.testing.assert_array_equal(lo, special.betaincinv(a, b, tail))
    np.testing.assert_array_equal(hi, special.betaincinv(a, b, 1.0 - tail))
    lo, _ = posterior.credible_interval(a.ravel(), 2.0, 0.9)
    np.testing.assert_array_equal(lo, special.betaincinv(a.ravel(), 2.0, tail))


def test_hand_computed_values():
    # Beta(8, 4): mean 2/3; the known 95% interval (0.390, 0.891).
    assert posterior.posterior_mean(8, 4) == pytest.approx(2 / 3)
    lo, hi = posterior.credible_interval(8, 4, 0.95)
    assert (round(float(lo), 3), round(float(hi), 3)) == (0.390, 0.891)
    # Beta(1, 1): the interval is exactly the central `level` of [0, 1].
    lo, hi = posterior.credible_interval(1, 1, 0.9)
    assert (float(lo), float(hi)) == pytest.approx((0.05, 0.95))


def test_weighted_counts_update_the_posterior():
    # Two trajectories, one success and one failure, each with weight 0.5 on the skill: S = F = 0.5.
    a, b = posterior.posterior_params([0.5], [0.5], [1.0], [1.0])
    assert (float(a[0]), float(b[0])) == (1.5, 1.5)


def test_hierarchical_prior_centres_on_pooled_rate():
    a0, b0 = posterior.hierarchical_prior([8], [10], strength=2.0)
    p = 9 / 12
    assert (float(a0[0]), float(b0[0])) == pytest.approx((2 * p, 2 * (1 - p)))
    assert float(posterior.posterior_mean(a0, b0)[0]) == pytest.approx(p)  # no evidence: the pooled rate, not 0
    with pytest.raises(ValueError):
        posterior.hierarchical_prior([1], [2], strength=0)


def test_empirical_rate_is_nan_without_evidence():
    rate = posterior.empirical_rate([3, 0], [1, 0])
    assert rate[0] == 0.75 and np.isnan(rate[1])


def test_interval_level_is_validated():
    with pytest.raises(ValueError):
        posterior.credible_interval(2, 2, 1.0)


def test_log_marginal_likelihood_matches_beta_binomial():
    # 3 successes, 1 failure under Beta(1,1): p(sequence) = B(4, 2) / B(1, 1) = 1/20.
    assert float(posterior.log_marginal_likelihood(3, 1)) == pytest.approx(np.log(1 / 20))
