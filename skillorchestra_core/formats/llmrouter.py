"""LLMRouter "dcrouter" outcome set (a directory, see ../shared/data/llmrouter/README.md) as evidence.

Files read: dcrouter_train.json and dcrouter_test.json (lists of {question, scores{model: 0..1}}), the task labels
in default_query_train.jsonl / default_query_test.jsonl (joined on the exact question text) and the price cards in
default_llm.json (numeric input_price/output_price, USD per 1M tokens within `bounds.MAX_PRICE_PER_M`; litellm
model string from "model").

Rules, all deterministic:
- A question in both dcrouter files is kept once, with the train file's record (records are read train then test,
  first occurrence wins).
- Task label: the first label of the question in default_query_train.jsonl then default_query_test.jsonl file
  order (6 question texts carry two labels upstream). Its ground truth comes from the same query record.
- query_id = first 12 hex digits of sha256(question text); split = `rows.hash_split(question text)`: the first
  8 hex digits of the sha256 as an integer, mod 100: < 70 train, < 80 val, else test.
- No token counts upstream: prompt tokens = ceil(len(question) / 4); completion tokens = a budget per task
  (COMPLETION_BUDGET, DEFAULT_COMPLETION_BUDGET otherwise); cost_usd = tokens x the model's price card.
- Mode "answer", dataset "llmrouter", one trajectory per (question, scored model).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from sqlmodel import Session

from skillorchestra_core.evidence.ingest import AgentHint, OutcomeRow, ingest_outcomes
from skillorchestra_core.formats import bounds
from skillorchestra_core.formats.rows import (
    ImportReport,
    MalformedFile,
    ParsedOutcomes,
    RowIssue,
    as_unit,
    hash_split,
    jsonl_objects,
    load_json_document,
    settle,
    short_hash,
)

OUTCOME_FILES = ("dcrouter_train.json", "dcrouter_test.json")
QUERY_FILES = ("default_query_train.jsonl", "default_query_test.jsonl")
PRICE_FILE = "default_llm.json"

# Completion tokens a typical answer takes, by task: a letter for multiple choice, a short span for open QA, a worked
# solution for math, a function for code, a sentence for commongen.
COMPLETION_BUDGET = {
    "mmlu": 16, "gpqa": 16, "arc_challenge": 16, "commonsense_qa": 16, "openbook_qa": 16,
    "natural_qa": 32, "trivia_qa": 32, "commongen": 64,
    "gsm8k": 256, "agentverse-mgsm": 256, "agentverse-logicgrid": 256, "math": 512,
    "human_eval": 256, "mbpp": 256,
}
DEFAULT_COMPLETION_BUDGET = 128
MODE = "answer"
DATASET = "llmrouter"


def prompt_tokens(question: str) -> int:
    return math.ceil(len(question) / 4)


def completion_tokens(task: str | None) -> int:
    return COMPLETION_BUDGET.get(task or "", DEFAULT_COMPLETION_BUDGET)


def read_llmrouter(directory: str | Path, *,
                   skip_bad_rows: bool = False) -> tuple[ParsedOutcomes, dict[str, AgentHint]]:
    folder = Path(directory)
    if not folder.is_dir():
        raise MalformedFile(f"{folder}: not a directory (expected the LLMRouter folder holding {OUTCOME_FILES[0]})")
    hints = _price_cards(folder / PRICE_FILE)
    labels = _task_labels(folder)
    rows: list[OutcomeRow] = []
    bad: list[RowIssue] = []
    seen: set[str] = set()
    duplicates = 0
    for name in OUTCOME_FILES:
        records = load_json_document(folder / name)
        if not isinstance(records, list):
            raise MalformedFile(f"{folder / name}: expected a JSON list of {{question, scores}} records")
        for index, rec in enumerate(records, start=1):
            try:
                question, scores = _validate(rec)
            except ValueError as exc:
                bad.append(RowIssue(index, str(exc), unit="record", file=str(folder / name)))
                continue
            if question in seen:
                duplicates += 1  # same question in train and test: keep the train record
                continue
            seen.add(question)
            rows.extend(_rows(question, scores, labels.get(question), index, hints))
    skipped = settle(str(folder), bad, skip_bad_rows)
    unpriced = sorted({r.agent for r in rows} - set(hints))
    notes = [f"{duplicates} question(s) appear in both outcome files; kept the train record"]
    if unpriced:
        notes.append(f"no price card in {PRICE_FILE} for: {', '.join(unpriced)} (litellm's map is tried)")
    missing = len({r.query_id for r in rows if r.task is None})
    if missing:
        notes.append(f"{missing} question(s) have no task label")
    return ParsedOutcomes(str(folder), rows, skipped, tuple(notes)), hints


def import_llmrouter(
    s: Session, directory: str | Path, handbook: str, *, skills_from_task: bool = True, skip_bad_rows: bool = False,
    author: str = "cli",
) -> ImportReport:
    parsed, hints = read_llmrouter(directory, skip_bad_rows=skip_bad_rows)
    used = {r.agent for r in parsed.rows}
    result = ingest_outcomes(s, handbook, parsed.rows, source_label=parsed.path, author=author,
                             message=f"import LLMRouter outcome set from {parsed.path}",
                             skills_from_task=skills_from_task, skipped_rows=parsed.skipped,
                             agent_hints={k: v for k, v in hints.items() if k in used})
    return ImportReport(parsed.path, "llmrouter", len(parsed.rows), result, tuple(parsed.skipped), parsed.notes)


def _validate(rec: Any) -> tuple[str, dict[str, float]]:
    if not isinstance(rec, dict):
        raise ValueError(f"expected an object, got {type(rec).__name__}")
    question, scores = rec.get("question"), rec.get("scores")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("missing question text")
    if not isinstance(scores, dict) or not scores:
        raise ValueError("missing scores (an object model -> 0..1)")
    out, problems = {}, []
    for model, value in scores.items():
        try:
            out[str(model)] = as_unit(value, f"score of {model!r}")
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise ValueError("; ".join(problems))
    return question, out


def _rows(question: str, scores: dict[str, float], label: tuple[str, str | None] | None, index: int,
          hints: dict[str, AgentHint]) -> list[OutcomeRow]:
    task, truth = label if label else (None, None)
    qid, split = short_hash(question), hash_split(question)
    pt, ct = prompt_tokens(question), completion_tokens(task)
    return [OutcomeRow(line=index, query_id=qid, query=question, agent=model, score=score, mode=MODE, task=task,
                       split=split, ground_truth=truth, prompt_tokens=pt, completion_tokens=ct,
                       cost_usd=_cost(pt, ct, hints.get(model)), dataset=DATASET)
            for model, score in sorted(scores.items())]


def _cost(pt: int, ct: int, hint: AgentHint | None) -> float | None:
    # Unpriced models keep cost None: C(A, mode) then prices their tokens with litellm's card, if any.
    if hint is None or hint.input_price_per_m is None or hint.output_price_per_m is None:
        return None
    return (pt * hint.input_price_per_m + ct * hint.output_price_per_m) / 1e6


def _task_labels(folder: Path) -> dict[str, tuple[str, str | None]]:
    """question text -> (task label, ground truth), first occurrence in train-then-test file order."""
    labels: dict[str, tuple[str, str | None]] = {}
    for name in QUERY_FILES:
        path = folder / name
        if not path.exists():
            continue  # labels are optional: without them there are no task skills
        for number, rec, problem in jsonl_objects(path):
            if rec is None:
                raise MalformedFile(f"{path}:{number}: {problem}")
            if isinstance(rec.get("query"), str) and rec.get("task_name"):
                truth = rec.get("ground_truth")
                labels.setdefault(rec["query"], (str(rec["task_name"]), None if truth is None else str(truth)))
    return labels


def _price_cards(path: Path) -> dict[str, AgentHint]:
    if not path.exists():
        return {}
    doc = load_json_document(path)
    if not isinstance(doc, dict):
        raise MalformedFile(f"{path}: expected an object model -> {{input_price, output_price, model}}")
    hints, problems = {}, []
    for key, entry in doc.items():
        if not isinstance(entry, dict):
            continue
        prices = [entry.get("input_price"), entry.get("output_price")]
        if not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in prices):
            problems.append(f"model {key!r} needs numeric input_price and output_price")
            continue
        try:
            pin = bounds.price(prices[0], f"input_price of {key!r}")
            pout = bounds.price(prices[1], f"output_price of {key!r}")
        except ValueError as exc:
            problems.append(str(exc))
            continue
        hints[key] = AgentHint(model=str(entry.get("model") or key), input_price_per_m=pin,
                               output_price_per_m=pout, price_source="card")
    if problems:
        raise MalformedFile(f"{path}: {'; '.join(problems)}")
    return hints
