"""Apply a proposal to a version's content with the honest edits: a merge sums evidence, a split re-attributes it."""

from __future__ import annotations

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.content import HandbookContent, SkillSpec
from skillorchestra_core.handbook.edits import merge_skills, split_skill
from skillorchestra_core.refinement.proposals import check_proposal
from skillorchestra_core.refinement.records import CandidateRecord, Proposal


def _examples(texts: dict[int, str], ids: list[int], limit: int = 3) -> list[str]:
    return [texts[q] for q in ids if q in texts][:limit]


def apply_proposal(content: HandbookContent, record: CandidateRecord, proposal: Proposal, candidate_id: int,
                   texts: dict[int, str] | None = None) -> HandbookContent:
    """The new content. `texts` (train query id -> text) fills the new skills' examples from their evidence."""
    problems = check_proposal(record, proposal, content)
    if problems:
        raise StudioError("the proposal cannot be applied: " + "; ".join(problems[:5]))
    texts = texts or {}
    provenance = {"source": "refinement", "candidate": candidate_id, "proposal": proposal.source}
    if record.kind == "merge":
        a, b = (content.skills[k] for k in record.skills)
        p = proposal.skills[0]
        examples = list(dict.fromkeys(a.examples + b.examples))[:5]
        merged = SkillSpec(p.key, a.mode, p.name, p.description, list(p.indicators), examples, a.parent_key,
                           {**provenance, "merged_from": list(record.skills)})
        return merge_skills(content, a.key, b.key, merged)
    parent = record.skills[0]
    children = []
    for p in proposal.skills:
        ids = sorted(q for q, k in proposal.assignment.items() if k == p.key)
        children.append(SkillSpec(p.key, content.skills[parent].mode, p.name, p.description, list(p.indicators),
                                  _examples(texts, ids), parent, {**provenance, "split_from": parent}))
    return split_skill(content, parent, children, dict(proposal.assignment))
