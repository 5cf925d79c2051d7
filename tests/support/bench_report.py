"""The benchmark report: every bench test records its figures here, and one Markdown table is written at the end.

A row is keyed by its figure name; writing merges with the table already in the file, so a partial run (one bench
file, one parametrisation) replaces only the rows it measured and keeps the others with their own dates.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

HEADER = ("Figure", "Value", "Target", "Met", "Baseline (same run)", "Ratio to baseline", "Measured")
TABLE_START = "<!-- bench table -->"
TABLE_END = "<!-- end bench table -->"
INTRO = (
    "# Benchmarks\n\n"
    "Written by `make bench` (`pytest -m bench -s -p no:randomly`); each row is replaced when its benchmark runs "
    "again, so a partial run updates only its rows. *Ratio to baseline* is how many times better the figure is than "
    "the baseline measured in the same run (above 1: faster, or more per second). *Met* is blank where a figure has "
    "no target.\n"
)


def _number(x: float) -> str:
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"


def _cell(text: str) -> str:
    """Table cells are plain text: pipes and line breaks would break the row."""
    return str(text).replace("|", "/").replace("\n", " ").strip()


@dataclass(frozen=True)
class Row:
    figure: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    baseline: float | None = None
    baseline_label: str = ""
    higher_is_better: bool = False
    measured: str = ""
    why: str = ""

    def ratio(self) -> float | None:
        if self.baseline is None or not self.value or not self.baseline:
            return None
        return self.value / self.baseline if self.higher_is_better else self.baseline / self.value

    def cells(self) -> tuple[str, ...]:
        base = ""
        if self.baseline is not None:
            label = f" ({self.baseline_label})" if self.baseline_label else ""
            base = f"{_number(self.baseline)} {self.unit}{label}"
        ratio = self.ratio()
        met = "" if self.met is None else ("yes" if self.met else "**no**")
        if self.met is False and self.why:
            met += f": {self.why}"
        return tuple(_cell(c) for c in (self.figure, f"{_number(self.value)} {self.unit}", self.target, met, base,
                                        "" if ratio is None else f"{ratio:.2f}x", self.measured))


def _stamp() -> str:
    """When, and how busy the machine was: absolute times on a shared 2-core machine mean little without it."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{stamp}, load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else stamp


class BenchReport:
    """Figures of one run, keyed by name (a later record of the same figure replaces the earlier one)."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}

    def __call__(self, figure: str, value: float, unit: str, *, target: str = "", met: bool | None = None,
                 baseline: float | None = None, baseline_label: str = "", higher_is_better: bool = False,
                 why: str = "") -> None:
        """Record one figure; `why` says why a target is not met (shown only when it is not)."""
        value = float(value)
        if not figure.strip():
            raise ValueError("a benchmark figure needs a name")
        if not math.isfinite(value):
            raise ValueError(f"benchmark figure {figure!r} is not a finite number: {value}")
        self.rows[figure] = Row(figure, value, unit, target, met, None if baseline is None else float(baseline),
                                baseline_label, higher_is_better, _stamp(), why)

    def write(self, path: Path, note: str = "") -> None:
        """Merge this run's rows into the table at `path` (created when missing), keeping the others."""
        path = Path(path)
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        rows = read_rows(old)
        for name, row in self.rows.items():
            rows[name] = row.cells()
        table = render(rows)
        if TABLE_START in old and TABLE_END in old:
            head, rest = old.split(TABLE_START, 1)
            tail = rest.split(TABLE_END, 1)[1]
            text = head + table + tail
        else:
            text = INTRO + (f"\n{note}\n" if note else "") + "\n" + table + "\n"
        tmp = path.with_name(path.name + ".tmp")  # never a half-written report
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)


def render(rows: dict[str, tuple[str, ...]]) -> str:
    lines = [TABLE_START, "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows.values()]
    return "\n".join(lines + [TABLE_END])


_ROW = re.compile(r"^\|(.*)\|\s*$")


def read_rows(text: str) -> dict[str, tuple[str, ...]]:
    """The rows of the table in `text`, by figure name, in their order (header and rule skipped)."""
    if TABLE_START not in text or TABLE_END not in text:
        return {}
    body = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0]
    rows: dict[str, tuple[str, ...]] = {}
    for line in body.splitlines():
        m = _ROW.match(line.strip())
        if m:
            cells = tuple(c.strip() for c in m.group(1).split("|"))
            if len(cells) == len(HEADER) and cells != HEADER and not set(cells[0]) <= set("-: "):
                rows[cells[0]] = cells
    return rows
