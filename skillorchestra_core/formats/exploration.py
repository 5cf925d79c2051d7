"""SkillOrchestra model-routing exploration file (`inference_results.jsonl`) as evidence.

Two line layouts (reference doc 2.2), told apart per line:
- explore.py: sample_id, question, ground_truths, model_responses{key: text}, model_exact_match{key: 0/1},
  model_f1, model_succeeded{key: bool}, model_costs{key: {prompt_tokens, completion_tokens, input_cost,
  output_cost, total_cost}}, best_model, ... Success = model_succeeded (else exact match >= 1, as explore.py).
- evaluate.py: sample_id, question, ground_truths, model_results{key: {response, exact_match, f1, prompt_tokens,
  completion_tokens, total_cost}}. Success = exact_match >= 0.7.
Score = 1.0 on success, else 0.0. Lines are deduplicated by sample_id, the last occurrence wins (as the reference).
query_id = the sample_id; split = `rows.hash_split(question)`; an optional task / task_name / data_source field is
the task label. The mode is a parameter: default "answer" (the reference always uses "search").
Prices: the reference's model-routing pool (POOL_PRICES) for its model keys, else litellm's map.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlmodel import Session

from skillorchestra_core.evidence.ingest import AgentHint, OutcomeRow, ingest_outcomes
from skillorchestra_core.evidence.reference_pools import MODEL_ROUTING_POOL
from skillorchestra_core.formats import bounds
from skillorchestra_core.formats.rows import (
    ImportReport,
    MalformedFile,
    ParsedOutcomes,
    RowIssue,
    RowsRejected,
    as_mode,
    as_nonneg_float,
    as_nonneg_int,
    as_optional_text,
    as_text,
    hash_split,
    is_missing,
    jsonl_objects,
    settle,
    task_note,
)

POOL_PRICES = MODEL_ROUTING_POOL
EVALUATE_SUCCESS_EM = 0.7
TASK_FIELDS = ("task", "task_name", "data_source")


def agent_hint(key: str) -> AgentHint:
    if key in POOL_PRICES:
        model, pin, pout = POOL_PRICES[key]
        return AgentHint(model=model, input_price_per_m=pin, output_price_per_m=pout, price_source="card")
    return AgentHint(model=key, price_source="unknown")  # ingest then looks the model up in litellm's map


def read_exploration(path: str | Path, *, mode: str = "answer", dataset: str | None = None,
                     skip_bad_rows: bool = False) -> ParsedOutcomes:
    path = Path(path)
    try:
        mode = as_mode(mode)
    except ValueError as exc:
        raise MalformedFile(str(exc)) from None
    latest: dict[str, tuple[int, dict]] = {}
    bad: list[RowIssue] = []
    repeats = 0
    for number, rec, problem in jsonl_objects(path):
        if rec is None:
            bad.append(RowIssue(number, problem or "not a JSON object"))
            continue
        if is_missing(rec.get("sample_id")):
            bad.append(RowIssue(number, "expected a JSON object with a sample_id"))
            continue
        repeats += latest.pop(str(rec["sample_id"]), None) is not None  # the last occurrence wins
        latest[str(rec["sample_id"])] = (number, rec)
    rows: list[OutcomeRow] = []
    for sample_id, (number, rec) in latest.items():
        try:
            rows.extend(_line_rows(rec, sample_id, number, mode, dataset or path.stem))
        except ValueError as exc:
            bad.append(RowIssue(number, str(exc)))
    if not rows and not bad:
        raise MalformedFile(f"{path}: no exploration lines")
    skipped = settle(str(path), bad, skip_bad_rows)
    if not rows:
        raise RowsRejected(str(path), skipped)
    notes = (f"{repeats} line(s) repeat an earlier sample_id; the last occurrence was kept",) if repeats else ()
    return ParsedOutcomes(str(path), rows, skipped, notes)


def import_exploration(
    s: Session, path: str | Path, handbook: str, *, mode: str = "answer", skills_from_task: bool = False,
    skip_bad_rows: bool = False, dataset: str | None = None, author: str = "cli",
) -> ImportReport:
    parsed = read_exploration(path, mode=mode, dataset=dataset, skip_bad_rows=skip_bad_rows)
    hints = {r.agent: agent_hint(r.agent) for r in parsed.rows}
    result = ingest_outcomes(s, handbook, parsed.rows, source_label=parsed.path, author=author,
                             skills_from_task=skills_from_task, skipped_rows=parsed.skipped, agent_hints=hints)
    notes = parsed.notes + task_note(parsed.rows, skills_from_task)
    return ImportReport(parsed.path, "exploration", len(parsed.rows), result, tuple(parsed.skipped), notes)


def _line_rows(rec: dict, sample_id: str, line: int, mode: str, dataset: str) -> list[OutcomeRow]:
    question = rec.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("missing question")
    attempts = _evaluate_attempts(rec) if "model_results" in rec else _explore_attempts(rec)
    if not attempts:
        raise ValueError("no model outcomes (model_succeeded / model_exact_match or model_results)")
    task = next((str(rec[f]).strip() for f in TASK_FIELDS if not is_missing(rec.get(f))), None)
    truth, split = as_optional_text(rec.get("ground_truths")), hash_split(question)
    return [OutcomeRow(line=line, query_id=sample_id, query=question, agent=agent, mode=mode, task=task,
                       split=split, ground_truth=truth, dataset=dataset, **fields)
            for agent, fields in sorted(attempts.items())]


def _explore_attempts(rec: dict) -> dict[str, dict[str, Any]]:
    succeeded, em = _obj(rec, "model_succeeded"), _obj(rec, "model_exact_match")
    costs, responses = _obj(rec, "model_costs"), _obj(rec, "model_responses")
    out, problems = {}, []
    for key in sorted(set(succeeded) | set(em)):
        try:
            if key in succeeded:
                ok = succeeded[key]
                if not isinstance(ok, bool):
                    raise ValueError(f"model_succeeded of {key!r} must be true/false, got {ok!r}")
            else:
                ok = as_nonneg_float(em[key], f"model_exact_match of {key!r}") >= 1.0
            out[key] = dict(score=1.0 if ok else 0.0, response=as_optional_text(responses.get(key)),
                            **_usage(costs.get(key) or {}, key, "total_cost"))
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise ValueError("; ".join(problems))
    return out


def _evaluate_attempts(rec: dict) -> dict[str, dict[str, Any]]:
    out, problems = {}, []
    for key, res in _obj(rec, "model_results").items():
        try:
            if not isinstance(res, dict) or is_missing(res.get("exact_match")):
                raise ValueError(f"model_results of {key!r} needs an exact_match")
            em = as_nonneg_float(res["exact_match"], f"exact_match of {key!r}")
            out[as_text(key, "model key")] = dict(score=1.0 if em >= EVALUATE_SUCCESS_EM else 0.0,
                                                   response=as_optional_text(res.get("response")),
                                                   **_usage(res, key, "total_cost"))
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise ValueError("; ".join(problems))
    return out


def _usage(src: dict, key: str, cost_field: str) -> dict[str, Any]:
    if not isinstance(src, dict):
        raise ValueError(f"costs of {key!r} must be an object")

    def opt(name: str, parser):
        return None if is_missing(src.get(name)) else parser(src[name], f"{name} of {key!r}")

    return dict(prompt_tokens=opt("prompt_tokens", as_nonneg_int),
                completion_tokens=opt("completion_tokens", as_nonneg_int),
                cost_usd=opt(cost_field, bounds.cost))


def _obj(rec: dict, name: str) -> dict:
    value = rec.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be an object keyed by model")
    return value
