"""The routing math, pure numpy: utilities, the deterministic argmax, and exact lambda intervals.

U_A(lambda) = c_A - lambda * k_A with c_A = sum_s w_s * mean(A, s) and k_A the normalised cost C(A)/C_ref, where
C_ref is by default the mean cost of the mode's best-single agent (so lambda = 0.1 means: give up 0.1 of competence
to avoid paying what the default agent costs); "max" takes the most expensive agent, "usd" no normalisation. Ties
(within TIE_EPS) go to the lower cost, then to the agent name: `tie_rank` is each agent's position in that order.
Because every U_A is a line in lambda, the set of lambdas where the chosen agent stays the argmax is the intersection
over rivals of half-lines, computed exactly.
"""

from __future__ import annotations

import math

import numpy as np

TIE_EPS = 1e-9


def tie_ranks(costs: np.ndarray, names: list[str]) -> np.ndarray:
    """Each agent's position when sorted by (cost, name): lower wins a tie."""
    order = sorted(range(len(names)), key=lambda i: (float(costs[i]), names[i]))
    ranks = np.empty(len(names), dtype=np.int64)
    ranks[order] = np.arange(len(names))
    return ranks


COST_UNITS = ("normalised", "max", "usd")
COST_UNIT_HELP = ("normalised: lambda = 0.1 gives up 0.1 of competence to avoid paying what the best single agent "
                  "costs (C_ref = its mean cost); max: C_ref = the most expensive agent's cost; usd: lambda is "
                  "competence per dollar.")
_ALIASES = {"best-single": "normalised", "most-expensive": "max"}


COST_SCOPES = ("skill", "mode")


def cost_scope_name(scope: str | None = None) -> str:
    """The cost scope: given, else the `cost_scope` setting (SKILLORCHESTRA_COST_SCOPE); ValueError otherwise.
    skill: a query's cost is sum_s w_s C(A, s); mode: C(A, mode) for every query."""
    if scope is None:
        from skillorchestra_core.settings import get_settings

        scope = get_settings().cost_scope
    if scope not in COST_SCOPES:
        raise ValueError(f"unknown cost scope {scope!r}; use skill (per-skill costs) or mode (one cost per agent)")
    return scope


def cost_unit_name(cost_unit: str) -> str:
    """The canonical cost unit (aliases: best-single = normalised, most-expensive = max); ValueError otherwise."""
    unit = _ALIASES.get(cost_unit, cost_unit)
    if unit not in COST_UNITS:
        raise ValueError(f"unknown cost unit {cost_unit!r}; use normalised (C / best-single's cost), max (C / the "
                         "most expensive agent's cost) or usd")
    return unit


def cost_reference(costs: np.ndarray, cost_unit: str = "normalised", general: np.ndarray | None = None,
                   names: list[str] | None = None) -> tuple[float, int | None]:
    """(C_ref, index of the agent it comes from or None). normalised: the best-single agent (highest pooled
    competence `general`, ties to the lower cost, then the name); max: the most expensive agent; usd: 1.
    A reference agent that costs nothing falls back to the most expensive one, so k stays finite."""
    unit = cost_unit_name(cost_unit)
    costs = np.asarray(costs, float)
    if unit == "usd" or not len(costs):
        return (1.0 if unit == "usd" else 0.0), None
    if unit == "normalised" and general is not None:
        names = names or [str(i) for i in range(len(costs))]
        g = np.asarray(general, float)
        best = min(np.flatnonzero(g >= g.max() - TIE_EPS), key=lambda i: (costs[i], names[i]))
        if costs[best] > 0:
            return float(costs[best]), int(best)
    top = int(np.argmax(costs))
    return float(costs[top]), top


def normalised_costs(costs: np.ndarray, cost_unit: str = "normalised", general: np.ndarray | None = None,
                     names: list[str] | None = None) -> tuple[np.ndarray, float]:
    """(k, C_ref) with k = C(A) / C_ref (see cost_reference); without `general`, normalised uses the maximum."""
    c_ref, _ = cost_reference(costs, cost_unit, general, names)
    costs = np.asarray(costs, float)
    return (costs / c_ref if c_ref > 0 else np.zeros(len(costs))), c_ref


def competence(mean: np.ndarray, idx: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """c_A = sum_s w_s * mean(A, s) for every agent (rows of `mean`)."""
    return mean[:, idx] @ weights


def argmax_tiebreak(values: np.ndarray, tie_rank: np.ndarray, mask: np.ndarray | None = None) -> int:
    """Index of the largest value; values within TIE_EPS of it are tied and the lowest tie_rank wins."""
    v = values if mask is None else np.where(mask, values, -np.inf)
    top = v.max()
    tied = np.flatnonzero(v >= top - TIE_EPS)
    return int(tied[np.argmin(tie_rank[tied])]) if len(tied) > 1 else int(tied[0])


def choose(c: np.ndarray, k: np.ndarray, lam: float, tie_rank: np.ndarray) -> int:
    """The utility-and-argmax core: the chosen agent's index at `lam`."""
    return argmax_tiebreak(c - lam * k, tie_rank)


def lambda_interval(c: np.ndarray, k: np.ndarray, chosen: int, tie_rank: np.ndarray):
    """Exact [low, high) (high = inf when unbounded) over lambda >= 0 where `chosen` stays the argmax, with the
    agent that takes over just below `low` and at `high`. Returns (low, high, below, above); below/above are indices
    or None. Requires `chosen` to be the argmax at some lambda >= 0."""
    dc = c[chosen] - c
    dk = k[chosen] - k
    dc = np.where(np.abs(dc) <= TIE_EPS, 0.0, dc)
    rivals = np.arange(len(c)) != chosen
    low, high, below, above = 0.0, math.inf, None, None
    up = rivals & (dk > 0)  # chosen is dearer: it loses once lambda reaches dc/dk (the cheaper rival wins the tie)
    if up.any():
        t = np.where(up, dc / np.where(up, dk, 1.0), np.inf)
        high = float(t.min())
        binding = np.flatnonzero(up & (np.abs(t - high) <= TIE_EPS * max(1.0, abs(high))))
        # Just above `high` the binding rival with the smallest slope (the cheapest) wins, as it does at `high`.
        above = int(binding[np.lexsort((tie_rank[binding], k[binding]))[0]])
    down = rivals & (dk < 0)  # chosen is cheaper: it wins from dc/dk upwards (ties go to it)
    if down.any():
        t = np.where(down, dc / np.where(down, dk, 1.0), -np.inf)
        low = float(t.max())
        binding = np.flatnonzero(down & (np.abs(t - low) <= TIE_EPS * max(1.0, abs(low))))
        # Just below `low` the binding rival with the steepest slope (the dearest) wins.
        below = int(binding[np.lexsort((tie_rank[binding], -k[binding]))[0]])
        if low <= 0.0:
            low, below = 0.0, None
    same = rivals & (dk == 0) & ((dc < 0) | ((dc == 0) & (tie_rank < tie_rank[chosen])))
    if same.any() or high <= low:
        return math.nan, math.nan, None, None  # never chosen for lambda >= 0
    return low, high, below, above


def lambda_path(c: np.ndarray, k: np.ndarray, tie_rank: np.ndarray, start: float = 0.0):
    """The upper envelope over lambda >= start: [(low, high, agent_index), ...] covering [start, inf)."""
    segments = []
    lam = start
    agent = choose(c, k, lam, tie_rank)
    for _ in range(len(c) + 1):
        low, high, _, above = lambda_interval(c, k, agent, tie_rank)
        if math.isnan(low):
            break
        segments.append((max(low, lam), high, agent))
        if math.isinf(high) or above is None:
            break
        lam, agent = high, above
    return segments


def winning_set(c: np.ndarray, k: np.ndarray, agent: int, tie_rank: np.ndarray):
    """[low, high) of lambdas >= 0 at which `agent` would be chosen, or None when no lambda makes it win."""
    low, high, _, _ = lambda_interval(c, k, agent, tie_rank)
    if math.isnan(low):
        return None
    # lambda_interval assumes the agent is chosen somewhere; check it really is at `low`.
    if choose(c, k, low, tie_rank) != agent:
        return None
    return low, high
