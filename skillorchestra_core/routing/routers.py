"""The routers, all deterministic, behind one interface: `decide(DecisionInput) -> Decision`.

skill          U(A) = sum_s w_s mean(A, s) - lambda C(A)/C_ref: the paper's rule as written (posterior means).
reference-rule the reference code's route_by_weighted_avg: empirical rates, cost only among exact ties (ref. 6.2);
               variant "select_agent" follows SkillHandbook.select_agent (ref. 6.4).
best-single    the agent with the best success rate on the train queries of the mode.
cheapest       the lowest expected cost per call for the query (its skills' costs, or the mode cost).
random         uniform, seeded by (seed, query, step).
oracle         the best recorded outcome on this query (an upper bound; needs the query in the evidence).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from skillorchestra_core.routing import small
from skillorchestra_core.routing.model import ModeTable, RoutingModel
from skillorchestra_core.routing.reference import reference_choice
from skillorchestra_core.routing.utility import TIE_EPS, argmax_tiebreak, cost_scope_name

LAMBDA_FREE = "this router does not weigh cost against competence: lambda does not change its choice"


@dataclass
class DecisionInput:
    table: ModeTable
    idx: np.ndarray  # active skill columns
    weights: np.ndarray  # their weights (sum 1); empty when no skill is active
    lam: float
    cost_unit: str = "normalised"
    query: str = ""
    step: int = 0
    seed: int = 0
    model: RoutingModel | None = None
    query_id: int | None = None
    skill_keys: list[str] = field(default_factory=list)
    cost_scope: str | None = None  # skill | mode; None: the setting

    def __post_init__(self) -> None:
        t, idx, scope = self.table, self.idx, cost_scope_name(self.cost_scope)
        self.cost_scope = scope
        self.k, self.c_ref = t.costs_in(self.cost_unit)
        # The query's expected cost per call: per-skill costs weighted like the competence (mode cost without skills)
        self.cost, self.cost_calls = t.query_cost(idx, self.weights, scope)
        if len(idx):
            if scope == "skill" and not t.uniform_cost:
                self.k = t.normalise(self.cost, self.cost_unit)
            self.c = t.mean[:, idx] @ self.weights
        else:
            self.c = t.general
        self.utility = self.c - self.lam * self.k


@dataclass
class Decision:
    chosen: int
    cause: str
    scores: np.ndarray | None = None  # the router's own ranking score, higher is better
    # (low, high, below, above), or a zero-argument callable that computes it when the trace is read
    interval: tuple[float, float | None, int | None, int | None] | Callable[[], tuple | None] | None = None
    interval_note: str = ""
    runner_up: int | None = None  # by `scores`, when the router found it on the way (else the trace computes it)


def stable_seed(seed: int, *parts) -> int:
    digest = hashlib.blake2b("\x1f".join([str(seed), *map(str, parts)]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _free_interval() -> tuple[float, None, None, None]:
    return 0.0, None, None, None


class SkillRouter:
    name = "skill"

    def decide(self, d: DecisionInput) -> Decision:
        t = d.table
        chosen, runner, second = small.top_two(d.utility, t.tie_rank)
        if len(t.agents) == 1:
            cause = "single_candidate"
        elif not len(d.idx):
            cause = "fallback_no_skills"
        else:
            cause = "tie_break_cost" if float(d.utility[chosen]) - second <= TIE_EPS else "skill_utility"

        def interval():
            low, high, below, above = small.lambda_interval(d.c, d.k, chosen, t.tie_rank)
            return None if math.isnan(low) else (low, None if math.isinf(high) else high, below, above)

        return Decision(chosen, cause, d.utility, interval, runner_up=runner)


class ReferenceRuleRouter:
    name = "reference-rule"

    def __init__(self, variant: str = "weighted_avg"):
        if variant not in ("weighted_avg", "select_agent"):
            raise ValueError("reference-rule variant must be 'weighted_avg' (ref. 6.2) or 'select_agent' (ref. 6.4)")
        self.variant = variant

    def decide(self, d: DecisionInput) -> Decision:
        rng = np.random.default_rng(stable_seed(d.seed, "reference", d.query, d.step))
        chosen, cause, scores = reference_choice(d.table, d.skill_keys, d.weights, d.lam, rng, self.variant)
        if cause == "reference_tie_random":
            return Decision(chosen, cause, scores, None,
                            "an exact tie settled by a seeded draw weighted by max(0, 1 - lambda x cost)")
        return Decision(chosen, cause, scores, _free_interval(),
                        "the reference rule uses cost only among exact ties, so lambda does not change this choice")


class BestSingleRouter:
    name = "best-single"

    def decide(self, d: DecisionInput) -> Decision:
        t = d.table
        score = np.where(np.isnan(t.train_rate), t.overall_rate, t.train_rate)
        return Decision(argmax_tiebreak(score, t.tie_rank), "best_single", score, _free_interval(), LAMBDA_FREE)


class CheapestRouter:
    name = "cheapest"

    def decide(self, d: DecisionInput) -> Decision:
        return Decision(argmax_tiebreak(-d.cost, d.table.tie_rank), "cheapest", -d.cost, _free_interval(),
                        LAMBDA_FREE)


class RandomRouter:
    name = "random"

    def decide(self, d: DecisionInput) -> Decision:
        rng = np.random.default_rng(stable_seed(d.seed, "random", d.query, d.step))
        return Decision(int(rng.integers(len(d.table.agents))), "random", None, _free_interval(),
                        "a seeded uniform draw: " + LAMBDA_FREE)


class OracleRouter:
    name = "oracle"

    def decide(self, d: DecisionInput) -> Decision:
        t = d.table
        recorded = {}
        if d.model is not None and d.model.evidence is not None and d.query_id is not None:
            recorded = d.model.evidence.recorded(d.query_id, t.mode, t.agents)
        if not recorded:
            fallback = SkillRouter().decide(d)
            fallback.cause = "oracle_no_record"
            return fallback
        score = np.array([recorded[a][0] if a in recorded else -np.inf for a in t.agents])
        return Decision(argmax_tiebreak(score, t.tie_rank), "oracle_recorded", score, _free_interval(),
                        "the best recorded outcome (ties to the cheaper agent): " + LAMBDA_FREE)


@dataclass(frozen=True)
class RouterInfo:
    name: str
    label: str
    description: str
    uses_lambda: bool
    factory: type


REGISTRY: dict[str, RouterInfo] = {r.name: r for r in [
    RouterInfo("skill", "Skill router (paper rule)",
               "argmax of sum_s w_s x posterior mean - lambda x normalised cost", True, SkillRouter),
    RouterInfo("reference-rule", "Reference code rule",
               "weighted empirical rate; category, overall rate, then a cost-weighted draw among exact ties",
               False, ReferenceRuleRouter),
    RouterInfo("best-single", "Best single agent", "the best success rate on train, for every query", False,
               BestSingleRouter),
    RouterInfo("cheapest", "Cheapest", "the lowest expected cost per call", False, CheapestRouter),
    RouterInfo("random", "Random (seeded)", "a uniform draw seeded by the query", False, RandomRouter),
    RouterInfo("oracle", "Oracle (upper bound)", "the best recorded outcome on this query", False, OracleRouter),
]}


def list_routers() -> list[RouterInfo]:
    return list(REGISTRY.values())


def get_router(name: str, **options):
    try:
        info = REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown router {name!r}; choose from {', '.join(REGISTRY)}") from None
    return info.factory(**options)
