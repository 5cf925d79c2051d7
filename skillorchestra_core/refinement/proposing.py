"""Make and store proposals for candidates: through a configured LLM, else the offline proposer. A failed proposal
is stored with its error (status "failed") and can be retried; it is never applied."""

from __future__ import annotations

from sqlalchemy import update
from sqlmodel import Session, col

from skillorchestra_core.db.models import RefinementCandidate
from skillorchestra_core.errors import Conflict
from skillorchestra_core.handbook.store import load_content
from skillorchestra_core.llm import LlmClient
from skillorchestra_core.llm.log import save_calls
from skillorchestra_core.refinement.proposals import llm_proposal, offline_proposal
from skillorchestra_core.refinement.records import CandidateRecord
from skillorchestra_core.refinement.store import get_row


def propose(s: Session, candidate_id: int, client: LlmClient | None = None) -> tuple[str, str]:
    """Propose for one pending candidate; returns (proposal_status, error). Uses the LLM when `client` talks to a
    real model (`configured`), the offline proposer otherwise. Bumps the row version: a reviewer who saw the old
    proposal must reload before deciding."""
    row = get_row(s, candidate_id)
    if row.status != "pending":
        raise Conflict(f"candidate #{row.id} is {row.status}; only pending candidates get proposals")
    record = CandidateRecord.model_validate(row.record)
    content = load_content(s, row.version_id)
    if client is not None and getattr(client, "configured", True):
        start = len(client.calls)
        proposal, error = llm_proposal(client, record, content)
        save_calls(s, client.calls.since(start))  # every call, valid or not, is logged with the decision
    else:
        proposal, error = offline_proposal(record, content), ""
    status, message = ("ok", "") if proposal is not None else ("failed", error[:4000])
    values: dict[str, object] = {"proposal_status": status, "proposal_error": message}
    if proposal is not None:
        values["proposal"] = proposal.model_dump(mode="json")
    res = s.exec(update(RefinementCandidate).where(
        col(RefinementCandidate.id) == row.id, col(RefinementCandidate.row_version) == row.row_version,
        col(RefinementCandidate.status) == "pending").values(row_version=RefinementCandidate.row_version + 1,
                                                              **values))
    if res.rowcount != 1:
        s.rollback()
        raise Conflict(f"candidate #{row.id} changed while proposing; try again")
    s.commit()
    return status, message


def propose_pending(s: Session, handbook: str, client: LlmClient | None = None) -> int:
    """Propose for every pending candidate of `handbook` without a successful proposal (failed ones are retried).
    Returns how many now have one."""
    from skillorchestra_core.refinement.store import list_candidates

    done = 0
    for c in list_candidates(s, handbook, "pending"):
        if c.proposal_status != "ok":
            done += propose(s, c.id, client)[0] == "ok"
    return done
