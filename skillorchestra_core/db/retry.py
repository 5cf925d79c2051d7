"""Get-or-create for rows with a unique key that several processes may create at once."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, select

M = TypeVar("M", bound=SQLModel)


def get_or_create(s: Session, model: type[M], key: dict[str, Any], defaults: dict[str, Any] | None = None,
                  attempts: int = 3) -> tuple[M, bool]:
    """The row of `model` with the unique `key`, created with `defaults` when missing; returns (row, created).

    PostgreSQL: the insert runs in a SAVEPOINT; when another transaction committed the same key in between, only
    the savepoint is rolled back and the row it made is read instead, so the caller's transaction carries on.
    SQLite has one writer at a time, and its Python driver does not open a transaction for a SAVEPOINT (releasing it
    would commit the caller's work early): there the IntegrityError reaches the caller, whose retry redoes it all."""
    where = [getattr(model, name) == value for name, value in key.items()]
    for attempt in range(attempts):
        row = s.exec(select(model).where(*where)).first()
        if row is not None:
            return row, False
        if s.get_bind().dialect.name == "sqlite":
            row = model(**key, **(defaults or {}))
            s.add(row)
            s.flush()
            return row, True
        try:
            with s.begin_nested():
                row = model(**key, **(defaults or {}))
                s.add(row)
                s.flush()
            return row, True
        except IntegrityError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")
