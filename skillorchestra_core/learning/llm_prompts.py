"""LLM prompts and reply schemas for learning: contrastive skill discovery and hindsight attribution.

Queries go to the model in batches that fit a character budget. Replies are pydantic models validated by
`ask_structured` (one re-ask with the error); a semantic check rejects unknown skill ids and unknown query refs.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_PROMPT_CHARS = 12_000
QUERY_CHARS = 300


class SkillDraft(BaseModel):
    model_config = ConfigDict(extra="ignore")
    skill_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    indicators: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)


class CategoryDraft(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    description: str = ""
    skills: list[SkillDraft] = Field(min_length=1)


class DiscoveryReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    categories: list[CategoryDraft] = Field(min_length=1)


class SkillWeight(BaseModel):
    skill_id: str
    weight: float = Field(gt=0)


class QueryAttribution(BaseModel):
    query: str  # the batch's reference, e.g. "Q3"
    skills: list[SkillWeight] = Field(min_length=1)


class AttributionReply(BaseModel):
    attributions: list[QueryAttribution] = Field(min_length=1)


RESPONSE_CHARS = 200


def query_block(ref: str, text: str, succeeded: list[str], failed: list[str],
                outputs: dict[str, str] | None = None) -> str:
    """One query with its tau+ and tau- agents and, where recorded, one output of each side."""
    ok = ", ".join(succeeded) or "none"
    bad = ", ".join(failed) or "none"
    lines = [f"{ref}: {text[:QUERY_CHARS]}", f"  succeeded: {ok}", f"  failed: {bad}"]
    outputs = outputs or {}
    for tag, agents in (("tau+", succeeded), ("tau-", failed)):
        said = next(((a, outputs[a]) for a in agents if outputs.get(a)), None)
        if said:
            lines.append(f"  {tag} {said[0]} said: {' '.join(said[1].split())[:RESPONSE_CHARS]}")
    return "\n".join(lines)


def batches(blocks: list[str], budget: int = MAX_PROMPT_CHARS) -> list[list[int]]:
    """Indices of `blocks` grouped so each group's text stays within `budget` characters (at least one each)."""
    out: list[list[int]] = []
    size = 0
    for i, b in enumerate(blocks):
        if out and size + len(b) <= budget:
            out[-1].append(i)
            size += len(b)
        else:
            out.append([i])
            size = len(b)
    return out


def discovery_messages(mode: str, description: str, blocks: list[str], existing: list[str]) -> list[dict]:
    known = "\n".join(existing) or "(none yet)"
    return [
        {"role": "system", "content": (
            "You are a skill taxonomist for an agent router. For each query below some agents succeeded and others "
            "failed; name the capabilities that separate them. Propose a taxonomy of 2-6 categories with 1-4 "
            "fine-grained, recognisable-from-the-query skills each. Do not repeat existing skills. Reply with JSON "
            'only: {"categories": [{"name": "...", "description": "...", "skills": [{"skill_id": "category.skill", '
            '"name": "...", "description": "...", "indicators": ["words or cues in a query"], '
            '"examples": ["a short paraphrase of a query that needs it"]}]}]}')},
        {"role": "user", "content": f"Mode: {mode}. {description}\n\nExisting skills:\n{known}\n\n"
                                    "Queries with the agents that succeeded (tau+) and failed (tau-):\n"
                                    + "\n".join(blocks)},
    ]


def attribution_messages(mode: str, catalog: list[str], blocks: list[str]) -> list[dict]:
    return [
        {"role": "system", "content": (
            "You attribute queries to the skills they exercised, in hindsight: you see which agents succeeded and "
            "which failed; use where they differ as evidence. For every query give one or more skill ids from the "
            "catalog with positive weights (relative importance). Reply with JSON only: "
            '{"attributions": [{"query": "Q1", "skills": [{"skill_id": "...", "weight": 70}, ...]}, ...]}')},
        {"role": "user", "content": f"Mode: {mode}\n\nSkill catalog:\n" + "\n".join(catalog)
                                    + "\n\nQueries:\n" + "\n".join(blocks)},
    ]
