"""The skill tree of a mode and the content edits candidates are made of: cut the tree at a depth, drop skills.

Both edits re-point a removed skill's attributions to its nearest kept ancestor (summed, like a merge), so the
ancestor's posterior is unchanged (a parent already counts its subtree) and nothing is counted twice. A removed
skill with no kept ancestor takes its attributions with it; each (query, mode) left is renormalised to sum to 1.
"""

from __future__ import annotations

import copy

from skillorchestra_core.handbook.content import HandbookContent, ImportedCounts


def parents(content: HandbookContent, mode: str) -> dict[str, str | None]:
    """Each skill of `mode` -> its parent: `parent_key`, else the longest dotted prefix that is a skill of the mode
    (the rule the graph view draws with), else None (a root)."""
    keys = {k.key for k in content.skills_in_mode(mode)}
    out: dict[str, str | None] = {}
    for k in sorted(keys):
        spec = content.skills[k]
        if spec.parent_key in keys:
            out[k] = spec.parent_key
            continue
        parts, found = k.split("."), None
        for cut in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in keys:
                found = prefix
                break
        out[k] = found
    return out


def levels(parent: dict[str, str | None]) -> dict[str, int]:
    """Depth of each skill: roots are level 1, their children level 2, ... (cycles are refused upstream)."""
    out: dict[str, int] = {}
    for k in parent:
        node: str | None = k
        d, seen = 0, set()
        while node is not None and node not in seen:
            seen.add(node)
            d += 1
            node = parent.get(node)
        out[k] = d
    return out


def max_level(content: HandbookContent, mode: str) -> int:
    """Deepest level of the mode's tree (0 for a mode with no skills)."""
    return max(levels(parents(content, mode)).values(), default=0)


def _target(key: str, parent: dict[str, str | None], keep: set[str]) -> str | None:
    node = parent.get(key)
    while node is not None and node not in keep:
        node = parent.get(node)
    return node


def reassign(content: HandbookContent, removed: set[str]) -> HandbookContent:
    """A copy of `content` without the skills in `removed`, their evidence moved to their nearest kept ancestor."""
    out = copy.deepcopy(content)
    target: dict[str, str | None] = {}
    for mode in content.modes:
        parent = parents(content, mode)
        keep = set(parent) - removed
        target.update({k: _target(k, parent, keep) for k in parent if k in removed})
    for k in removed:
        out.skills.pop(k, None)
    for spec in out.skills.values():
        if spec.parent_key in removed:
            spec.parent_key = target.get(spec.parent_key)
    out.attributions = _moved_attributions(content.attributions, target)
    out.imported = _moved_imported(content.imported, target)
    return out


def _moved_attributions(attributions: dict, target: dict[str, str | None]) -> dict:
    moved: dict = {}
    for (q, m, k), (w, by) in attributions.items():
        key = target.get(k, k) if k in target else k
        if key is None:
            continue
        old_w, old_by = moved.get((q, m, key), (0.0, by))
        moved[(q, m, key)] = (old_w + w, old_by)
    totals: dict = {}
    for (q, m, _), (w, _) in moved.items():
        totals[(q, m)] = totals.get((q, m), 0.0) + w
    return {(q, m, k): (w / totals[(q, m)], by) for (q, m, k), (w, by) in moved.items() if totals[(q, m)] > 0}


def _moved_imported(imported: dict, target: dict[str, str | None]) -> dict:
    """Imported counts of removed skills are added to the ancestor's (the excess over the Beta(1,1) prior only)."""
    out = {key: copy.copy(c) for key, c in imported.items() if key[2] not in target}
    for (agent, mode, k), c in sorted(imported.items()):
        dest = target.get(k) if k in target else None
        if k not in target or dest is None:
            continue
        acc = out.get((agent, mode, dest)) or ImportedCounts(agent, mode, dest, 1.0, 1.0)
        out[(agent, mode, dest)] = ImportedCounts(agent, mode, dest, acc.alpha + max(c.alpha - 1.0, 0.0),
                                                  acc.beta + max(c.beta - 1.0, 0.0))
    return out


def cut(content: HandbookContent, depth_map: dict[str, int]) -> HandbookContent:
    """Keep, per mode, the skills of level <= depth (0: no skill at all; the mode's pooled rate decides)."""
    removed: set[str] = set()
    for mode, depth in depth_map.items():
        lv = levels(parents(content, mode))
        removed |= {k for k, d in lv.items() if d > depth}
    return reassign(content, removed)
