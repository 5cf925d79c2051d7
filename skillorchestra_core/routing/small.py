"""The argmax and lambda-interval rules of `routing.utility` for one decision over a small pool, in plain Python.

A decision looks at tens of agents; at that size each numpy call costs more than the arithmetic, so one decision
with its trace runs several times faster over lists. The results are identical (the same IEEE operations in the
same order, the same tie rules); larger pools, or values with NaN, go to the numpy versions.
"""

from __future__ import annotations

import math

import numpy as np

from skillorchestra_core.routing import utility

SMALL = 64


def argmax_tiebreak(values: np.ndarray, tie_rank: np.ndarray, mask: np.ndarray | None = None,
                    exclude: int | None = None) -> int:
    """utility.argmax_tiebreak; `exclude` leaves one index out (as a mask would)."""
    if len(values) > SMALL:
        if exclude is not None:
            mask = np.arange(len(values)) != exclude
        return utility.argmax_tiebreak(values, tie_rank, mask)
    v = values.tolist()
    if mask is not None:
        v = [x if m else -math.inf for x, m in zip(v, mask.tolist())]
    if exclude is not None:
        v[exclude] = -math.inf
    total = sum(v)
    if total != total and any(x != x for x in v):  # NaN: keep numpy's semantics
        return utility.argmax_tiebreak(np.array(v), tie_rank)
    top = max(v)
    tied = [i for i, x in enumerate(v) if x >= top - utility.TIE_EPS]
    if len(tied) == 1:
        return tied[0]
    ranks = tie_rank.tolist()
    return min(tied, key=ranks.__getitem__)


def top_two(values: np.ndarray, tie_rank: np.ndarray) -> tuple[int, int | None, float]:
    """(chosen, runner-up, best value but the chosen one's) in one pass: chosen = argmax_tiebreak(values), runner-up
    = argmax_tiebreak(values, exclude=chosen) (None for a single value, whose best other value is -inf)."""
    n = len(values)
    v = values.tolist() if n <= SMALL else None
    if v is not None:
        total = sum(v)
    if v is None or (total != total and any(x != x for x in v)):  # large pools and NaN: the numpy versions
        chosen = argmax_tiebreak(values, tie_rank)
        if n == 1:
            return chosen, None, -math.inf
        rest = np.asarray(values, float).copy()
        rest[chosen] = -math.inf
        return chosen, argmax_tiebreak(values, tie_rank, exclude=chosen), float(rest.max())
    if n == 1:
        return 0, None, -math.inf
    eps = utility.TIE_EPS
    # The three largest values tell whether the best and the second best are unique (the common case: no scan).
    best = sorted(v)[-3:]
    top = best[-1]
    if best[-2] < top - eps:
        chosen = v.index(top)
    else:
        ranks = tie_rank.tolist()
        chosen = min((i for i, x in enumerate(v) if x >= top - eps), key=ranks.__getitem__)
    v[chosen] = -math.inf
    second = max(v)
    if n == 2 and second > -math.inf:  # (all -inf: the chosen index ties too, as in the numpy rule)
        return chosen, 1 - chosen, second
    if n > 2 and best[-2] == second and best[-3] < second - eps:
        return chosen, v.index(second), second
    ranks = tie_rank.tolist()
    return chosen, min((i for i, x in enumerate(v) if x >= second - eps), key=ranks.__getitem__), second


def lambda_interval(c: np.ndarray, k: np.ndarray, chosen: int, tie_rank: np.ndarray):
    """utility.lambda_interval: (low, high, below, above) over lambda >= 0 where `chosen` stays the argmax."""
    cs, ks = c.tolist(), k.tolist()
    total = sum(cs) + sum(ks)
    if len(cs) > SMALL or total != total:  # large pools and NaN (or infinities): the numpy version
        return utility.lambda_interval(c, k, chosen, tie_rank)
    ranks = tie_rank.tolist()
    cc, kc = cs[chosen], ks[chosen]
    eps = utility.TIE_EPS
    ts: list = [0.0] * len(cs)  # dc / dk of each rival with another cost
    ups, downs = [], []  # rivals that are cheaper / dearer than the chosen agent
    high, low = math.inf, -math.inf
    for i in range(len(cs)):
        dk = kc - ks[i]
        if dk:
            dc = cc - cs[i]
            if -eps <= dc <= eps:
                dc = 0.0
            t = ts[i] = dc / dk
            if dk > 0:  # chosen is dearer: it loses once lambda reaches t
                ups.append(i)
                if t < high:
                    high = t
            else:  # chosen is cheaper: it wins from t upwards
                downs.append(i)
                if t > low:
                    low = t
        elif i != chosen:
            dc = cc - cs[i]
            if dc < -eps or (-eps <= dc <= eps and ranks[i] < ranks[chosen]):
                return math.nan, math.nan, None, None  # never chosen for lambda >= 0
    # Just above `high` the binding rival with the smallest slope (the cheapest) wins, as it does at `high`; just
    # below `low` the binding rival with the steepest slope (the dearest).
    above = _binding(ups, ts, high, ks, ranks, 1.0) if ups else None
    below = _binding(downs, ts, low, ks, ranks, -1.0) if downs else None
    if low <= 0.0:
        low, below = 0.0, None
    if high <= low:
        return math.nan, math.nan, None, None
    return low, high, below, above


def _binding(rivals: list[int], ts: list, edge: float, ks: list, ranks: list, sign: float) -> int:
    """Among the rivals whose threshold is `edge` (within the tie tolerance), the one with the lowest
    (sign x cost, tie rank)."""
    tol = utility.TIE_EPS * max(1.0, abs(edge))
    best = -1
    for i in rivals:
        if abs(ts[i] - edge) <= tol and (best < 0 or (sign * ks[i], ranks[i]) < (sign * ks[best], ranks[best])):
            best = i
    return best
