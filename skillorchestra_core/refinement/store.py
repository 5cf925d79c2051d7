"""Candidates in the database: save a detection, list and read them, keep them current with the handbook.

Every change to a candidate row bumps `row_version`, so a reviewer's decision (a compare-and-set on the row version
they saw) fails when the candidate changed under them. When a handbook gets a newer version, a pending candidate is
carried forward if what it is about is unchanged there (same skills, same attributions to them, same agents and
evidence), else it is marked superseded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Handbook, HandbookVersion, RefinementCandidate
from skillorchestra_core.db.models import key as row_key
from skillorchestra_core.errors import NotFound, StudioError
from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.handbook.store import LoadedVersion, get_handbook, latest_version, load_content
from skillorchestra_core.refinement.records import CandidateRecord, Proposal

STATUSES = ("pending", "approved", "edited", "rejected", "superseded")


@dataclass(frozen=True)
class CandidateView:
    """A candidate as pages and the CLI see it (no ORM object leaves a session)."""

    id: int
    handbook: str
    version: int
    kind: str
    detector: str
    skills: list[str]
    statistic: float
    status: str
    row_version: int
    record: CandidateRecord
    proposal: Proposal | None
    proposal_status: str
    proposal_error: str
    decided_by: str | None
    decided_at: datetime | None
    decision_note: str
    result_version: int | None
    created_at: datetime

    def as_json(self) -> dict:
        return {"id": self.id, "handbook": self.handbook, "version": self.version, "kind": self.kind,
                "detector": self.detector, "skills": self.skills, "statistic": self.statistic,
                "status": self.status, "row_version": self.row_version,
                "proposal_status": self.proposal_status, "proposal_error": self.proposal_error,
                "proposal": self.proposal.model_dump(mode="json") if self.proposal else None,
                "decided_by": self.decided_by, "decided_at": self.decided_at.isoformat() if self.decided_at else None,
                "decision_note": self.decision_note, "result_version": self.result_version,
                "evidence": self.record.model_dump(mode="json")}


def _number(s: Session, version_id: int) -> int:
    v = s.get(HandbookVersion, version_id)
    if v is None:  # the foreign key forbids it
        raise NotFound(f"no handbook version with id {version_id}")
    return v.number


def view(s: Session, row: RefinementCandidate, handbook: str) -> CandidateView:
    return CandidateView(
        row_key(row), handbook, _number(s, row.version_id), row.kind, row.detector, list(row.skills), row.statistic,
        row.status, row.row_version, CandidateRecord.model_validate(row.record),
        Proposal.model_validate(row.proposal) if row.proposal_status == "ok" else None, row.proposal_status,
        row.proposal_error, row.decided_by, row.decided_at, row.decision_note,
        None if row.result_version_id is None else _number(s, row.result_version_id),
        row.created_at)


def save_detection(s: Session, loaded: LoadedVersion, records: list[CandidateRecord],
                   actor: str = "system") -> list[int]:
    """Store new candidates; one already pending on this version for the same change is kept, not duplicated."""
    existing = {(r.kind, r.detector, tuple(r.skills)): row_key(r) for r in s.exec(select(RefinementCandidate).where(
        RefinementCandidate.version_id == loaded.version_id, RefinementCandidate.status == "pending"))}
    ids = []
    for rec in records:
        key = (rec.kind, rec.detector, tuple(rec.skills))
        if key not in existing:
            row = RefinementCandidate(handbook_id=loaded.handbook_id, version_id=loaded.version_id, kind=rec.kind,
                                      detector=rec.detector, mode=rec.mode, skills=list(rec.skills),
                                      statistic=rec.statistic, record=rec.model_dump(mode="json"), created_by=actor)
            s.add(row)
            s.flush()
            existing[key] = row_key(row)
        ids.append(existing[key])
    return ids


def get_row(s: Session, candidate_id: int) -> RefinementCandidate:
    row = s.get(RefinementCandidate, candidate_id)
    if row is None:
        raise NotFound(f"no refinement candidate with id {candidate_id}")
    return row


def list_candidates(s: Session, handbook: str | None = None, status: str | None = None) -> list[CandidateView]:
    if status is not None and status not in STATUSES:
        raise StudioError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
    names = {}
    stmt = select(RefinementCandidate).order_by(col(RefinementCandidate.id))
    if handbook is not None:
        hb = get_handbook(s, handbook)
        refresh(s, row_key(hb))
        names[hb.id] = hb.name
        stmt = stmt.where(RefinementCandidate.handbook_id == hb.id)
    else:
        pending = s.exec(select(RefinementCandidate.handbook_id).where(RefinementCandidate.status == "pending")
                         .distinct()).all()
        for handbook_id in pending:
            refresh(s, handbook_id)
    if status is not None:
        stmt = stmt.where(RefinementCandidate.status == status)
    out = []
    for row in s.exec(stmt).all():
        if row.handbook_id not in names:
            owner = s.get(Handbook, row.handbook_id)
            names[row.handbook_id] = owner.name if owner is not None else f"#{row.handbook_id}"
        out.append(view(s, row, names[row.handbook_id]))
    return out


def _unchanged(old: HandbookContent, new: HandbookContent, row: RefinementCandidate) -> bool:
    """Is the candidate still about the same thing in `new`?"""
    if (old.evidence_batches, old.learn_splits) != (new.evidence_batches, new.learn_splits) \
            or old.agents_in_mode(row.mode) != new.agents_in_mode(row.mode):
        return False
    keys = set(row.skills)
    if any(old.skills.get(k) != new.skills.get(k) for k in keys):
        return False
    if row.kind == "split" and any(s.parent_key in keys for s in new.skills.values()):
        return False
    def mine(c):
        return {k: v for k, v in c.attributions.items() if k[2] in keys}
    return mine(old) == mine(new)


def refresh(s: Session, handbook_id: int) -> tuple[int, int]:
    """Carry pending candidates on older versions forward to the latest, or supersede them. Returns (carried,
    superseded). Each change is a compare-and-set on the row version."""
    latest = latest_version(s, handbook_id)
    if latest is None:
        return 0, 0
    stale = s.exec(select(RefinementCandidate).where(
        RefinementCandidate.handbook_id == handbook_id, RefinementCandidate.status == "pending",
        RefinementCandidate.version_id != latest.id)).all()
    if not stale:
        return 0, 0
    contents = {row_key(latest): load_content(s, row_key(latest))}
    carried = superseded = 0
    for row in stale:
        old = contents.setdefault(row.version_id, load_content(s, row.version_id))
        keep = _unchanged(old, contents[row_key(latest)], row)
        values = ({"version_id": latest.id} if keep else
                  {"status": "superseded", "decision_note": f"the handbook moved on to v{latest.number}"})
        res = s.exec(update(RefinementCandidate).where(
            col(RefinementCandidate.id) == row.id, col(RefinementCandidate.row_version) == row.row_version,
            col(RefinementCandidate.status) == "pending").values(row_version=RefinementCandidate.row_version + 1,
                                                                  **values))
        if res.rowcount == 1:
            carried, superseded = carried + keep, superseded + (not keep)
    s.flush()
    s.expire_all()
    return carried, superseded
