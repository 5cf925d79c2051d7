"""Structural edits of handbook content that keep evidence honest: a merge sums, a split re-attributes.

The reference code averages two Betas on merge (halving the evidence) and re-counts every trajectory after a split
(double counting). Here competence is derived from attributions, so both edits only move attribution weight.
"""

from __future__ import annotations

import copy

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.content import HandbookContent, ImportedCounts, SkillSpec, tree_problems


def _require(content: HandbookContent, key: str) -> SkillSpec:
    if key not in content.skills:
        raise StudioError(f"no skill {key!r} in this handbook version")
    return content.skills[key]


def merge_skills(content: HandbookContent, first: str, second: str, merged: SkillSpec) -> HandbookContent:
    """Replace skills `first` and `second` (same mode) by `merged`, summing their evidence and imported counts."""
    a, b = _require(content, first), _require(content, second)
    if a.mode != b.mode or merged.mode != a.mode:
        raise StudioError(f"can only merge skills of one mode ({a.mode!r} vs {b.mode!r})")
    if merged.key in content.skills and merged.key not in (first, second):
        raise StudioError(f"skill {merged.key!r} already exists")
    gone = {first, second}
    if merged.parent_key in gone or merged.parent_key == merged.key:
        raise StudioError(f"the merged skill {merged.key!r} cannot have {merged.parent_key!r} as its parent: "
                          "that skill is merged into it (a skill cannot be its own parent)")
    out = copy.deepcopy(content)
    for key in gone:
        del out.skills[key]
    out.skills[merged.key] = copy.deepcopy(merged)
    for skill in out.skills.values():
        if skill.parent_key in gone:
            skill.parent_key = merged.key
    attributions: dict = {}
    for (q, m, k), (w, by) in out.attributions.items():
        key = merged.key if k in gone else k
        old_w, old_by = attributions.get((q, m, key), (0.0, by))
        attributions[(q, m, key)] = (old_w + w, old_by)
    out.attributions = attributions
    summed: dict[tuple[str, str], list[float]] = {}
    for ikey in [k for k in out.imported if k[2] in gone]:
        counts = out.imported.pop(ikey)
        acc = summed.setdefault((counts.agent, counts.mode), [1.0, 1.0])
        acc[0] += max(counts.alpha - 1.0, 0.0)  # reference counts carry a Beta(1,1) prior: add the excess only
        acc[1] += max(counts.beta - 1.0, 0.0)
    for (agent, mode), (alpha, beta) in summed.items():
        out.imported[(agent, mode, merged.key)] = ImportedCounts(agent, mode, merged.key, alpha, beta)
    _require_sound(out)
    return out


def _require_sound(content: HandbookContent) -> None:
    """An edit must leave a sound skill tree (known parents in the same mode, no cycle): refuse it otherwise."""
    problems = tree_problems(content)
    if problems:
        raise StudioError("this edit would make the handbook inconsistent: " + "; ".join(problems[:3]))


def split_skill(content: HandbookContent, parent: str, children: list[SkillSpec],
                assignment: dict[int, str]) -> HandbookContent:
    """Add `children` under `parent` and move each of the parent's evidence queries (query id -> child key) to its
    child. Queries not in `assignment` stay with the parent, which also summarises its children's evidence."""
    p = _require(content, parent)
    keys = {c.key for c in children}
    if len(children) < 2:
        raise StudioError("a split needs at least two children")
    clash = keys & set(content.skills)
    if clash:
        raise StudioError(f"skill(s) already exist: {', '.join(sorted(clash))}")
    unknown = set(assignment.values()) - keys
    if unknown:
        raise StudioError(f"assignment names unknown child skill(s): {', '.join(sorted(unknown))}")
    out = copy.deepcopy(content)
    for child in children:
        spec = copy.deepcopy(child)
        spec.mode, spec.parent_key = p.mode, parent
        out.skills[spec.key] = spec
    moved: dict = {}
    for (q, m, k), (w, by) in out.attributions.items():
        if k == parent and q in assignment:
            moved[(q, m, assignment[q])] = (w, by)
        else:
            moved[(q, m, k)] = (w, by)
    out.attributions = moved
    _require_sound(out)
    return out
