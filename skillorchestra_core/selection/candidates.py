"""Candidate handbooks from one version: per-mode granularity (depth maps) and pruned variants.

A depth map gives each mode a level: 0 keeps no skill (the mode's pooled rate decides), d keeps the skills of tree
level <= d (roots are level 1), the deepest level keeps them all. Candidates are the product of every mode's levels,
deduplicated by skill set, coarsest first, named like the reference code (`answer0_code1_search2`; one mode:
`answer1`). A pruned variant drops the skills whose removal changes no routing decision on val (see prune).

Each candidate is committed as an immutable version of the same handbook (a compare-and-set on the latest version),
with its lineage in the version's metadata under `candidate`. A candidate whose content equals a stored version
(same content hash) reuses it, so generating twice stores nothing new.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field

from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Handbook, HandbookVersion, Query, key
from skillorchestra_core.evidence.batches import batch_digests
from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.handbook.store import LoadedVersion, commit_version, load_version
from skillorchestra_core.selection import tree


@dataclass(frozen=True)
class Candidate:
    name: str
    version: int
    version_id: int
    content_hash: str
    n_skills: int
    kind: str  # source | depth | pruned
    depth_map: dict[str, int] = field(default_factory=dict)
    pruned: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        d["pruned"] = list(self.pruned)
        return d


def depth_maps(content: HandbookContent) -> list[dict[str, int]]:
    """Every per-mode depth map, deduplicated by the skill set it keeps, coarsest (smallest depth sum) first."""
    modes = sorted(m for m in content.modes if content.skills_in_mode(m))
    ranges = [range(tree.max_level(content, m) + 1) for m in modes]
    seen, out = set(), []
    for combo in sorted(itertools.product(*ranges), key=lambda c: (sum(c), c)):
        dm = dict(zip(modes, combo))
        kept = frozenset(tree.cut(content, dm).skills)
        if kept not in seen:
            seen.add(kept)
            out.append(dm)
    return out


def depth_name(depth_map: dict[str, int]) -> str:
    return "_".join(f"{m}{d}" for m, d in sorted(depth_map.items())) or "full"


def source_version(s: Session, handbook: str, number: int | None = None) -> LoadedVersion:
    """The version candidates come from: `number`, else the latest version (candidates never are)."""
    return load_version(s, handbook, number)


def content_digest(s: Session, handbook_id: int, content: HandbookContent) -> str:
    """The content hash commit_version would store for `content`."""
    keys = {k: ext for k, ext in s.exec(select(Query.id, Query.ext_id).where(Query.handbook_id == handbook_id))
            if k is not None}
    return content.content_hash(keys, batch_digests(s, content.evidence_batches))


def store_candidate(s: Session, source: LoadedVersion, content: HandbookContent, *, name: str, kind: str,
                    depth_map: dict[str, int], pruned: tuple[str, ...] = (), author: str = "selection") -> Candidate:
    """Commit `content` as a candidate version of the source's handbook (a branch of the source: it never becomes
    the handbook's latest version), or reuse a stored version with the same content hash."""
    digest = content_digest(s, source.handbook_id, content)
    found = s.exec(select(HandbookVersion).where(HandbookVersion.handbook_id == source.handbook_id,
                                                 HandbookVersion.content_hash == digest)
                   .order_by(col(HandbookVersion.number))).first()
    if found is None:
        lineage = {"name": name, "kind": kind, "source_version": source.number, "source_hash": source.content_hash,
                   "depth_map": depth_map, "pruned": list(pruned)}
        content.metadata = {**source.content.metadata, "candidate": lineage}
        hb = s.get(Handbook, source.handbook_id)
        if hb is None:
            raise ValueError(f"handbook {source.handbook_name!r} is gone")
        parent = s.get(HandbookVersion, source.version_id)
        found, _ = commit_version(s, hb, content, author=author, source="selection", branch=True,
                                  message=f"candidate {name} of v{source.number}", parent=parent, force=True)
    meta = (found.metadata_ or {}).get("candidate") or {}
    label = meta.get("name", name)
    return Candidate(label, found.number, key(found), found.content_hash, len(content.skills),
                     "source" if found.number == source.number else meta.get("kind", kind),
                     dict(meta.get("depth_map", depth_map)), tuple(meta.get("pruned", pruned)))


def depth_candidates(s: Session, source: LoadedVersion) -> list[Candidate]:
    """Store (or find) one candidate per depth map of the source version."""
    out = []
    for dm in depth_maps(source.content):
        content = tree.cut(source.content, dm)
        out.append(store_candidate(s, source, content, name=depth_name(dm), kind="depth", depth_map=dm))
    return out


def as_candidate(s: Session, handbook: str, number: int) -> Candidate:
    """A stored version as a candidate (its lineage when it is one)."""
    v = load_version(s, handbook, number)
    row = s.get(HandbookVersion, v.version_id)
    meta = ((row.metadata_ if row else None) or {}).get("candidate") or {}
    return Candidate(meta.get("name", f"v{v.number}"), v.number, v.version_id, v.content_hash,
                     len(v.content.skills), meta.get("kind", "version"), dict(meta.get("depth_map", {})),
                     tuple(meta.get("pruned", ())))
