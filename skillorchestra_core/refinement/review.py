"""Review decisions, each one transaction: a compare-and-set on the candidate, the new handbook version (for an
approval), and an audit row with before and after. Two reviewers deciding at once: the first wins; the other gets
"already <status> by <who> at <when>" and nothing of theirs is written. A candidate carried forward to a newer
version under a decision (another approval moved the handbook on) is read again and decided there; with the row
version the reviewer saw, they are told it changed instead."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from sqlalchemy import update
from sqlmodel import Session, col

from skillorchestra_core.db.models import AuditLog, Handbook, HandbookVersion, RefinementCandidate, key, utcnow
from skillorchestra_core.errors import Conflict, StudioError
from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.handbook.store import commit_version, load_content
from skillorchestra_core.refinement import roles
from skillorchestra_core.refinement.apply import apply_proposal
from skillorchestra_core.refinement.evidence import TRAIN
from skillorchestra_core.refinement.proposals import offline_proposal
from skillorchestra_core.refinement.records import CandidateRecord, Proposal
from skillorchestra_core.refinement.store import get_row, refresh


@dataclass(frozen=True)
class Decision:
    candidate_id: int
    status: str
    version: int | None  # the new handbook version an approval made
    message: str


def _decided_message(row: RefinementCandidate) -> str:
    if row.status == "superseded":
        return f"candidate #{row.id} is superseded ({row.decision_note}); run detection again"
    when = row.decided_at.strftime("%Y-%m-%d %H:%M:%S UTC") if row.decided_at else "an unknown time"
    return f"candidate #{row.id} was already {row.status} by {row.decided_by} at {when}"


class _CarriedForward(Exception):
    """The compare-and-set lost to a carry-forward: the candidate is still pending, on a newer version."""


_ATTEMPTS = 5


def _changed_message(candidate_id: int) -> str:
    return (f"candidate #{candidate_id} changed since you saw it (new proposal or handbook version); "
            "reload and decide again")


def _current(s: Session, candidate_id: int, seen: int | None) -> RefinementCandidate:
    row = get_row(s, candidate_id)
    refresh(s, row.handbook_id)
    row = get_row(s, candidate_id)
    if row.status != "pending":
        raise Conflict(_decided_message(row))
    if seen is not None and row.row_version != seen:
        raise Conflict(_changed_message(key(row)))
    return row


def _claim(s: Session, row: RefinementCandidate, seen: int, status: str, who: str, note: str) -> None:
    res = s.exec(update(RefinementCandidate).where(
        col(RefinementCandidate.id) == row.id, col(RefinementCandidate.row_version) == seen,
        col(RefinementCandidate.status) == "pending").values(
        status=status, row_version=RefinementCandidate.row_version + 1, decided_by=who, decided_at=utcnow(),
        decision_note=note))
    if res.rowcount != 1:
        s.rollback()
        now = get_row(s, key(row))
        if now.status == "pending":
            raise _CarriedForward
        raise Conflict(_decided_message(now))


def _decide(s: Session, candidate_id: int, seen: int | None, attempt: Callable[[RefinementCandidate], Decision]
            ) -> Decision:
    """Run one decision attempt on the current row; when a carry-forward beat its compare-and-set, read the row
    again (a reviewer who gave the row version they saw is told instead: what they saw is not what is there)."""
    for _ in range(_ATTEMPTS):
        try:
            return attempt(_current(s, candidate_id, seen))
        except _CarriedForward:
            if seen is not None:
                raise Conflict(_changed_message(candidate_id)) from None
    raise Conflict(f"candidate #{candidate_id} kept moving to newer handbook versions; decide again")


def _skill_specs(content: HandbookContent, keys: list[str]) -> list[dict]:
    return [asdict(content.skills[k]) for k in keys if k in content.skills]


def evidence_texts(s: Session, record: CandidateRecord) -> dict[int, str]:
    from sqlmodel import select

    from skillorchestra_core.db.models import Query

    ids = [q for g in record.groups for q in g.query_ids]
    out: dict[int, str] = {}
    for start in range(0, len(ids), 900):
        out.update((i, t) for i, t in s.exec(select(Query.id, Query.text).where(
            col(Query.id).in_(ids[start:start + 900]), Query.split == TRAIN)) if i is not None)
    return out


def approve(s: Session, candidate_id: int, actor: str, *, seen_row_version: int | None = None,
            edits: Proposal | None = None, note: str = "") -> Decision:
    """Apply the candidate's proposal (or `edits`, recorded as "edited"; or, with no stored proposal, the offline
    one) as a new version whose parent is the version the candidate was computed on."""
    who = roles.require(s, actor, "reviewer", "approve a candidate")
    return _decide(s, candidate_id, seen_row_version, lambda row: _approve(s, row, who, edits, note))


def _approve(s: Session, row: RefinementCandidate, who: str, edits: Proposal | None, note: str) -> Decision:
    record = CandidateRecord.model_validate(row.record)
    content = load_content(s, row.version_id)
    stored = Proposal.model_validate(row.proposal) if row.proposal_status == "ok" else None
    proposal = edits or stored or offline_proposal(record, content)
    status = "edited" if edits is not None and edits != stored else "approved"
    new_content = apply_proposal(content, record, proposal, key(row), evidence_texts(s, record))
    parent = s.get(HandbookVersion, row.version_id)
    handbook = s.get(Handbook, row.handbook_id)
    if parent is None or handbook is None:  # the foreign keys forbid it
        raise StudioError(f"candidate #{row.id} points at a version or handbook that is gone")
    _claim(s, row, row.row_version, status, who, note)
    try:  # commit_version is a compare-and-set on `parent`: a newer version makes it raise Conflict
        version, _ = commit_version(s, handbook, new_content, author=who,
                                    message=f"{record.title} (candidate #{row.id}, {status})", source="refinement",
                                    parent=parent, force=True)
    except Exception:
        s.rollback()  # the claim goes too: a decision is all or nothing
        raise
    s.exec(update(RefinementCandidate).where(col(RefinementCandidate.id) == row.id)
           .values(result_version_id=version.id))
    s.add(AuditLog(actor=who, action=f"refinement.{status}", entity="refinement_candidate", entity_id=row.id,
                   handbook_id=row.handbook_id, details={
                       "candidate": record.title, "note": note, "proposal": proposal.model_dump(mode="json"),
                       "before": {"status": "pending", "version": parent.number,
                                  "skills": _skill_specs(content, record.skills)},
                       "after": {"status": status, "version": version.number,
                                 "skills": _skill_specs(new_content, [p.key for p in proposal.skills])}}))
    s.commit()
    refresh(s, row.handbook_id)  # after the decision's commit: the write lock is held only for the decision
    s.commit()
    return Decision(key(row), status, version.number, f"{status} #{row.id}: {record.title} -> v{version.number}")


def reject(s: Session, candidate_id: int, actor: str, reason: str, *, seen_row_version: int | None = None) -> Decision:
    who = roles.require(s, actor, "reviewer", "reject a candidate")
    if not reason or not reason.strip():
        raise StudioError("a rejection needs a reason")
    return _decide(s, candidate_id, seen_row_version, lambda row: _reject(s, row, who, reason.strip()))


def _reject(s: Session, row: RefinementCandidate, who: str, reason: str) -> Decision:
    record = CandidateRecord.model_validate(row.record)
    _claim(s, row, row.row_version, "rejected", who, reason)
    s.add(AuditLog(actor=who, action="refinement.rejected", entity="refinement_candidate", entity_id=row.id,
                   handbook_id=row.handbook_id, details={
                       "candidate": record.title, "reason": reason,
                       "before": {"status": "pending"}, "after": {"status": "rejected"}}))
    s.commit()
    return Decision(key(row), "rejected", None, f"rejected #{row.id}: {record.title}")
