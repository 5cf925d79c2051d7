"""The compact form of a stored decision.

A trace is mostly derived data: every candidate with its per-skill contributions, utilities, the choice, runner-up,
margin and lambda interval follow from the version's routing model (immutable), the activation result (skills and
weights) and the routing options. So a stored decision keeps only those inputs plus what cannot be recomputed
(mode reasons, execution results), as zlib-compressed compact JSON, and re-renders the rest on demand by deciding
each step again with the same model, activation and options.

Forms (the `codec` column):
- JSON (0): the full trace JSON in the `trace` column (rows written before this form existed);
- DERIVED (1): inputs only; re-rendered from the routing model;
- PACKED (2): the full trace as zlib-compressed compact JSON, for traces whose model cannot be rebuilt from the
  database (a handbook file routed outside it, a deleted version) or whose re-rendering would not be exact.

`encode` checks a DERIVED record by re-rendering it at once and comparing it with the trace field by field; any
difference stores the PACKED form instead, so a stored decision always reads back exactly as it was routed.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any, Callable

from skillorchestra_core.routing.trace import ActiveSkill, Execution, RouteTrace

CODEC_JSON = 0
CODEC_DERIVED = 1
CODEC_PACKED = 2
_FORMAT = 1  # of the DERIVED record


@dataclass(frozen=True)
class Columns:
    """What the decision row holds in typed columns (the codec never repeats these in the payload)."""

    id: int | None
    handbook: str
    handbook_id: int | None
    version: int | None
    version_id: int | None
    content_hash: str
    router: str
    lam: float
    cost_unit: str
    query: str
    execution: str
    chosen_agent: str | None
    cause: str
    total_cost_usd: float | None
    outcome: float | None
    created_at: datetime


def columns_of(trace: RouteTrace) -> Columns:
    return Columns(trace.id, trace.handbook, trace.handbook_id, trace.version, trace.version_id, trace.content_hash,
                   trace.router, trace.lam, trace.cost_unit, trace.query, trace.execution, trace.chosen_agent,
                   trace.cause, trace.total_cost_usd, trace.outcome, trace.created_at)


ModelLoader = Callable[[int, dict], Any]  # (version_id, options) -> RoutingModel


def _pack(obj: Any) -> bytes:
    return zlib.compress(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode(), 9)


def _unpack(payload: bytes) -> Any:
    return json.loads(zlib.decompress(payload).decode())


def pack_full(trace_dict: dict) -> bytes:
    return _pack(trace_dict)


def unpack_full(payload: bytes) -> dict:
    return _unpack(payload)


def _skill_name(model, key: str) -> str:
    spec = model.skills.get(key)
    return (spec.name or key) if spec is not None else key


def _default_options(cols: Columns, model) -> dict:
    """The options a trace of this row and model carries unless it says otherwise. The activation settings are
    left out: a model fills them in per mode as it first activates one, so they depend on the process's history."""
    from skillorchestra_core.routing.engine import RouteOptions

    base = {f.name: f.default for f in fields(RouteOptions)}
    base.update(router=cols.router, lam=cols.lam, cost_unit=cols.cost_unit, execute=cols.execution)
    return {**base, **{k: v for k, v in model.settings.items() if k != "activation"}}


def _settled(model) -> dict:
    from skillorchestra_core.routing.activation import settle_activation

    return json.loads(json.dumps(settle_activation(model)))


def _derived_record(trace: RouteTrace, model) -> dict:
    defaults = _default_options(columns_of(trace), model)
    opts = {k: v for k, v in trace.options.items()
            if k != "activation" and (k not in defaults or defaults[k] != v)}
    act = trace.options.get("activation")
    known = model.settings.get("activation", {})
    # The modes' settings as the model holds them: name the modes (decoding settles the model and takes theirs).
    by_mode = isinstance(act, dict) and all(known.get(m) == v for m, v in act.items())
    if act is not None and not by_mode:
        opts["activation"] = act
    steps = []
    for st in trace.steps:
        skills = []
        for a in st.active_skills:
            item = [a.skill, a.weight, a.similarity, a.probability, a.source]
            if a.name != _skill_name(model, a.skill):
                item.append(a.name)
            skills.append(item)
        step: dict[str, Any] = {"m": st.mode, "r": st.mode_reason, "s": st.mode_source, "a": st.activation_source,
                                "k": skills}
        if st.activation_note:
            step["n"] = st.activation_note
        if st.execution is not None:
            step["x"] = st.execution.model_dump(exclude_defaults=True)
        steps.append(step)
    record: dict = {"f": _FORMAT, "s": steps, "b": trace.llm_backend}
    if by_mode:
        record["A"] = sorted(act or ())
    if opts:
        record["o"] = opts
    if [k for k in defaults if k not in trace.options]:
        record["d"] = [k for k in defaults if k not in trace.options]
    if trace.query_ref is not None:
        record["q"] = trace.query_ref
    return record


def encode(trace: RouteTrace, load_model: ModelLoader | None) -> tuple[int, bytes]:
    """The smallest exact form of `trace`: DERIVED when re-rendering it from the model gives the same trace, else
    PACKED. `load_model(version_id, options)` gives the routing model the decoder will use (or raises)."""
    full = trace.to_dict()
    if load_model is not None and trace.version_id is not None and trace.steps:
        try:
            model = load_model(trace.version_id, trace.options)
            if model.content_hash == trace.content_hash and model.version_id == trace.version_id:
                payload = _pack(_derived_record(trace, model))
                again = decode(CODEC_DERIVED, payload, columns_of(trace), lambda _v, _o: model)
                if again.to_dict() == full:
                    return CODEC_DERIVED, payload
        except Exception:  # noqa: BLE001  (anything not re-renderable is stored whole)
            pass
    return CODEC_PACKED, pack_full(full)


def _aware(at: datetime) -> datetime:
    return at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at


def decode(codec: int, payload: bytes | None, cols: Columns, load_model: ModelLoader | None,
           legacy: dict | None = None) -> RouteTrace:
    """The trace of a stored row, exactly as it was routed."""
    if codec == CODEC_JSON:
        trace = RouteTrace.model_validate(legacy or {})
    elif codec == CODEC_PACKED:
        trace = RouteTrace.model_validate(_unpack(payload or b""))
    elif codec == CODEC_DERIVED:
        trace = _rerender(_unpack(payload or b""), cols, load_model)
    else:
        raise ValueError(f"unknown decision codec {codec}")
    trace.id = cols.id
    return trace


def _rerender(record: dict, cols: Columns, load_model: ModelLoader | None) -> RouteTrace:
    from skillorchestra_core.routing.activation import Activation
    from skillorchestra_core.routing.engine import RouteOptions, decide_step

    if record.get("f") != _FORMAT:
        raise ValueError(f"unknown compact decision format {record.get('f')!r}")
    if load_model is None or cols.version_id is None:
        raise ValueError("a derived decision needs its version's routing model")
    guess = {"router": cols.router, "lam": cols.lam, "cost_unit": cols.cost_unit, "execute": cols.execution,
             **record.get("o", {})}
    model = load_model(cols.version_id, guess)
    options_dict = {**_default_options(cols, model), **record.get("o", {})}
    for key in record.get("d", []):
        options_dict.pop(key, None)
    if "A" in record:
        settled = _settled(model)
        options_dict["activation"] = {m: settled[m] for m in record["A"]}
    options = RouteOptions(**{f.name: options_dict[f.name] for f in fields(RouteOptions) if f.name in options_dict})
    router = options.make_router()
    query_ref = record.get("q")
    query_id = None
    if model.evidence is not None:
        query_id = model.evidence.by_ref.get(str(query_ref)) if query_ref is not None else \
            model.evidence.lookup(cols.query)
    steps = []
    for i, st in enumerate(record["s"]):
        skills = [ActiveSkill.model_construct(
            skill=k[0], name=k[5] if len(k) > 5 else _skill_name(model, k[0]), weight=k[1], similarity=k[2],
            probability=k[3], source=k[4]) for k in st["k"]]
        act = Activation(skills=skills, source=st["a"], note=st.get("n", ""))
        step = decide_step(i, model.table(st["m"]), act, options, router=router, query=cols.query, model=model,
                           query_id=query_id, mode_reason=st["r"], mode_source=st["s"])
        step.execution = Execution.model_validate(st["x"]) if "x" in st else None
        steps.append(step)
    return RouteTrace.model_construct(
        handbook=cols.handbook, handbook_id=cols.handbook_id, version=cols.version, version_id=cols.version_id,
        content_hash=cols.content_hash, router=cols.router, lam=cols.lam, cost_unit=cols.cost_unit, query=cols.query,
        query_ref=query_ref, execution=cols.execution, llm_backend=record.get("b", "offline"),
        options=options_dict, steps=steps, chosen_agent=cols.chosen_agent, cause=cols.cause,
        total_cost_usd=cols.total_cost_usd, outcome=cols.outcome, created_at=_aware(cols.created_at),
        format=RouteTrace.model_fields["format"].default, id=cols.id)
