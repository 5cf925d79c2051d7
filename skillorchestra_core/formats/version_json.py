"""JSON dump of one version: everything it holds and everything derived from it, with counts instead of queries."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from skillorchestra_core.db.models import HandbookVersion
from skillorchestra_core.formats.snapshot import VersionSnapshot


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return _clean(value.item())
    return value


def _records(frame) -> list[dict[str, Any]]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def export_version_json(snap: VersionSnapshot, parent: HandbookVersion | None = None) -> dict[str, Any]:
    c, row, out = snap.loaded.content, snap.row, snap.frames.evidence
    attributions = snap.frames.attributions
    per_skill = (attributions.groupby("skill").agg(queries=("query_id", "nunique"), weight=("weight", "sum"))
                 if len(attributions) else None)
    return {
        "format": "skillorchestra-studio-version",
        "format_version": 1,
        "handbook": snap.loaded.handbook_name,
        "synthetic": snap.loaded.synthetic,
        "version": snap.loaded.number,
        "content_hash": snap.loaded.content_hash,
        "parent_version": parent.number if parent else None,
        "author": row.author,
        "message": row.message,
        "source": row.source,
        "created_at": snap.stamp,
        "evidence_batches": snap.evidence_digests,
        "learn_splits": list(c.learn_splits),
        "learned_from": snap.frames.learned_from,
        "metadata": c.metadata,
        "counts": {"queries": int(out["query_id"].nunique()), "trajectories": len(out),
                   "attributions": len(attributions), "modes": len(c.modes), "skills": len(c.skills),
                   "agents": len(c.agents), "imported_counts": len(c.imported),
                   "queries_by_split": {str(k): int(v) for k, v in
                                        out.drop_duplicates("query_id")["split"].value_counts().items()}},
        "modes": [asdict(m) for m in sorted(c.modes.values(), key=lambda m: m.name)],
        "skills": [{**asdict(k), "evidence_queries": int(per_skill.loc[k.key, "queries"])
                    if per_skill is not None and k.key in per_skill.index else 0}
                   for k in sorted(c.skills.values(), key=lambda k: k.key)],
        "agents": [asdict(a) for a in sorted(c.agents.values(), key=lambda a: (a.mode, a.name))],
        "imported_counts": [asdict(i) for _, i in sorted(c.imported.items())],
        "competence": _records(snap.competence),
        "mode_costs": _records(snap.costs),
    }
