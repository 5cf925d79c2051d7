"""Live feedback: the outcome of a stored routed decision becomes evidence, and the handbook a new version.

The decision's query becomes a train query of its own (`feedback-<trace id>`), each routed step a trajectory with
source "feedback" in an evidence batch of its own, attributed with that step's activation weights; the next version
lists the batch, so its posteriors move by exactly the weighted counts (S += w * score, F += w * (1 - score)).
A query whose text is held-out (val/test) evidence is refused: feedback must not leak it into learning.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import insert
from sqlmodel import Session, col, select

from skillorchestra_core.db.engine import get_engine, lock_for_write
from skillorchestra_core.db.models import AuditLog, DecisionTrace, Handbook, Query, Trajectory, key
from skillorchestra_core.errors import NotFound, StudioError
from skillorchestra_core.evidence.batches import new_batch
from skillorchestra_core.handbook.store import commit_version, latest_content
from skillorchestra_core.routing.store import load_trace


@dataclass(frozen=True)
class FeedbackResult:
    trace_id: int
    handbook: str
    agent: str
    score: float
    version: int
    query_ext_id: str
    weights: dict[str, float]  # the last step's skills and the weights its evidence carries
    steps: int

    def to_dict(self) -> dict:
        return asdict(self)


def feedback_ext_id(trace_id: int) -> str:
    return f"feedback-{trace_id}"


def record_feedback(db_url: str | None, trace_id: int, score: float, *, author: str = "user") -> FeedbackResult:
    if not (0.0 <= float(score) <= 1.0):
        raise StudioError(f"feedback score must be between 0 and 1, got {score}")
    with Session(get_engine(db_url), expire_on_commit=False) as s:
        result = _record(s, trace_id, float(score), author)
        s.commit()
    return result


def _record(s: Session, trace_id: int, score: float, author: str) -> FeedbackResult:
    row = s.get(DecisionTrace, trace_id)
    if row is None:
        raise NotFound(f"no decision trace with id {trace_id}")
    trace = load_trace(s, trace_id)
    steps = [st for st in trace.steps if st.chosen]
    if not steps or row.handbook_id is None:
        raise StudioError(f"decision {trace_id} chose no agent of a stored handbook; nothing to give feedback on")
    hb = s.get(Handbook, row.handbook_id)
    if hb is None:
        raise NotFound(f"the handbook of decision {trace_id} is gone")
    hb_id, chosen = key(hb), steps[-1].chosen
    lock_for_write(s, f"handbook:{hb.name}")
    ext = feedback_ext_id(trace_id)
    if s.exec(select(Query.id).where(Query.handbook_id == hb_id, Query.ext_id == ext)).first() is not None:
        raise StudioError(f"decision {trace_id} already has feedback; evidence is append-only")
    held = s.exec(select(Query.ext_id).where(Query.handbook_id == hb_id, Query.text == trace.query,
                                             col(Query.split).in_(("val", "test")))).first()
    if held is not None:
        raise StudioError(f"decision {trace_id} routed held-out query {held!r}; feedback on it would leak "
                          "validation/test evidence into learning")
    query = Query(handbook_id=hb_id, ext_id=ext, text=trace.query, split="train", dataset="feedback")
    s.add(query)
    s.flush()
    parent, content = latest_content(s, hb_id)
    rows = [dict(handbook_id=hb_id, query_id=key(query), agent=st.chosen, mode=st.mode, score=score,
                 cost_usd=_cost(st), source="feedback", path=",".join(x.mode for x in steps)) for st in steps]
    batch = new_batch(s, hb_id, f"feedback on decision {trace_id}",
                      [(ext, r["agent"], r["mode"], "feedback", score, None, None, r["cost_usd"], None) for r in rows])
    s.exec(insert(Trajectory), params=[{**r, "batch_id": batch} for r in rows])
    content.evidence_batches = sorted({*content.evidence_batches, batch})
    weights = {}
    for st in steps:
        weights = _attribute(content, key(query), st)
    version, _ = commit_version(s, hb, content, author=author, message=f"feedback {score:g} on decision {trace_id}",
                                source="feedback", parent=parent)
    s.add(AuditLog(actor=author, action="decision.feedback", entity="decision_trace", entity_id=trace_id,
                   handbook_id=hb_id, details={"score": score, "version": version.number, "query": ext}))
    return FeedbackResult(trace_id, hb.name, chosen or "", score, version.number, ext, weights, len(steps))


def _cost(step) -> float | None:
    ex = step.execution
    if ex is None:
        return None
    return ex.cost_usd if ex.cost_usd is not None else ex.estimated_cost_usd


def _attribute(content, query_id: int, step) -> dict[str, float]:
    """The step's active skills that the handbook still has, renormalised; none leaves only the pooled rate."""
    kept = {a.skill: a.weight for a in step.active_skills if a.skill in content.skills and a.weight > 0}
    total = sum(kept.values())
    by = step.activation_source or "activation"
    out = {k: w / total for k, w in kept.items()} if total > 0 else {}
    for k, w in out.items():
        content.attributions[(query_id, step.mode, k)] = (w, by)
    return out
