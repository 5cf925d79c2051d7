"""Outcomes long format (CSV, JSONL, Parquet): one row per (query, agent) attempt, the universal import.

Required: query_id, query, agent, and score (0..1) or success (bool-like; used only when score is empty).
Optional: mode (default "answer"), task, split (train/val/test), ground_truth, prompt_tokens, completion_tokens,
cost_usd, latency_s, response, dataset. Unknown columns are ignored and named in the report. Token counts, cost and
latency must lie within the limits of `bounds`.

Line numbers in errors: CSV = physical line of the row's first line (the header is line 1), JSONL = line number,
Parquet = row index + 1 ("row N"). A query given no split in any of its rows gets `rows.hash_split(query text)`.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sqlmodel import Session

from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.formats import bounds
from skillorchestra_core.formats.rows import (
    ImportReport,
    MalformedFile,
    ParsedOutcomes,
    RowIssue,
    RowsRejected,
    as_bool,
    as_mode,
    as_nonneg_int,
    as_optional_text,
    as_split,
    as_text,
    as_unit,
    check_file,
    hash_split,
    is_missing,
    jsonl_objects,
    one_line,
    settle,
    task_note,
    text_lines,
)

REQUIRED = ("query_id", "query", "agent")
OPTIONAL = ("score", "success", "mode", "task", "split", "ground_truth", "prompt_tokens", "completion_tokens",
            "cost_usd", "latency_s", "response", "dataset")
EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}

Record = tuple[int, Mapping[str, Any] | None, str | None]  # (line, record, reason when unreadable)
CHUNK_ROWS = 50_000


def read_outcomes(path: str | Path, *, dataset: str | None = None, skip_bad_rows: bool = False) -> ParsedOutcomes:
    """Parse and validate every row; raise RowsRejected listing all bad rows unless `skip_bad_rows`."""
    path = Path(path)
    kind = EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        raise MalformedFile(f"{path}: unknown extension {path.suffix or '(none)'!r}; outcome files are "
                            ".csv, .jsonl or .parquet")
    unit = "row" if kind == "parquet" else "line"
    records, columns = {"csv": _csv_records, "jsonl": _jsonl_records, "parquet": _parquet_records}[kind](path)
    default_dataset = dataset or path.stem
    rows: list[OutcomeRow] = []
    bad: list[RowIssue] = []
    shared: dict[str, str] = {}  # one string object per distinct id, text and label: a query's text repeats per agent
    for line, rec, reason in records:
        if rec is not None:
            try:
                rows.append(_share(parse_record(rec, line, default_dataset, dataset_forced=dataset is not None),
                                   shared))
                continue
            except ValueError as exc:
                reason = str(exc)
        bad.append(RowIssue(line, reason or "not a record", unit=unit))
    rows, cross = cross_check(rows, unit)
    if not rows and not bad and not cross:
        raise MalformedFile(f"{path}: no data rows")
    skipped = settle(str(path), bad + cross, skip_bad_rows)
    if not rows:
        raise RowsRejected(str(path), skipped)
    unknown = sorted(set(columns) - set(REQUIRED) - set(OPTIONAL))
    notes = (f"ignored unknown column(s): {', '.join(unknown)}",) if unknown else ()
    return ParsedOutcomes(str(path), rows, skipped, notes)


def import_outcomes(
    s: Session, path: str | Path, handbook: str, *, skills_from_task: bool = False, skip_bad_rows: bool = False,
    dataset: str | None = None, author: str = "cli",
) -> ImportReport:
    """Validate the file, then ingest it into `handbook` (the caller commits; nothing is written on error)."""
    parsed = read_outcomes(path, dataset=dataset, skip_bad_rows=skip_bad_rows)
    result = ingest_outcomes(s, handbook, parsed.rows, source_label=parsed.path, author=author,
                             skills_from_task=skills_from_task, skipped_rows=parsed.skipped)
    notes = parsed.notes + task_note(parsed.rows, skills_from_task)
    return ImportReport(parsed.path, "outcomes", len(parsed.rows), result, tuple(parsed.skipped), notes)


def _share(row: OutcomeRow, shared: dict[str, str]) -> OutcomeRow:
    """Reuse equal strings across rows (memory of large imports); values are unchanged."""
    row.query_id = shared.setdefault(row.query_id, row.query_id)
    row.query = shared.setdefault(row.query, row.query)
    row.agent = sys.intern(row.agent)
    row.mode = sys.intern(row.mode)
    row.dataset = sys.intern(row.dataset)
    if row.task is not None:
        row.task = sys.intern(row.task)
    return row


def _query_text(value: Any, name: str) -> str:
    as_text(value, name)  # rejects blanks and containers; the text itself is kept unstripped
    return str(value)


# Field -> parser; only fields present and non-empty in a record are parsed (one pass, no per-field closures: this
# loop runs once per row of files with 100,000s of rows).
_PARSERS = (
    ("query_id", as_text), ("query", _query_text), ("agent", as_text), ("score", as_unit), ("success", as_bool),
    ("mode", lambda v, n: as_mode(v)), ("split", lambda v, n: as_split(v)), ("prompt_tokens", as_nonneg_int),
    ("completion_tokens", as_nonneg_int), ("cost_usd", bounds.cost), ("latency_s", bounds.latency),
)


def parse_record(rec: Mapping[str, Any], line: int, dataset: str, dataset_forced: bool = False) -> OutcomeRow:
    """One record into an OutcomeRow; raises ValueError naming every problem of the row."""
    problems: list[str] = []
    vals: dict[str, Any] = {}
    get = rec.get
    for name, parser in _PARSERS:
        value = get(name)
        if value is None or value == "" or (value.__class__ is str and value.isspace()) or (
                isinstance(value, float) and value != value):  # rows.is_missing, inlined: runs 11 times a row
            continue
        try:
            vals[name] = parser(value, name)
        except ValueError as exc:
            problems.append(str(exc))
            vals[name] = None  # present but bad: no "missing" message on top
    if "query_id" not in vals or "query" not in vals or "agent" not in vals:
        problems.extend(f"missing {name}" for name in REQUIRED if name not in vals)
    score = vals.get("score")
    if "score" not in vals and vals.get("success") is not None:
        score = 1.0 if vals["success"] else 0.0
    elif "score" not in vals and "success" not in vals:
        problems.append("missing score (or success)")
    if problems or score is None:  # no problem listed means a score was found
        raise ValueError("; ".join(problems))
    row_dataset = dataset if dataset_forced or is_missing(get("dataset")) else str(rec["dataset"]).strip()
    task = None if is_missing(get("task")) else str(rec["task"]).strip()
    v = vals.get
    return OutcomeRow(line=line, query_id=vals["query_id"], query=vals["query"], agent=vals["agent"], score=score,
                      mode=v("mode") or "answer", task=task, split=v("split"),
                      ground_truth=as_optional_text(get("ground_truth")), prompt_tokens=v("prompt_tokens"),
                      completion_tokens=v("completion_tokens"), cost_usd=v("cost_usd"), latency_s=v("latency_s"),
                      response=as_optional_text(get("response")), dataset=row_dataset)


def cross_check(rows: list[OutcomeRow], unit: str = "line") -> tuple[list[OutcomeRow], list[RowIssue]]:
    """Checks across rows: one text, split and task per query id; one attempt per (query, agent, mode).

    Returns the rows that pass, with each query's split and task filled in from the rows that give them (else the
    hash split), and the failing rows.
    """
    text: dict[str, tuple[int, str]] = {}
    split: dict[str, tuple[int, str]] = {}
    task: dict[str, tuple[int, str]] = {}
    attempts: dict[tuple[str, str, str], int] = {}
    good, bad = [], []
    for r in rows:
        reasons = []
        first = text.setdefault(r.query_id, (r.line, r.query))
        if first[1] != r.query:
            reasons.append(f"query id {r.query_id!r} has a different text than on {unit} {first[0]}")
        for label, seen, value in (("split", split, r.split), ("task", task, r.task)):
            if value is not None:
                prev = seen.setdefault(r.query_id, (r.line, value))
                if prev[1] != value:
                    reasons.append(f"query id {r.query_id!r} has {label} {value!r} here but {prev[1]!r} on "
                                   f"{unit} {prev[0]}")
        key = (r.query_id, r.agent, r.mode)
        if key in attempts:
            reasons.append(f"duplicate attempt of agent {r.agent!r} on query {r.query_id!r} in mode {r.mode!r} "
                           f"(first on {unit} {attempts[key]})")
        if reasons:
            bad.append(RowIssue(r.line, "; ".join(reasons), unit=unit))
            continue
        attempts[key] = r.line
        good.append(r)
    for qid, (_, query) in text.items():
        split.setdefault(qid, (0, hash_split(query)))  # once per query, not per row
    for r in good:
        r.split = split[r.query_id][1]
        r.task = task[r.query_id][1] if r.query_id in task else None
    return good, bad


# --- readers: (records, column names) ------------------------------------------------------------------------------

def _check_columns(path: Path, columns: list[str], where: str) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if "score" not in columns and "success" not in columns:
        missing.append("score (or success)")
    if missing:
        raise MalformedFile(f"{where}: missing required column(s) {', '.join(missing)}; found "
                            f"{', '.join(columns) or 'none'}")


def _csv_records(path: Path) -> tuple[Iterator[Record], list[str]]:
    lines = text_lines(path, newline="")  # streamed; quoted fields may span lines
    reader = csv.reader(lines)
    try:
        header = [h.strip() for h in next(reader)]
    except (StopIteration, csv.Error) as exc:
        raise MalformedFile(f"{path}:1: cannot read the CSV header ({exc})") from None
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise MalformedFile(f"{path}:1: duplicate column(s) {', '.join(dupes)}")
    _check_columns(path, header, f"{path}:1")

    def records() -> Iterator[Record]:
        end = reader.line_num
        while True:
            start = end + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise MalformedFile(f"{path}:{start}: unreadable CSV ({exc})") from None
            end = reader.line_num
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue  # blank line
            if len(fields) != len(header):
                yield start, None, f"has {len(fields)} field(s), the header has {len(header)}"
            else:
                yield start, dict(zip(header, fields)), None

    return records(), header


def _jsonl_records(path: Path) -> tuple[Iterator[Record], list[str]]:
    columns: list[str] = []  # filled as the records are read (only reported after the whole file)
    seen: set[str] = set()

    def records() -> Iterator[Record]:
        for line, rec, reason in jsonl_objects(path):
            if rec:
                new = rec.keys() - seen
                if new:
                    seen.update(new)
                    columns.extend(sorted(new))
            yield line, rec, reason

    return records(), columns


def _parquet_records(path: Path) -> tuple[Iterator[Record], list[str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_file(path)
    try:
        source = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise MalformedFile(f"{path}: not a readable Parquet file ({one_line(exc)})") from None
    columns = source.schema_arrow.names
    _check_columns(path, columns, str(path))

    def records() -> Iterator[Record]:  # one row group batch at a time, never the whole table as Python objects
        row = 0
        try:
            for batch in source.iter_batches(batch_size=CHUNK_ROWS):
                for rec in batch.to_pylist():
                    row += 1
                    yield row, rec, None
        except (pa.ArrowException, OSError) as exc:
            raise MalformedFile(f"{path}: not a readable Parquet file ({one_line(exc)})") from None

    return records(), columns
