"""Proposals: revised skill definitions for a candidate, from the LLM layer or the deterministic offline proposer.

A split proposal names two or more children under the parent and assigns EVERY evidence query of the candidate to one
of them; a merge proposal names one skill. The LLM is asked for JSON (`ask_structured`: validated, re-asked once);
output that still fails is returned as a failure with the error, never applied. The offline proposer names children
from each text group's distinguishing terms and says so in `source`.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, Field

from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.llm import LlmClient, ask_structured
from skillorchestra_core.refinement.records import CandidateRecord, Proposal, ProposedSkill

PURPOSE = "refinement.proposal"
OFFLINE = "offline proposal"
_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_SLUG = re.compile(r"[^a-z0-9]+")


class LlmChild(BaseModel):
    key: str
    name: str
    description: str = ""
    indicators: list[str] = Field(default_factory=list)
    group: str = Field(description="the evidence group (e.g. 'group 1') this child stands for")


class LlmSplitReply(BaseModel):
    rationale: str = ""
    children: list[LlmChild] = Field(min_length=2, max_length=4)
    moves: dict[str, str] = Field(default_factory=dict, description="query id -> child key, for queries that belong "
                                                                    "to another child than their group's")


class LlmMergeReply(BaseModel):
    rationale: str = ""
    merged: ProposedSkill


def slug(text: str) -> str:
    return _SLUG.sub("_", text.lower()).strip("_")[:40] or "part"


def check_proposal(record: CandidateRecord, proposal: Proposal, content: HandbookContent) -> list[str]:
    """Problems that would stop the proposal being applied to `content` (empty when it can be)."""
    problems = [f"skill key {s.key!r} is not a dotted identifier" for s in proposal.skills if not _KEY.match(s.key)]
    keys = [s.key for s in proposal.skills]
    if len(set(keys)) != len(keys):
        problems.append("two proposed skills share a key")
    if record.kind == "merge":
        if len(proposal.skills) != 1:
            problems.append("a merge proposes exactly one skill")
        clash = [k for k in keys if k in content.skills and k not in record.skills]
    else:
        if len(proposal.skills) < 2:
            problems.append("a split proposes at least two children")
        clash = [k for k in keys if k in content.skills]
        evidence = {q for g in record.groups for q in g.query_ids}
        missing = evidence - set(proposal.assignment)
        if missing:
            problems.append(f"{len(missing)} evidence query(ies) not assigned to a child, e.g. {min(missing)}")
        unknown = set(proposal.assignment.values()) - set(keys)
        if unknown:
            problems.append(f"assignment names unknown child(ren): {', '.join(sorted(unknown))}")
    problems += [f"skill {k!r} already exists" for k in clash]
    return problems


def offline_proposal(record: CandidateRecord, content: HandbookContent) -> Proposal:
    if record.kind == "merge":
        a, b = (content.skills[k] for k in record.skills)
        prefix = a.key.rsplit(".", 1)[0] + "." if "." in a.key else ""
        key = prefix + slug(a.key.rsplit(".", 1)[-1] + "_" + b.key.rsplit(".", 1)[-1])
        merged = ProposedSkill(key=key, name=f"{a.name or a.key} and {b.name or b.key}",
                               description=" ".join(x for x in (a.description, b.description) if x),
                               indicators=list(dict.fromkeys(a.indicators + b.indicators))[:30])
        return Proposal(source=OFFLINE, rationale="Agents' profiles on both skills are indistinguishable "
                        f"(log Bayes factor {record.statistic:.1f} for one shared rate).", skills=[merged])
    parent = content.skills[record.skills[0]]
    children, assignment, used = [], {}, set(content.skills)
    for i, group in enumerate(record.groups):
        base = f"{parent.key}.{slug('_'.join(group.terms[:2]) or f'part_{i + 1}')}"
        key, n = base, 2
        while key in used:
            key, n = f"{base}_{n}", n + 1
        used.add(key)
        terms = ", ".join(group.terms[:3]) or group.label
        children.append(ProposedSkill(key=key, name=f"{parent.name or parent.key}: {terms}",
                                      description=f"{parent.description} Queries about {terms}.".strip(),
                                      indicators=group.terms[:5]))
        assignment.update({q: key for q in group.query_ids})
    return Proposal(source=OFFLINE, rationale="Two text groups with different agent profiles "
                    f"(log Bayes factor {record.statistic:.1f} for one profile per group).",
                    skills=children, assignment=assignment)


def _evidence_table(record: CandidateRecord) -> str:
    lines = ["agent | " + " | ".join(g.label for g in record.groups)]
    for a in record.agents:
        cells = [f"{s:.0f}/{s + f:.0f}" for s, f in zip(a.successes, a.failures)]
        lines.append(f"{a.agent} | " + " | ".join(cells))
    return "\n".join(lines)


def _prompt(record: CandidateRecord, content: HandbookContent) -> str:
    defs = [{"key": k, "name": content.skills[k].name, "description": content.skills[k].description,
             "indicators": content.skills[k].indicators} for k in record.skills]
    parts = [f"Candidate: {record.title} (log Bayes factor {record.statistic:.2f}).",
             "Current skill definitions: " + json.dumps(defs),
             "Successes/attempts per agent and group:\n" + _evidence_table(record)]
    for g in record.groups:
        listed = [{"id": q, "text": t[:200]} for q, t in zip(g.query_ids, g.examples)]
        parts.append(f"{g.label} (distinguishing terms: {', '.join(g.terms) or '-'}; {len(g.query_ids)} queries), "
                     f"examples: " + json.dumps(listed))
    if record.kind == "split":
        parts.append(f"Propose 2 to 4 child skills of {record.skills[0]!r}, keys starting with "
                     f"'{record.skills[0]}.', each standing for one group; list in `moves` only queries that "
                     "belong to another child than their group's.")
    else:
        parts.append("Propose one skill that replaces both (same mode, a new dotted key).")
    return "\n\n".join(parts)


def _from_split_reply(reply: LlmSplitReply, record: CandidateRecord, model: str) -> Proposal:
    by_group = {c.group.strip().lower(): c.key for c in reply.children}
    assignment = {}
    for g in record.groups:
        child = by_group.get(g.label.lower())
        if child is None:
            raise ValueError(f"no child stands for {g.label!r}; give each group's child in `group`")
        assignment.update({q: child for q in g.query_ids})
    for q, child in reply.moves.items():
        if not q.strip().isdigit() or int(q) not in assignment:
            raise ValueError(f"`moves` names {q!r}, which is not an evidence query id")
        assignment[int(q)] = child
    skills = [ProposedSkill(key=c.key, name=c.name, description=c.description, indicators=c.indicators)
              for c in reply.children]
    return Proposal(source=f"llm:{model}", rationale=reply.rationale, skills=skills, assignment=assignment)


def llm_proposal(client: LlmClient, record: CandidateRecord, content: HandbookContent) -> tuple[Proposal | None, str]:
    """(proposal, "") or (None, error). The reply must validate AND be applicable, else it is re-asked once."""
    messages = [{"role": "system", "content": "You curate a skill handbook for routing queries to agents. Reply "
                 "with one JSON object only."}, {"role": "user", "content": _prompt(record, content)}]
    made: dict[str, Proposal] = {}

    def check(reply) -> None:
        proposal = (_from_split_reply(reply, record, client.model) if record.kind == "split" else
                    Proposal(source=f"llm:{client.model}", rationale=reply.rationale, skills=[reply.merged]))
        problems = check_proposal(record, proposal, content)
        if problems:
            raise ValueError("; ".join(problems[:5]))
        made["value"] = proposal

    schema = LlmSplitReply if record.kind == "split" else LlmMergeReply
    result = ask_structured(client, messages, schema, purpose=PURPOSE, check=check)
    if not result.ok:
        return None, result.error
    proposal = made["value"]
    return proposal.model_copy(update={"source": f"llm:{result.model}"}), ""
