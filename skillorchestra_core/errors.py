"""Errors a user can act on. Each message names what is wrong and, where there is one, the file and line."""

from __future__ import annotations

from dataclasses import dataclass


class StudioError(Exception):
    """Base class: the CLI prints these as one line and exits non-zero."""


class NotFound(StudioError):
    pass


class SchemaTooNew(StudioError):
    pass


class ReadOnlyDatabase(StudioError):
    """A write to a database this user may only read (it was opened read-only)."""


class Conflict(StudioError):
    """Somebody else changed the thing first (compare-and-set lost)."""


@dataclass(frozen=True)
class BadRow:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


class ImportRejected(StudioError):
    """A file had bad rows; nothing was imported."""

    def __init__(self, path: str, bad_rows: list[BadRow], limit: int = 20):
        self.path = path
        self.bad_rows = bad_rows
        shown = "; ".join(f"{path}:{b.line}: {b.reason}" for b in bad_rows[:limit])
        more = f" (and {len(bad_rows) - limit} more)" if len(bad_rows) > limit else ""
        super().__init__(f"{len(bad_rows)} bad row(s), nothing imported: {shown}{more}")


class PermissionDenied(StudioError):
    """The acting person's role does not allow this (enforced in core, whatever a UI shows)."""
