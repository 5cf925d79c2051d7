"""Version history: list versions, restore an older one as a new version, preview what a candidate would change,
and read the audit log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from skillorchestra_core.db.models import AuditLog, Handbook, key
from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.store import (
    LoadedVersion,
    commit_version,
    get_handbook,
    get_version,
    list_versions,
    load_content,
    load_version_by_id,
)
from skillorchestra_core.refinement import roles
from skillorchestra_core.refinement.apply import apply_proposal
from skillorchestra_core.refinement.diff import VersionDiff, diff_loaded
from skillorchestra_core.refinement.proposals import offline_proposal
from skillorchestra_core.refinement.records import CandidateRecord, Proposal
from skillorchestra_core.refinement.review import evidence_texts
from skillorchestra_core.refinement.store import get_row, refresh


@dataclass(frozen=True)
class VersionRow:
    number: int
    parent: int | None
    author: str
    message: str
    source: str
    created_at: datetime
    content_hash: str
    skills: int


def version_rows(s: Session, name: str) -> list[VersionRow]:
    versions = list_versions(s, name)
    numbers = {v.id: v.number for v in versions}
    return [VersionRow(v.number, numbers.get(v.parent_id), v.author, v.message, v.source, v.created_at,
                       v.content_hash, len(load_content(s, key(v)).skills)) for v in versions]


def restore_version(s: Session, name: str, number: int, actor: str) -> int:
    """Copy version `number`'s content as a new version (parent: the latest). Returns the new number."""
    who = roles.require(s, actor, "reviewer", "restore a version")
    hb = get_handbook(s, name)
    old, latest = get_version(s, name, number), get_version(s, name)
    if old.id == latest.id:
        raise StudioError(f"v{number} is already the latest version of {name!r}")
    version, created = commit_version(s, hb, load_content(s, key(old)), author=who, source="restore",
                                      message=f"Restore v{number}", parent=latest, force=True)
    s.add(AuditLog(actor=who, action="version.restore", entity="handbook_version", entity_id=version.id,
                   handbook_id=hb.id, details={"before": {"version": latest.number, "hash": latest.content_hash},
                                               "after": {"version": version.number, "hash": version.content_hash,
                                                         "restored": number}}))
    s.commit()
    refresh(s, key(hb))
    s.commit()
    return version.number


def proposal_for(s: Session, candidate_id: int) -> Proposal:
    """What approving would apply: the stored proposal, else the offline one."""
    row = get_row(s, candidate_id)
    if row.proposal_status == "ok":
        return Proposal.model_validate(row.proposal)
    return offline_proposal(CandidateRecord.model_validate(row.record), load_content(s, row.version_id))


def preview_candidate(s: Session, candidate_id: int, edits: Proposal | None = None,
                      lam: float | None = None) -> VersionDiff:
    """The diff approving the candidate would cause (its proposal, `edits`, or the offline proposal)."""
    row = get_row(s, candidate_id)
    record = CandidateRecord.model_validate(row.record)
    base = load_version_by_id(s, row.version_id)
    proposal = edits or proposal_for(s, candidate_id)
    content = apply_proposal(base.content, record, proposal, key(row), evidence_texts(s, record))
    after = LoadedVersion(base.handbook_id, base.handbook_name, -1, base.number, f"preview:{row.id}", content,
                          base.synthetic)
    return diff_loaded(s, base, after, lam, stored_b=False, after_label=f"v{base.number} + #{row.id}")


@dataclass(frozen=True)
class AuditRow:
    id: int
    at: datetime
    actor: str
    action: str
    entity: str
    entity_id: int | None
    handbook: str | None
    details: dict


def audit_rows(s: Session, handbook: str | None = None, limit: int = 500) -> list[AuditRow]:
    names = dict(s.exec(select(Handbook.id, Handbook.name)).all())
    stmt = select(AuditLog).order_by(col(AuditLog.id).desc()).limit(limit)
    if handbook is not None:
        stmt = stmt.where(AuditLog.handbook_id == get_handbook(s, handbook).id)
    return [AuditRow(key(a), a.at, a.actor, a.action, a.entity, a.entity_id, names.get(a.handbook_id),
                     dict(a.details or {})) for a in s.exec(stmt)]
