"""The decision trace: typed records of one routed query, step by step, stored as JSON in `decision_trace`.

Utilities are linear in lambda, U_A(l) = c_A - l * k_A (c_A = sum_s w_s mean(A, s), k_A = normalised cost), so every
candidate carries c_A (`mean`) and k_A (`cost_norm`): any view can recompute the choice at another lambda exactly.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Literal, Optional

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr
from pydantic_core import to_json

TRACE_FORMAT = 1


LAZY_FIELDS = ("candidates", "lambda_interval")  # the costly parts of a step, built on first use


def lazy_step(values: dict, pending: dict[str, Callable[[], Any]], *, validate: bool = False) -> "StepTrace":
    """A StepTrace from `values`, whose LAZY_FIELDS in `pending` are built by their zero-argument callables on first
    use (see StepTrace). The routing engine gives every other field, already of its type, in declaration order: the
    step is then assembled without a validation pass (a third of a decision's time). `validate` runs pydantic's
    validation instead (the check that both give the same step)."""
    if validate:
        step = StepTrace.model_validate(values)
        # Fields live in the instance __dict__: without them there, reading one reaches __getattr__ (builds it).
        for name in pending:
            step.__dict__.pop(name, None)
        step._pending = pending
        return step
    step = _new(StepTrace)
    _set(step, "__dict__", values)
    _set(step, "__pydantic_fields_set__", set(values))
    _set(step, "__pydantic_extra__", None)
    _set(step, "__pydantic_private__", {"_pending": pending})
    return step


_new, _set = object.__new__, object.__setattr__


class ActiveSkill(BaseModel):
    skill: str
    name: str = ""
    weight: float
    similarity: Optional[float] = None  # profile cosine similarity (the explanation), None otherwise
    probability: Optional[float] = None  # the activation classifier's calibrated probability, None otherwise
    source: Optional[str] = None  # "classifier", "profile" (offline), None for an LLM's pick


class SkillContribution(BaseModel):
    skill: str
    weight: float
    mean: float  # posterior mean of the agent on the skill
    ci_low: float
    ci_high: float
    alpha: float
    beta: float
    n: float  # evidence (weighted attempts)
    empirical_rate: Optional[float] = None  # S / n, None without evidence
    contribution: float  # weight * mean


class Candidate(BaseModel):
    agent: str
    model: str = ""
    mean: float  # c_A = sum_s w_s * mean(A, s): the weighted posterior competence
    ci_low: float  # weighted sums of the per-skill interval ends (a band, not a credible interval of the sum)
    ci_high: float
    contributions: list[SkillContribution] = Field(default_factory=list)
    cost: float  # the cost weighed: sum_s w_s C(A, s) (cost scope "skill" with active skills), else C(A, mode)
    cost_source: str = ""
    mode_cost: Optional[float] = None  # C(A, mode): mean USD per call (ties go to the lower one)
    cost_calls: Optional[float] = None  # the (attribution-weighted) train calls behind `cost`
    cost_norm: float  # k_A = C(A, mode) / C_ref(mode) (cost_unit "normalised" or "max") or C(A, mode) ("usd")
    penalty: float  # lambda * k_A
    utility: float  # c_A - lambda * k_A
    score: Optional[float] = None  # what this router ranked by (higher is better)
    rank: int = 0


class LambdaInterval(BaseModel):
    """The lambdas (>= 0) at which the chosen agent stays chosen: [low, high), high None meaning +infinity."""

    low: float = 0.0
    high: Optional[float] = None
    low_closed: bool = True
    high_closed: bool = False
    below: Optional[str] = None  # who is chosen just below `low` (None when low is 0)
    above: Optional[str] = None  # who is chosen at `high` and above
    note: str = ""

    def contains(self, lam: float) -> bool:
        above_low = lam >= self.low if self.low_closed else lam > self.low
        if self.high is None:
            return above_low
        return above_low and (lam <= self.high if self.high_closed else lam < self.high)

    def label(self) -> str:
        hi = "+inf)" if self.high is None else (f"{self.high:.4g}]" if self.high_closed else f"{self.high:.4g})")
        return ("[" if self.low_closed else "(") + f"{self.low:.4g}, " + hi


class Execution(BaseModel):
    mode: Literal["replay", "live", "dry-run"]
    status: Literal["ok", "no_record", "error", "skipped"]
    score: Optional[float] = None
    cost_usd: Optional[float] = None
    estimated_cost_usd: Optional[float] = None
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    latency_s: Optional[float] = None
    output: Optional[str] = None
    detail: str = ""


class StepTrace(BaseModel):
    """One step. `candidates` (one record per agent with its per-skill contributions: most of a trace) and the
    `lambda_interval` may be built on first use: `lazy_step` leaves them out and every read, dump, comparison or copy
    builds them first, so the JSON is the same either way and a caller that only needs the choice never pays."""

    index: int
    mode: str
    mode_reason: str = ""
    mode_source: str = ""
    activation_source: str = ""
    activation_note: str = ""  # e.g. why the LLM activation fell back to the retriever
    active_skills: list[ActiveSkill] = Field(default_factory=list)
    cost_ref: float = 1.0  # C_ref(mode) used to normalise costs
    cost_ref_agent: Optional[str] = None  # whose mean cost C_ref is (best-single or most expensive; None for usd)
    cost_scope: str = "mode"  # "skill": candidates' costs are their per-skill costs; "mode": C(A, mode)
    candidates: list[Candidate] = Field(default_factory=list)
    chosen: Optional[str] = None
    runner_up: Optional[str] = None
    margin: Optional[float] = None  # chosen's score minus the runner-up's, in this router's score
    cause: str = ""
    lambda_interval: Optional[LambdaInterval] = None
    lambda_note: str = ""  # how lambda enters this router's choice
    execution: Optional[Execution] = None
    _pending: Optional[dict[str, Callable[[], Any]]] = PrivateAttr(default=None)

    def __getattr__(self, name: str) -> Any:  # only reached for a lazy field that has not been built yet
        if name in LAZY_FIELDS and self._pending:
            return self.materialise().__dict__[name]
        # pydantic defines BaseModel.__getattr__ (private attributes) outside TYPE_CHECKING, so mypy cannot see it
        return super().__getattr__(name)  # type: ignore[misc]

    def materialise(self) -> "StepTrace":
        """Build the pending fields and put every field in STEP_KEY_ORDER (the JSON key order of any step)."""
        pending = self._pending
        if pending:
            fields = self.__dict__
            for name, build in pending.items():
                if name not in fields:  # a value assigned since is kept
                    fields[name] = build()
                self.model_fields_set.add(name)
            ordered = {k: fields[k] for k in STEP_KEY_ORDER if k in fields}
            ordered.update(fields)
            fields.clear()
            fields.update(ordered)
            self._pending = None  # as an eagerly built step has
        return self

    def model_dump(self, **kwargs) -> dict[str, Any]:
        return super(StepTrace, self.materialise()).model_dump(**kwargs)

    def model_dump_json(self, **kwargs) -> str:
        plain = self.plain() if set(kwargs) <= _PLAIN_JSON_ARGS else None
        if plain is not None:
            return to_json(plain, indent=kwargs.get("indent"), inf_nan_mode="null").decode()
        return super(StepTrace, self.materialise()).model_dump_json(**kwargs)

    def plain(self) -> dict[str, Any] | None:
        """While the candidate records are unbuilt: this step as plain data (key order STEP_KEY_ORDER) with the
        engine's candidate dicts as they are, so its JSON skips building ~100 models only to serialise them (the
        same JSON: tests/unit/test_trace_fast_path.py); None once they are built."""
        pending = self._pending
        if not pending:
            return None
        build = pending.get("candidates")
        if build is None or not hasattr(build, "rows") or "candidates" in self.__dict__:
            return None
        fields = self.__dict__
        for name, make in pending.items():  # the other lazy parts are cheap: built for good
            if name != "candidates" and name not in fields:
                fields[name] = make()
                self.model_fields_set.add(name)
        data = super().model_dump(exclude={"candidates"})
        out = {k: data[k] for k in STEP_KEY_ORDER if k in data}
        out["candidates"] = build.rows()
        return out

    def model_copy(self, **kwargs) -> "StepTrace":
        return super(StepTrace, self.materialise()).model_copy(**kwargs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StepTrace):
            other.materialise()
        return super(StepTrace, self.materialise()).__eq__(other)

    def __getstate__(self) -> dict[Any, Any]:
        return super(StepTrace, self.materialise()).__getstate__()

    def __repr_args__(self):
        self.materialise()
        return super().__repr_args__()

    def candidate(self, agent: str) -> Candidate:
        for c in self.candidates:
            if c.agent == agent:
                return c
        raise KeyError(f"agent {agent!r} is not a candidate in step {self.index} (mode {self.mode})")


# The stored and printed key order of a step: the fields in declaration order, the candidate records last.
STEP_KEY_ORDER = tuple(k for k in StepTrace.model_fields if k != "candidates") + ("candidates",)
_PLAIN_JSON_ARGS = frozenset({"indent", "by_alias"})  # dumps the plain-data JSON gives exactly (no field aliases)


class RouteTrace(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    format: int = TRACE_FORMAT
    id: Optional[int] = None
    handbook: str
    handbook_id: Optional[int] = None
    version: Optional[int] = None
    version_id: Optional[int] = None
    content_hash: str = ""
    router: str
    lam: float = Field(validation_alias=AliasChoices("lambda", "lam"), serialization_alias="lambda")
    cost_unit: str = "normalised"  # normalised: C_ref = best-single's cost; max: the dearest agent's; usd: 1
    query: str
    query_ref: Optional[str] = None  # the evidence query's id when the query is in the evidence
    execution: str = "dry-run"
    llm_backend: str = "offline"
    options: dict = Field(default_factory=dict)
    steps: list[StepTrace] = Field(default_factory=list)
    chosen_agent: Optional[str] = None  # the agent of the last step (who produces the answer)
    cause: str = ""
    total_cost_usd: Optional[float] = None
    outcome: Optional[float] = None  # replay/live: the last step's score
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def path(self) -> list[tuple[str, Optional[str]]]:
        return [(s.mode, s.chosen) for s in self.steps]

    def materialise(self) -> "RouteTrace":
        for step in self.steps:
            step.materialise()
        return self

    def model_dump(self, **kwargs) -> dict[str, Any]:
        return super(RouteTrace, self.materialise()).model_dump(**kwargs)

    def model_dump_json(self, **kwargs) -> str:
        if set(kwargs) <= _PLAIN_JSON_ARGS and any(s.plain() is not None for s in self.steps[:1]):
            # Steps whose candidates are unbuilt go out as plain data (see StepTrace.plain): the same JSON.
            data = super().model_dump(exclude={"steps"}, by_alias=kwargs.get("by_alias", False))
            steps = [s.plain() or s.model_dump() for s in self.steps]
            out = {}
            for key, value in data.items():
                out[key] = value
                if key == "options":  # `steps` comes right after `options` in the field order
                    out["steps"] = steps
            return to_json(out, indent=kwargs.get("indent"), inf_nan_mode="null").decode()
        return super(RouteTrace, self.materialise()).model_dump_json(**kwargs)

    def model_copy(self, **kwargs) -> "RouteTrace":
        return super(RouteTrace, self.materialise()).model_copy(**kwargs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RouteTrace):
            other.materialise()
        return super(RouteTrace, self.materialise()).__eq__(other)

    def __getstate__(self) -> dict[Any, Any]:
        return super(RouteTrace, self.materialise()).__getstate__()

    def to_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(by_alias=True, indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> "RouteTrace":
        return cls.model_validate_json(text)
