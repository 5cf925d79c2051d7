"""Shared pieces of every importer: file reading with clear errors, value parsers, bad-row bookkeeping, hash splits.

Parsers return a value or raise `ValueError` with a reason meant for the user; the importers collect those reasons
per row so a file is reported in full, never one error at a time.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from skillorchestra_core.errors import BadRow, ImportRejected, StudioError
from skillorchestra_core.formats import bounds, json_safe

SPLITS = ("train", "val", "test")
_SPLIT_ALIASES = {"validation": "val", "valid": "val", "dev": "val"}
_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}
_MODE_RE = re.compile(r"^[A-Za-z0-9_-]+$")


class MalformedFile(StudioError):
    """The file as a whole cannot be read (missing, empty, not UTF-8, bad JSON, missing columns, ...)."""

    def __init__(self, message: str) -> None:
        # One line whatever the file holds: a column name may carry line breaks of its own.
        super().__init__(" ".join(message.split()))


@dataclass(frozen=True)
class RowIssue(BadRow):
    """A bad row with its unit ("line", "row" for Parquet, "record" for JSON lists) and, when an import reads
    several files, the file it came from."""

    unit: str = "line"
    file: str = ""

    def where(self, default_path: str) -> str:
        path = self.file or default_path
        return f"{path}:{self.line}" if self.unit == "line" else f"{path} {self.unit} {self.line}"

    def __str__(self) -> str:
        return f"{self.unit} {self.line}: {self.reason}"


class RowsRejected(ImportRejected):
    """ImportRejected whose message says "row N" or "record N" where lines are not the unit."""

    def __init__(self, path: str, bad_rows: list[BadRow], limit: int = 20):
        super().__init__(path, bad_rows, limit)
        shown = "; ".join(f"{_where(b, path)}: {b.reason}" for b in bad_rows[:limit])
        more = f" (and {len(bad_rows) - limit} more)" if len(bad_rows) > limit else ""
        self.args = (f"{len(bad_rows)} bad row(s), nothing imported: {shown}{more}",)

    def __str__(self) -> str:
        return self.args[0]


def _where(bad: BadRow, path: str) -> str:
    return bad.where(path) if isinstance(bad, RowIssue) else f"{path}:{bad.line}"


def task_note(rows: list, skills_from_task: bool) -> tuple[str, ...]:
    if skills_from_task and not any(r.task for r in rows):
        return ("--skills-from-task: no row has a task label, so no skill was made",)
    return ()


def describe(bad: BadRow, path: str) -> str:
    """One line for listings of skipped rows."""
    return f"{_where(bad, path)}: {bad.reason}"


def settle(path: str, bad: Sequence[BadRow], skip_bad_rows: bool) -> list[BadRow]:
    """Reject the whole file when it has bad rows, unless the user asked to skip them; returns the skipped rows."""
    bad = sorted(bad, key=lambda b: (getattr(b, "file", ""), b.line))
    if bad and not skip_bad_rows:
        raise RowsRejected(path, bad)
    return bad


# --- files ---------------------------------------------------------------------------------------------------------

MAX_IMPORT_MB_SETTING = "SKILLORCHESTRA_MAX_IMPORT_MB"
DEFAULT_MAX_IMPORT_MB = 2048


def max_import_mb() -> float:
    """The largest file an import reads, in megabytes (MiB): setting SKILLORCHESTRA_MAX_IMPORT_MB, default 2048."""
    raw = os.environ.get(MAX_IMPORT_MB_SETTING, "").strip()
    if not raw:
        return float(DEFAULT_MAX_IMPORT_MB)
    try:
        mb = float(raw)
    except ValueError:
        mb = math.nan
    if not (math.isfinite(mb) and mb > 0):
        raise MalformedFile(f"{MAX_IMPORT_MB_SETTING}={raw!r}: expected a positive number of megabytes")
    return mb


def max_import_bytes() -> int:
    return int(max_import_mb() * (1 << 20))


def check_input(path: Path) -> os.stat_result:
    """The one check before any import opens a file: it exists, is a regular file (a FIFO would block the read
    forever, a device never ends) and is within the size limit. Only stat()s: nothing is opened."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise MalformedFile(f"{path}: no such file") from None
    except PermissionError:
        raise MalformedFile(f"{path}: cannot read (permission denied)") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise MalformedFile(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise MalformedFile(f"{path}: is a directory, expected a file")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode)
                or stat.S_ISBLK(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else "not a file")
        raise MalformedFile(f"{path}: is {kind}, expected a regular file")
    limit = max_import_mb()
    if info.st_size > limit * (1 << 20):
        raise MalformedFile(f"{path}: {info.st_size:,} bytes is over the import limit of {limit:g} MB "
                            f"(setting {MAX_IMPORT_MB_SETTING})")
    return info


def _open_error(path: Path, exc: OSError) -> MalformedFile:
    return MalformedFile(f"{path}: cannot read ({exc.strerror or exc})")


def read_bytes(path: Path) -> bytes:
    check_input(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _open_error(path, exc) from None
    if not data.strip():
        raise MalformedFile(f"{path}: file is empty")
    return data


def read_text(path: Path) -> str:
    """The file as UTF-8 text (a BOM is allowed); the error names the line of the first undecodable byte."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise MalformedFile(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                            "save the file as UTF-8") from None


def check_file(path: Path) -> None:
    """The checks of `read_bytes` without holding the file: a regular file within the size limit, with non-blank
    content."""
    check_input(path)
    try:
        with path.open("rb") as fh:
            while block := fh.read(1 << 20):
                if block.strip():
                    return
    except OSError as exc:
        raise _open_error(path, exc) from None
    raise MalformedFile(f"{path}: file is empty")


def text_lines(path: Path, newline: str | None = "\n") -> Iterator[str]:
    """The file's UTF-8 text (a BOM is allowed) as it is read, in lines; undecodable bytes raise the same error as
    `read_text`, naming their line. `newline` as for `open` ("\n": split on line feeds only)."""
    check_file(path)
    try:
        with path.open(encoding="utf-8-sig", newline=newline) as fh:
            yield from fh
    except UnicodeDecodeError:
        read_text(path)  # raises MalformedFile with the line of the first bad byte
        raise
    except OSError as exc:
        raise _open_error(path, exc) from None


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, object, None) per non-blank line of a JSON Lines file, or (line, None, reason) when the line
    is not a JSON object. Streamed: the file is never held whole."""
    for number, raw in enumerate(text_lines(path), start=1):  # line feeds only, not splitlines(): U+2028
        raw = raw.rstrip("\n").rstrip("\r")
        if not raw.strip():
            continue
        try:
            rec = json_safe.loads(raw)
        except json_safe.JsonProblem as exc:
            yield number, None, exc.reason
            continue
        if isinstance(rec, dict):
            yield number, rec, None
        else:
            yield number, None, f"expected a JSON object, got {type(rec).__name__}"


def load_json_document(path: Path) -> Any:
    text = read_text(path)
    try:
        return json_safe.loads(text)
    except json_safe.JsonProblem as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise MalformedFile(f"{where}: {exc.reason}") from None


def one_line(exc: object) -> str:
    """A library's error text (pyarrow's spans lines) as one line."""
    return " ".join(str(exc).split())


# --- values --------------------------------------------------------------------------------------------------------

def is_missing(value: Any) -> bool:
    if value is None or value == "":
        return True
    if type(value) is str:
        return value.isspace()
    return isinstance(value, float) and math.isnan(value)


def as_text(value: Any, name: str) -> str:
    if value.__class__ is str:  # the common case (every CSV field), checked first
        text = value.strip()
        if not text:
            raise ValueError(f"{name} is empty")
        return text
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        raise ValueError(f"{name} must be a string, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 12.0 read from a numeric column means id "12"
    text = str(value).strip()
    if not text:
        raise ValueError(f"{name} is empty")
    return text


def as_float(value: Any, name: str) -> float:
    if value.__class__ is str:  # the common case, checked first
        try:
            out = float(value)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {value!r}") from None
        if not math.isfinite(out):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        return out
    return bounds.number(value, name)


def as_unit(value: Any, name: str = "score") -> float:
    out = as_float(value, name)
    if not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} {out:g} is outside [0, 1]")
    return out


def as_nonneg_float(value: Any, name: str) -> float:
    out = as_float(value, name)
    if out < 0:
        raise ValueError(f"{name} must not be negative, got {out:g}")
    return out


def as_nonneg_int(value: Any, name: str) -> int:
    """A token count: a whole number within [0, bounds.MAX_TOKENS]."""
    if value.__class__ is str and value.isascii() and value.isdigit() and len(value) < 16:  # the common case
        return int(value)
    return bounds.tokens(value, name)


def as_bool(value: Any, name: str = "success") -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"{name} must be true/false (or 1/0, yes/no), got {value!r}")


def as_split(value: Any) -> str:
    text = str(value).strip().lower()
    text = _SPLIT_ALIASES.get(text, text)
    if text not in SPLITS:
        raise ValueError(f"unknown split {value!r}; use train, val or test")
    return text


def as_mode(value: Any) -> str:
    text = str(value).strip()
    if not _MODE_RE.match(text):
        raise ValueError(f"mode {value!r} must be letters, digits, '_' or '-'")
    return text


def as_optional_text(value: Any) -> str | None:
    """Free text (ground truth, response); lists and dicts are kept as JSON."""
    if is_missing(value):
        return None
    if isinstance(value, (list, dict)):
        import json

        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
            return value[0]
        return json.dumps(value, ensure_ascii=False)
    return str(value)


# --- splits and ids ------------------------------------------------------------------------------------------------

def hash_split(text: str) -> str:
    """Deterministic split of a query by its text: b = int(first 8 hex digits of sha256(utf-8 text)) mod 100;
    b < 70 -> train, b < 80 -> val, else test (70/10/20)."""
    bucket = int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % 100
    return "train" if bucket < 70 else "val" if bucket < 80 else "test"


def short_hash(text: str, length: int = 12) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


# --- what an outcome import did --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParsedOutcomes:
    """Rows that passed validation, and the bad ones (empty unless the user asked to skip them)."""

    path: str
    rows: list  # list[evidence.ingest.OutcomeRow]
    skipped: list[BadRow]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportReport:
    path: str
    format: str
    rows: int
    result: Any  # evidence.ingest.IngestResult
    skipped: tuple[BadRow, ...] = ()
    notes: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        r = self.result
        status = f"created version {r.version}" if r.created_version else f"unchanged (still version {r.version})"
        out = [f"imported {self.format} {self.path} into {r.handbook!r}: {self.rows} row(s), "
               f"{r.queries_added} query(ies) added, {r.trajectories_added} trajectory(ies) added, "
               f"{r.trajectories_skipped} already present; {status}"]
        if self.skipped:
            out.append(f"skipped {len(self.skipped)} bad row(s):")
            out.extend(f"  {describe(b, self.path)}" for b in self.skipped)
        out.extend(self.notes)
        return out
