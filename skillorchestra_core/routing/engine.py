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


def _candidates(d: DecisionInput, scores, ranks: list[int]) -> list[dict]:
    """The candidate records as plain dicts, keys in Candidate's field order (the JSON of an unread step is made
    from them directly)."""
    t, idx, keys = d.table, d.idx, d.skill_keys
    w = d.weights.tolist()
    facts = t.skill_facts()[:, :, idx].tolist()  # (7, A, S): mean, ci_low, ci_high, alpha, beta, n, empirical
    if len(idx):
        lo, hi = (t.ci_low[:, idx] @ d.weights).tolist(), (t.ci_high[:, idx] @ d.weights).tolist()
    else:
        lo = hi = d.c.tolist()
    c, k, util, cost = d.c.tolist(), d.k.tolist(), d.utility.tolist(), d.cost.tolist()
    mode_cost, calls = t.cost.tolist(), d.cost_calls.tolist()
    score = [None] * len(c) if scores is None else [  # -inf (e.g. no recorded outcome) is stored as None
        x if math.isfinite(x) else None for x in np.asarray(scores, float).tolist()]
    out = []
    for i, (agent, *f) in enumerate(zip(t.agents, *facts)):
        contribs = [{
            "skill": key, "weight": wj, "mean": mj, "ci_low": lj, "ci_high": hj, "alpha": aj, "beta": bj, "n": nj,
            "empirical_rate": ej if nj > 0 else None, "contribution": wj * mj}
            for key, wj, mj, lj, hj, aj, bj, nj, ej in zip(keys, w, *f)]
        ci = c[i]
        out.append({
            "agent": agent, "model": t.models[i], "mean": ci, "ci_low": lo[i], "ci_high": hi[i],
            "contributions": contribs, "cost": cost[i], "cost_source": t.cost_source[i], "mode_cost": mode_cost[i],
            "cost_calls": calls[i], "cost_norm": k[i], "penalty": ci - util[i], "utility": util[i],
            "score": score[i], "rank": ranks[i]})
    return out


def _ranks(ranking: np.ndarray, tie_rank: np.ndarray, chosen: int, runner: int | None) -> list[int]:
    """Display order: the chosen agent, the runner-up, then by score (ties by cost, then name)."""
    key = (-np.round(np.nan_to_num(ranking, neginf=-1e12, posinf=1e12), 9)).tolist()
    tr = tie_rank.tolist()
    order = sorted(range(len(key)), key=lambda i: (key[i], tr[i]))  # tie ranks are distinct: a total order
    order = [chosen] + ([runner] if runner is not None else []) + [i for i in order if i != chosen and i != runner]
    ranks = [0] * len(order)
    for r, i in enumerate(order):
        ranks[i] = r
    return ranks


def _active(table: ModeTable, activation: Activation) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The activated skills this mode knows, their columns, and weights normalised to sum 1 (none when no weight is
    usable: the agents' general competence then decides, as in the batch path)."""
    skills = activation.skills
    keys = [a.skill for a in skills]
    cols = list(map(table.skill_index.get, keys))
    ws = [a.weight for a in skills]
    if None in cols:  # skills of another mode (or unknown): dropped
        kept = [j for j, c in enumerate(cols) if c is not None]
        keys, cols, ws = [keys[j] for j in kept], [cols[j] for j in kept], [ws[j] for j in kept]
    if not ws:
        return [], _NO_COLUMNS, _NO_WEIGHTS
    weights = np.array(ws, float)
    # numpy sums fewer than 8 values left to right, as sum() does (the same total, bit for bit); more: its own way
    total = float(sum(ws)) if len(ws) < 8 else float(weights.sum())
    if total > 0:
        return keys, np.array(cols, np.int64), weights / total
    return [], _NO_COLUMNS, _NO_WEIGHTS


_NO_COLUMNS, _NO_WEIGHTS = np.zeros(0, np.int64), np.zeros(0)
_NO_COLUMNS.flags.writeable = _NO_WEIGHTS.flags.writeable = False


def decide_step(index: int, table: ModeTable, activation: Activation, options: RouteOptions, *, router=None,
                query: str = "", model: RoutingModel | None = None, query_id: int | None = None,
                mode_reason: str = "", mode_source: str = "", lazy: bool = True, validate: bool = False) -> StepTrace:
    """One decision with its full trace: candidates, contributions, choice, runner-up, margin, lambda interval.
    With `lazy` the candidate records and the lambda interval are built on first use (see StepTrace); the JSON is
    the same. `validate` builds the step through pydantic's validation (the reference the fast path is checked
    against)."""
    keys, idx, weights = _active(table, activation)
    d = DecisionInput(table, idx, weights, options.lam, options.cost_unit, query, index, options.seed, model, query_id,
                      keys, options.cost_scope)
    decision = (router or options.make_router()).decide(d)
    scores = decision.scores
    ranking = d.utility if scores is None else scores
    chosen = decision.chosen
    runner = decision.runner_up
    agents = table.agents
    if runner is None and len(agents) > 1:
        runner = small.argmax_tiebreak(ranking, table.tie_rank, exclude=chosen)
    margin = None
    if runner is not None and scores is not None:
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
            "below": None if below is None else agents[below],
            "above": None if above is None else agents[above], "note": decision.interval_note})

    # Every field but the lazy ones, in declaration order, each already of its type (see trace.lazy_step).
    step = lazy_step({
        "index": index, "mode": table.mode, "mode_reason": mode_reason, "mode_source": mode_source,
        "activation_source": activation.source, "activation_note": activation.note,
        "active_skills": list(activation.skills), "cost_ref": float(d.c_ref),
        "cost_ref_agent": table.cost_ref_agent(options.cost_unit),
        "cost_scope": "skill" if d.cost_scope == "skill" and len(idx) and not table.uniform_cost else "mode",
        "chosen": agents[chosen], "runner_up": None if runner is None else agents[runner], "margin": margin,
        "cause": decision.cause, "lambda_note": decision.interval_note, "execution": None},
        {"lambda_interval": interval, "candidates": CandidateRows(d, scores, ranking, chosen, runner)},
        validate=validate)
    return step if lazy else step.materialise()  # built the same way either way: the same JSON key order


class CandidateRows:
    """The candidate records of one decision: plain dicts (`rows()`, what the JSON of an unread step is made from)
    and, when called, the validated Candidate models."""

    __slots__ = ("_args", "_rows")

    def __init__(self, d: DecisionInput, scores, ranking, chosen: int, runner: int | None):
        self._args = (d, scores, ranking, chosen, runner)
        self._rows: list[dict] | None = None

    def rows(self) -> list[dict]:
        if self._rows is None:
            d, scores, ranking, chosen, runner = self._args
            self._rows = _candidates(d, scores, _ranks(ranking, d.table.tie_rank, chosen, runner))
        return self._rows

    def __call__(self) -> list[Candidate]:
        return _CANDIDATES.validate_python(self.rows())

    # Its inputs are never changed: a copied step shares them (no deep copy of the routing model behind them).
    def __copy__(self) -> "CandidateRows":
        return self

    def __deepcopy__(self, memo) -> "CandidateRows":
        return self


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
