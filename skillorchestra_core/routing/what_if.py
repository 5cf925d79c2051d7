"""One step (or a whole trace) seen at another lambda: the chosen agent, runner-up, margin, lambda interval and the
candidate order, all from the same utilities, so every view of a what-if lambda agrees with every other.

At the lambda a step was routed with, the stored decision is returned unchanged. Steps decided by a rule lambda
does not move (baselines, the reference rule, the oracle) keep their stored decision at every lambda.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skillorchestra_core.routing.explain import lambda_sensitive
from skillorchestra_core.routing.trace import LambdaInterval, RouteTrace, StepTrace
from skillorchestra_core.routing.utility import argmax_tiebreak, choose, lambda_interval, tie_ranks

_SAME_LAMBDA = 1e-12


@dataclass(frozen=True)
class StepAt:
    lam: float
    chosen: str | None
    runner_up: str | None
    margin: float | None
    interval: LambdaInterval | None
    order: tuple[str, ...]  # candidates, best first at `lam`
    utilities: dict[str, float]  # mean - lam x cost_norm per candidate
    changed: bool  # the chosen agent differs from the stored one
    recomputed: bool  # False: the stored decision (same lambda, or a rule lambda does not move)


def step_at(step: StepTrace, lam: float, routed_lam: float | None = None) -> StepAt:
    """`step` at `lam`; `routed_lam` is the trace's lambda (the stored decision is returned there)."""
    utilities = {c.agent: c.mean - lam * c.cost_norm for c in step.candidates}
    same = routed_lam is not None and abs(lam - routed_lam) <= _SAME_LAMBDA
    if same or not lambda_sensitive(step) or len(step.candidates) == 0:
        order = tuple(c.agent for c in sorted(step.candidates, key=lambda c: c.rank))
        return StepAt(lam, step.chosen, step.runner_up, step.margin, step.lambda_interval, order, utilities,
                      False, False)
    agents = [c.agent for c in step.candidates]
    c = np.array([x.mean for x in step.candidates])
    k = np.array([x.cost_norm for x in step.candidates])
    rank = tie_ranks(np.array([x.cost for x in step.candidates]), agents)
    u = c - lam * k
    chosen = choose(c, k, lam, rank)
    runner = argmax_tiebreak(u, rank, np.arange(len(agents)) != chosen) if len(agents) > 1 else None
    rest = [int(i) for i in np.lexsort((rank, -np.round(u, 9))) if i not in (chosen, runner)]
    order = tuple(agents[i] for i in [chosen] + ([runner] if runner is not None else []) + rest)
    low, high, below, above = lambda_interval(c, k, chosen, rank)
    interval = LambdaInterval(low=low, high=None if np.isinf(high) else high,
                              below=None if below is None else agents[below],
                              above=None if above is None else agents[above],
                              note=step.lambda_interval.note if step.lambda_interval else "")
    margin = None if runner is None else float(u[chosen] - u[runner])
    return StepAt(lam, agents[chosen], None if runner is None else agents[runner], margin, interval, order,
                  utilities, agents[chosen] != step.chosen, True)


@dataclass(frozen=True)
class TraceAt:
    lam: float
    steps: tuple[StepAt, ...]
    chosen_agent: str | None  # the last step's agent at `lam`
    changed: tuple[int, ...]  # indexes of the steps whose agent differs from the stored one


def trace_at(trace: RouteTrace, lam: float) -> TraceAt:
    steps = tuple(step_at(s, lam, trace.lam) for s in trace.steps)
    chosen = steps[-1].chosen if steps else trace.chosen_agent
    return TraceAt(lam, steps, chosen, tuple(i for i, s in enumerate(steps) if s.changed))
