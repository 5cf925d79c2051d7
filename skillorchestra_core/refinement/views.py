"""Plain rows for the review pages and the CLI: candidate lists, evidence tables with intervals, examples,
proposals, diffs. Text from data or an LLM stays text here; the pages show it as text."""

from __future__ import annotations

from skillorchestra_core.errors import StudioError
from skillorchestra_core.refinement.diff import VersionDiff
from skillorchestra_core.refinement.records import CandidateRecord, Proposal, ProposedSkill
from skillorchestra_core.refinement.store import CandidateView


def candidate_rows(views: list[CandidateView]) -> list[dict]:
    return [{"id": c.id, "kind": c.kind, "skills": " + ".join(c.skills), "statistic": round(c.statistic, 2),
             "detector": c.detector, "version": c.version, "status": c.status,
             "proposal": c.proposal.source if c.proposal else c.proposal_status,
             "decided_by": c.decided_by or "", "note": c.decision_note} for c in views]


def evidence_rows(record: CandidateRecord, level: float = 0.95) -> list[dict]:
    """Per agent: successes/attempts, posterior mean and credible interval per group, and its log Bayes factor."""
    rows = []
    for a in record.agents:
        row: dict = {"agent": a.agent}
        for g, s, f, (mean, lo, hi) in zip(record.groups, a.successes, a.failures, a.intervals(level)):
            row[f"{g.label}: n"] = round(s + f, 2)
            row[f"{g.label}: mean"] = round(mean, 3)
            row[f"{g.label}: interval"] = f"[{lo:.2f}, {hi:.2f}]"
        row["log BF"] = round(a.log_bf, 2)
        rows.append(row)
    return rows


def example_rows(record: CandidateRecord) -> list[dict]:
    return [{"group": g.label, "distinguishing terms": ", ".join(g.terms), "example": text}
            for g in record.groups for text in g.examples]


def proposal_rows(proposal: Proposal) -> list[dict]:
    counts: dict[str, int] = {}
    for child in proposal.assignment.values():
        counts[child] = counts.get(child, 0) + 1
    return [{"key": p.key, "name": p.name, "description": p.description, "indicators": ", ".join(p.indicators),
             "evidence queries": counts.get(p.key, 0)} for p in proposal.skills]


def edited_proposal(base: Proposal, skills: list[dict], assignment: dict[int, str] | None = None) -> Proposal:
    """A reviewer's edits on top of `base`: skills given as key, name, description, indicators (comma separated
    text or a list); `assignment` maps evidence query ids to child keys (split). A renamed child keeps its queries."""
    if len(skills) != len(base.skills):
        raise StudioError(f"expected {len(base.skills)} skill(s), got {len(skills)}")
    out, renamed = [], {}
    for old, new in zip(base.skills, skills):
        inds = new.get("indicators", old.indicators)
        inds = [x.strip() for x in inds.split(",") if x.strip()] if isinstance(inds, str) else list(inds)
        skill = ProposedSkill(key=(new.get("key") or old.key).strip(), name=(new.get("name") or old.name).strip(),
                              description=new.get("description", old.description).strip(), indicators=inds)
        renamed[old.key] = skill.key
        out.append(skill)
    moved = {q: renamed.get(k, k) for q, k in base.assignment.items()}
    moved.update({int(q): k for q, k in (assignment or {}).items()})
    return Proposal(source="human edit of " + base.source, rationale=base.rationale, skills=out, assignment=moved)


def diff_summary(d: VersionDiff) -> dict[str, int]:
    return {"skills added": len(d.skills_added), "skills removed": len(d.skills_removed),
            "skills changed": len(d.skills_changed), "posteriors moved": len(d.posteriors),
            "val routing changes": len(d.routing)}


def diff_skill_rows(d: VersionDiff) -> list[dict]:
    rows = [{"change": "added", "key": k["key"], "name": k["name"], "detail": k["description"]}
            for k in d.skills_added]
    rows += [{"change": "removed", "key": k["key"], "name": k["name"], "detail": k["description"]}
             for k in d.skills_removed]
    rows += [{"change": "changed", "key": k["key"], "name": "", "detail": ", ".join(k["fields"])}
             for k in d.skills_changed]
    return rows
