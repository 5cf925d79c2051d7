"""A cheap stamp of the database's handbook data, for caches: every import or edit makes a new version (versions
are immutable), so the highest version id changes whenever anything a page reads from a version could change."""

from __future__ import annotations

from sqlmodel import Session, func, select

from skillorchestra_core.db.models import Handbook, HandbookVersion


def data_revision(s: Session) -> tuple[int, int, int]:
    """(handbooks, versions, highest version id): equal stamps mean equal handbook data."""
    handbooks = s.exec(select(func.count()).select_from(Handbook)).one()
    versions, top = s.exec(select(func.count(), func.max(HandbookVersion.id)).select_from(HandbookVersion)).one()
    return int(handbooks), int(versions), int(top or 0)


def handbook_names(s: Session) -> list[str]:
    """The handbooks' names, sorted (what the sidebar picker needs, without counting their evidence)."""
    return list(s.exec(select(Handbook.name).order_by(Handbook.name)).all())
