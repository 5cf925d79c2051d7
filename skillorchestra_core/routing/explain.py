"""Explanations computed from a stored step alone: the choice at another lambda, the lambda path (which agent wins
on which lambda range), and "why not agent B?" (what B would need to win)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from skillorchestra_core.routing.trace import StepTrace
from skillorchestra_core.routing.utility import TIE_EPS, choose, lambda_path, tie_ranks, winning_set

SKILL_ROUTER_CAUSES = ("skill_utility", "tie_break_cost", "fallback_no_skills", "single_candidate",
                       "oracle_no_record")


def _arrays(step: StepTrace):
    agents = [c.agent for c in step.candidates]
    c = np.array([x.mean for x in step.candidates])
    k = np.array([x.cost_norm for x in step.candidates])
    # Ties go to the lower mode cost, as the router breaks them (older traces carry only `cost`).
    cost = np.array([x.cost if x.mode_cost is None else x.mode_cost for x in step.candidates])
    return agents, c, k, tie_ranks(cost, agents)


def lambda_sensitive(step: StepTrace) -> bool:
    """True when this step's choice follows the skill utility (so lambda moves it)."""
    return step.cause in SKILL_ROUTER_CAUSES


def choice_at(step: StepTrace, lam: float) -> str:
    """The agent the skill utility picks at `lam` (exact: U_A = mean_A - lam x cost_norm_A)."""
    agents, c, k, rank = _arrays(step)
    return agents[choose(c, k, lam, rank)]


@dataclass(frozen=True)
class Segment:
    low: float
    high: float | None
    agent: str


def path_segments(step: StepTrace) -> list[Segment]:
    agents, c, k, rank = _arrays(step)
    return [Segment(lo, None if math.isinf(hi) else hi, agents[a]) for lo, hi, a in lambda_path(c, k, rank)]


@dataclass(frozen=True)
class WhyNot:
    agent: str
    chosen: str
    gap: float  # how much B's utility trails the chosen agent's at the step's lambda
    competence_needed: float  # the rise in B's weighted competence that would make it win (same lambda)
    per_skill: list[tuple[str, float, float, float | None]]  # (skill, weight, mean now, mean needed or None)
    lambda_range: tuple[float, float | None] | None  # where B would win, None if no lambda does
    cost_needed_usd: float | None  # B's cost per call that would make it win at this lambda (None: impossible)
    lines: list[str]


def why_not(step: StepTrace, agent: str, lam: float) -> WhyNot:
    """What `agent` would need to be chosen instead, under the skill utility at `lam`. For a step decided by another
    rule (reference rule, baselines) the first line says how that rule ranked the two."""
    got = _why_not_utility(step, agent, lam)
    if lambda_sensitive(step) or step.chosen is None or step.chosen == agent:
        return got
    chosen, other = step.candidate(step.chosen), step.candidate(agent)
    head = [f"This step was decided by the {step.cause.replace('_', ' ')} rule, not by the skill utility: "
            f"{step.chosen} was picked" + (f" (score {chosen.score:.4f} against {other.score:.4f} for {agent})."
                                            if chosen.score is not None and other.score is not None
                                            and math.isfinite(chosen.score) and math.isfinite(other.score) else ".")]
    head.append("Under the skill utility it would be:")
    return WhyNot(got.agent, step.chosen, got.gap, got.competence_needed, got.per_skill, got.lambda_range,
                  got.cost_needed_usd, head + got.lines)


def _why_not_utility(step: StepTrace, agent: str, lam: float) -> WhyNot:
    agents, c, k, rank = _arrays(step)
    b = agents.index(agent)
    a = choose(c, k, lam, rank)
    u = c - lam * k
    gap = float(u[a] - u[b])
    if a == b:
        return WhyNot(agent, agent, 0.0, 0.0, [], _range(c, k, b, rank), step.candidate(agent).cost,
                      [f"{agent} is the chosen agent at lambda = {lam:g}."])
    need = max(gap, 0.0) + (TIE_EPS * 10 if rank[b] > rank[a] else 0.0)
    cand = step.candidate(agent)
    per_skill = []
    for ctb in cand.contributions:
        target = ctb.mean + need / ctb.weight if ctb.weight > 0 else None
        per_skill.append((ctb.skill, ctb.weight, ctb.mean, target if target is not None and target <= 1 else None))
    lines = [f"At lambda = {lam:g}, {agents[a]} has utility {u[a]:.4f} and {agent} {u[b]:.4f}: {agent} trails by "
             f"{gap:.4f}."]
    lines.append(f"Competence: {agent}'s weighted competence would have to rise from {c[b]:.4f} to {c[b] + need:.4f} "
                 f"(+{need:.4f}) at this lambda.")
    for skill, w, now, target in per_skill:
        lines.append(f"  alone on {skill} (weight {w:.2f}): mean {now:.3f} -> " +
                     (f"{target:.3f}" if target is not None else "more than 1, impossible"))
    cost_needed = None
    if lam > 0:
        k_needed = k[b] - need / lam
        if k_needed >= 0:
            cost_needed = float(k_needed * step.cost_ref)
            lines.append(f"Cost: {agent} would win at this lambda if its cost per call fell from ${cand.cost:.6f} to "
                         f"${cost_needed:.6f} (C_ref held at ${step.cost_ref:.6f}).")
        else:
            lines.append(f"Cost: even a free {agent} would not win at this lambda.")
    rng = _range(c, k, b, rank)
    if rng is None:
        lines.append(f"Lambda: no lambda >= 0 makes {agent} the choice (another agent is better or cheaper at "
                     "every trade-off).")
    else:
        hi = "+inf" if rng[1] is None else f"{rng[1]:.4g}"
        lines.append(f"Lambda: {agent} would be chosen for lambda in [{rng[0]:.4g}, {hi}).")
    return WhyNot(agent, agents[a], gap, need, per_skill, rng, cost_needed, lines)


def _range(c, k, b, rank):
    got = winning_set(c, k, b, rank)
    if got is None:
        return None
    low, high = got
    return float(low), None if math.isinf(high) else float(high)


def interval_label(step: StepTrace) -> str:
    """The lambda interval of a step as text, or why there is none."""
    if step.lambda_interval is None:
        return "n/a (" + (step.lambda_note or "not determined by lambda") + ")"
    return step.lambda_interval.label()
