"""Bayes factors for refinement, over arrays of weighted success/failure counts (pure, vectorised).

Each agent's outcomes on a set of queries are Binomial with an unknown rate under a Beta(a0, b0) prior; the marginal
likelihood integrates the rate out (`posterior.log_marginal_likelihood`). Comparing "one rate" with "two rates" on
the same data gives a log Bayes factor whose Occam penalty grows with the evidence, so more data is needed to claim
a difference than to fit one: no p-value thresholds, no tuning of an effect size.

Thresholds are on the natural-log scale. ln 10 (a Bayes factor of 10) is "strong evidence" on Jeffreys' scale; summed
over agents it asks the data, all agents together, to favour one model ten to one.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from skillorchestra_core import posterior

LN10 = math.log(10.0)


def split_log_bf(s: ArrayLike, f: ArrayLike, a0: float = 1.0, b0: float = 1.0) -> NDArray[np.float64]:
    """Per-agent log BF of "one rate per group" against "one rate for all". `s`, `f`: (agents, groups) counts."""
    s, f = np.asarray(s, float), np.asarray(f, float)
    separate = posterior.log_marginal_likelihood(s, f, a0, b0).sum(axis=-1)
    shared = posterior.log_marginal_likelihood(s.sum(axis=-1), f.sum(axis=-1), a0, b0)
    return separate - shared


def merge_log_bf(s1: ArrayLike, f1: ArrayLike, s2: ArrayLike, f2: ArrayLike,
                 a0: float = 1.0, b0: float = 1.0) -> NDArray[np.float64]:
    """Per-agent log BF of "both skills share one rate" against "each skill its own rate" (any broadcastable shape)."""
    s1, f1, s2, f2 = (np.asarray(x, float) for x in (s1, f1, s2, f2))
    shared = posterior.log_marginal_likelihood(s1 + s2, f1 + f2, a0, b0)
    separate = posterior.log_marginal_likelihood(s1, f1, a0, b0) + posterior.log_marginal_likelihood(s2, f2, a0, b0)
    return shared - separate


def agent_rate_variance(s: ArrayLike, f: ArrayLike, min_obs: float = 3.0) -> tuple[float, int]:
    """The reference rule's statistic: population variance of the empirical rates of agents with at least `min_obs`
    observations, and how many agents that is."""
    s, f = np.asarray(s, float), np.asarray(f, float)
    n = s + f
    keep = n >= min_obs
    if keep.sum() < 2:
        return 0.0, int(keep.sum())
    rates = s[keep] / n[keep]
    return float(rates.var()), int(keep.sum())
