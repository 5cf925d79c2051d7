"""Contrastive skill discovery with an LLM: the train queries of a mode where some agents succeeded and others
failed (tau+ vs tau-), in batches, each asking for a taxonomy of categories and sub-skills.

A batch whose reply never validates is skipped with its error noted; later batches see the skills found so far.
"""

from __future__ import annotations

from typing import Callable

from skillorchestra_core.handbook.content import HandbookContent, SkillSpec
from skillorchestra_core.learning import llm_prompts as lp
from skillorchestra_core.learning.discovery import EXAMPLE_CHARS, EXAMPLES, ModeDiscovery, slug, unattributed
from skillorchestra_core.learning.inputs import LearnInputs
from skillorchestra_core.llm import LlmClient, ask_structured

PURPOSE = "learning.discovery"


def contrast_queries(content: HandbookContent, inputs: LearnInputs, mode: str, limit: int | None) -> list[int]:
    """Unattributed train queries of the mode with both a success and a failure, in id order, at most `limit`."""
    c = inputs.contrast(mode)
    todo = set(unattributed(content, inputs, mode)) or set(int(q) for q in c.index)
    ids = [int(q) for q in c.index[c["mixed"]] if int(q) in todo]
    return ids[:limit] if limit else ids


def discover_llm(client: LlmClient, content: HandbookContent, inputs: LearnInputs, mode: str, *,
                 limit: int | None = None, budget: int = lp.MAX_PROMPT_CHARS,
                 tick: Callable[[int, int], None] | None = None) -> ModeDiscovery:
    ids = contrast_queries(content, inputs, mode, limit)
    found = ModeDiscovery(mode, f"llm:{client.model}", stats={"contrast_queries": len(ids)})
    if not ids:
        found.notes.append(f"{mode}: no train query has both a success and a failure; nothing to contrast")
        return found
    c = inputs.contrast(mode)
    blocks = [lp.query_block(f"Q{i + 1}", inputs.texts[q], c.at[q, "succeeded"], c.at[q, "failed"],
                             inputs.outputs(q, mode)) for i, q in enumerate(ids)]
    groups = lp.batches(blocks, budget)
    description = content.modes[mode].description if mode in content.modes else ""
    for n, group in enumerate(groups):
        existing = [f"- {s.key}: {s.name}" for s in content.skills_in_mode(mode)] + \
                   [f"- {s.key}: {s.name}" for s in found.skills]
        got = ask_structured(client, lp.discovery_messages(mode, description, [blocks[i] for i in group], existing),
                             lp.DiscoveryReply, purpose=PURPOSE)
        if got.value is None:
            found.notes.append(f"{mode}: discovery batch {n + 1}/{len(groups)} failed: {got.error}")
        else:
            _add(found, got.value, got.model, n, [inputs.ext_ids[ids[i]] for i in group])
        if tick:
            tick(n + 1, len(groups))
    found.stats["batches"] = len(groups)
    return found


def _add(found: ModeDiscovery, reply: lp.DiscoveryReply, model: str, batch: int, refs: list[str]) -> None:
    known = {s.key for s in found.skills}
    for cat in reply.categories:
        cat_key = f"{found.mode}.{slug(cat.name)}"
        prov = {"source": "llm", "model": model, "method": "contrastive-discovery", "batch": batch + 1,
                "queries": refs[:15]}
        if cat_key not in known:
            found.skills.append(SkillSpec(cat_key, found.mode, cat.name, cat.description or cat.name,
                                          provenance={**prov, "level": "category"}))
            known.add(cat_key)
        for d in cat.skills:
            key = f"{cat_key}.{slug(d.skill_id.rsplit('.', 1)[-1] or d.name)}"
            if key in known:
                continue
            known.add(key)
            found.skills.append(SkillSpec(
                key, found.mode, d.name, d.description, [i for i in d.indicators if i.strip()][:10],
                [e[:EXAMPLE_CHARS] for e in d.examples if e.strip()][:EXAMPLES], parent_key=cat_key,
                provenance={**prov, "level": "sub-skill", "requested_id": d.skill_id}))
