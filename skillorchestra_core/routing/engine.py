"""Route a query step by step: mode -> active skills -> candidates -> choice -> execution -> next step.

`RouteRun.steps()` yields each StepTrace as soon as it is decided (the playground renders them one by one);
`route()` runs to the end and returns the RouteTrace. `decide_step()` is one decision with its full trace.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Iterator

import numpy as np
from pydantic import TypeAdapter

from skillorchestra_core.llm import LlmClient
from skillorchestra_core.routing import small
from skillorchestra_core.routing.activation import Activation, activate
from skillorchestra_core.routing.execution import Executor
from skillorchestra_core.routing.inputs import check_lambda, check_query
from skillorchestra_core.routing.model import ModeTable, RoutingModel
from skillorchestra_core.routing.modes import ModePolicy
from skillorchestra_core.routing.routers import DecisionInput, get_router
from skillorchestra_core.routing.trace import Candidate, LambdaInterval, RouteTrace, StepTrace, lazy_step
from skillorchestra_core.routing.utility import cost_scope_name, cost_unit_name

EXECUTIONS = ("dry-run", "replay", "live")
_CANDIDATES = TypeAdapter(list[Candidate])  # one validation call for every candidate record of a step


@dataclass
class RouteOptions:
    router: str = "skill"
    lam: float = 0.1
    cost_unit: str = "normalised"
    execute: str = "dry-run"
    max_steps: int = 4
    top_k: int = 3
    seed: int = 0
    activation: str = "auto"  # auto | offline | llm
    reference_variant: str = "weighted_avg"
    cost_scope: str | None = None  # skill | mode; None: the cost_scope setting

    def __post_init__(self) -> None:
        if self.execute not in EXECUTIONS:
            raise ValueError(f"unknown execution {self.execute!r}; use {', '.join(EXECUTIONS)}")
        self.cost_unit = cost_unit_name(self.cost_unit)
        self.cost_scope = cost_scope_name(self.cost_scope)
        self.lam = check_lambda(self.lam)

    def make_router(self):
        if self.router == "reference-rule":
            return get_router(self.router, variant=self.reference_variant)
        return get_router(self.router)


def _candidates(d: DecisionInput, scores, ranks) -> list[dict]:
    t, idx, keys = d.table, d.idx, d.skill_keys
    w = d.weights.tolist()
    cols = {name: getattr(t, name)[:, idx].tolist() for name in ("mean", "ci_low", "ci_high", "alpha", "beta", "n")}
    emp = t.empirical[:, idx].tolist()
    if len(idx):
        lo, hi = (t.ci_low[:, idx] @ d.weights).tolist(), (t.ci_high[:, idx] @ d.weights).tolist()
    else:
        lo = hi = d.c.tolist()
    c, k, util, cost = d.c.tolist(), d.k.tolist(), d.utility.tolist(), d.cost.tolist()
    mode_cost, calls = t.cost.tolist(), d.cost_calls.tolist()
    score = [None] * len(c) if scores is None else [  # -inf (e.g. no recorded outcome) is stored as None
        x if math.isfinite(x) else None for x in np.asarray(scores, float).tolist()]
    rank = ranks.tolist()
    out = []
    for i, agent in enumerate(t.agents):
        mean, cl, ch, al, be, n, em = (cols["mean"][i], cols["ci_low"][i], cols["ci_high"][i], cols["alpha"][i],
                                       cols["beta"][i], cols["n"][i], emp[i])
        contribs = [{
            "skill": key, "weight": w[j], "mean": mean[j], "ci_low": cl[j], "ci_high": ch[j], "alpha": al[j],
            "beta": be[j], "n": n[j], "empirical_rate": em[j] if n[j] > 0 else None, "contribution": w[j] * mean[j]}
            for j, key in enumerate(keys)]
        out.append({
            "agent": agent, "model": t.models[i], "mean": c[i], "ci_low": lo[i], "ci_high": hi[i],
            "contributions": contribs, "cost": cost[i], "cost_source": t.cost_source[i], "cost_norm": k[i],
            "mode_cost": mode_cost[i], "cost_calls": calls[i],
            "penalty": c[i] - util[i], "utility": util[i], "score": score[i], "rank": rank[i]})
    return out


def _ranks(ranking: np.ndarray, tie_rank: np.ndarray, chosen: int, runner: int | None) -> np.ndarray:
    """Display order: the chosen agent, the runner-up, then by score (ties by cost, then name)."""
    order = np.lexsort((tie_rank, -np.round(np.nan_to_num(ranking, neginf=-1e12, posinf=1e12), 9)))
    shown = [chosen] + ([runner] if runner is not None else []) + [int(i) for i in order if i not in (chosen, runner)]
    ranks = np.empty(len(shown), int)
    ranks[shown] = np.arange(len(shown))
    return ranks


def _active(table: ModeTable, activation: Activation) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The activated skills this mode knows, their columns, and weights normalised to sum 1 (none when no weight is
    usable: the agents' general competence then decides, as in the batch path)."""
    index = table.skill_index
    keys, cols, ws = [], [], []
    for a in activation.skills:
        col = index.get(a.skill)
        if col is not None:
            keys.append(a.skill)
            cols.append(col)
            ws.append(a.weight)
    weights = np.array(ws, float)
    total = float(weights.sum()) if ws else 0.0
    if total > 0:
        return keys, np.array(cols, np.int64), weights / total
    return [], np.zeros(0, np.int64), np.zeros(0)


def decide_step(index: int, table: ModeTable, activation: Activation, options: RouteOptions, *, router=None,
                query: str = "", model: RoutingModel | None = None, query_id: int | None = None,
                mode_reason: str = "", mode_source: str = "", lazy: bool = True) -> StepTrace:
    """One decision with its full trace: candidates, contributions, choice, runner-up, margin, lambda interval.
    With `lazy` the candidate records and the lambda interval are built on first use (see StepTrace); the JSON is
    the same."""
    keys, idx, weights = _active(table, activation)
    d = DecisionInput(table, idx, weights, options.lam, options.cost_unit, query, index, options.seed, model, query_id,
                      keys, options.cost_scope)
    decision = (router or options.make_router()).decide(d)
    ranking = decision.scores if decision.scores is not None else d.utility
    chosen = decision.chosen
    runner = decision.runner_up
    if runner is None and len(table.agents) > 1:
        runner = small.argmax_tiebreak(ranking, table.tie_rank, exclude=chosen)
    margin = None
    if runner is not None and decision.scores is not None:
        top, second = float(ranking[chosen]), float(ranking[runner])
        if math.isfinite(top) and math.isfinite(second):
            margin = top - second

    def interval() -> LambdaInterval | None:
        found = decision.interval() if callable(decision.interval) else decision.interval
        if found is None:
            return None
        low, high, below, above = found
        return LambdaInterval.model_validate({
            "low": low, "high": high, "low_closed": True, "high_closed": False,
            "below": None if below is None else table.agents[below],
            "above": None if above is None else table.agents[above], "note": decision.interval_note})

    def candidates() -> list[Candidate]:
        rows = _candidates(d, decision.scores, _ranks(ranking, table.tie_rank, chosen, runner))
        return _CANDIDATES.validate_python(rows)

    step = lazy_step(dict(
        index=index, mode=table.mode, mode_reason=mode_reason, mode_source=mode_source,
        activation_source=activation.source, activation_note=activation.note, active_skills=list(activation.skills),
        cost_ref=float(d.c_ref), cost_ref_agent=table.cost_ref_agent(options.cost_unit),
        cost_scope="skill" if d.cost_scope == "skill" and len(d.idx) and not table.uniform_cost else "mode",
        chosen=table.agents[chosen],
        runner_up=None if runner is None else table.agents[runner], margin=margin, cause=decision.cause,
        lambda_note=decision.interval_note, execution=None), {"lambda_interval": interval, "candidates": candidates})
    return step if lazy else step.materialise()  # built the same way either way: the same JSON key order


class RouteRun:
    def __init__(self, model: RoutingModel, query: str, options: RouteOptions | None = None, *,
                 llm: LlmClient | None = None, executor: Executor | None = None, query_ref: str | None = None):
        """`query_ref`: the evidence query's id, for an exact replay when several queries share a text."""
        query = check_query(query)
        if not model.modes:
            raise ValueError(f"{model.label} has no agents to route to")
        self.model, self.query, self.options = model, query, options or RouteOptions()
        self.llm = llm
        self.executor = executor or Executor(self.options.execute, llm=llm)
        self.router = self.options.make_router()
        self.policy = ModePolicy(model, llm=llm, max_steps=self.options.max_steps)
        self.query_id = model.evidence.lookup(self.query) if model.evidence is not None else None
        if query_ref is not None:
            if model.evidence is None or str(query_ref) not in model.evidence.by_ref:
                raise ValueError(f"{model.label} has no evidence query with id {query_ref!r}")
            self.query_id = model.evidence.by_ref[str(query_ref)]
        self.done: list[StepTrace] = []
        self.calls_start = 0  # the LLM client's call count when this run began (its calls are those after)

    def steps(self) -> Iterator[StepTrace]:
        while True:
            nxt = self.policy.next(self.query, self.done)
            if nxt is None:
                return
            table = self.model.table(nxt.mode)
            history = [f"{s.mode}: {s.chosen}" for s in self.done]
            act = activate(self.model, nxt.mode, self.query, llm=self.llm, method=self.options.activation,
                           top_k=self.options.top_k, history=history)
            step = decide_step(len(self.done), table, act, self.options, router=self.router, query=self.query,
                               model=self.model, query_id=self.query_id, mode_reason=nxt.reason,
                               mode_source=nxt.source)
            step.execution = self.executor.run(self.model, self.query, self.query_id, step, self.done)
            self.done.append(step)
            yield step

    def trace(self) -> RouteTrace:
        steps = self.done
        costs = [s.execution.cost_usd if s.execution.cost_usd is not None else s.execution.estimated_cost_usd
                 for s in steps if s.execution is not None]
        last = steps[-1] if steps else None
        return RouteTrace(
            handbook=self.model.handbook, handbook_id=self.model.handbook_id, version=self.model.version,
            version_id=self.model.version_id, content_hash=self.model.content_hash, router=self.options.router,
            lam=self.options.lam, cost_unit=self.options.cost_unit, query=self.query,
            query_ref=(self.model.evidence.refs.get(self.query_id)
                       if self.query_id is not None and self.model.evidence is not None else None),
            execution=self.options.execute, llm_backend=getattr(self.llm, "backend", "offline"),
            options={**asdict(self.options), **self.model.settings}, steps=steps,
            chosen_agent=last.chosen if last else None, cause=last.cause if last else "no_steps",
            total_cost_usd=float(sum(c for c in costs if c is not None)) if costs else None,
            outcome=last.execution.score if last and last.execution else None)


def route(model: RoutingModel, query: str, options: RouteOptions | None = None, *, llm: LlmClient | None = None,
          executor: Executor | None = None, query_ref: str | None = None) -> RouteTrace:
    run = RouteRun(model, query, options, llm=llm, executor=executor, query_ref=query_ref)
    for _ in run.steps():
        pass
    return run.trace()
