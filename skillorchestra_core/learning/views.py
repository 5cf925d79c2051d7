"""Tables for the Learn page and reports: runs, discovered skills with provenance, posterior changes."""

from __future__ import annotations

import pandas as pd

from skillorchestra_core.db.models import LearningRun
from skillorchestra_core.learning.pipeline import STAGES


def runs_table(runs: list[LearningRun]) -> pd.DataFrame:
    return pd.DataFrame([{"run": r.id, "handbook": r.handbook_name, "from": r.parent_version, "method": r.method,
                          "status": r.status, "stage": r.stage, "version": r.version, "by": r.actor,
                          "started": r.created_at} for r in runs])


def stage_progress(run: LearningRun) -> list[tuple[str, float]]:
    return [(st, float((run.progress or {}).get(st, 0.0))) for st in STAGES]


def skills_table(report: dict) -> pd.DataFrame:
    rows = []
    for mode, skills in (report.get("skills_added") or {}).items():
        for k in skills:
            p = k.get("provenance") or {}
            rows.append({"mode": mode, "skill": k["key"], "name": k.get("name", ""), "parent": k.get("parent"),
                         "source": p.get("source", ""), "method": p.get("method", ""), "model": p.get("model", ""),
                         "queries": p.get("queries") if isinstance(p.get("queries"), int) else
                         len(p.get("queries") or []), "note": p.get("note", "")})
    return pd.DataFrame(rows, columns=["mode", "skill", "name", "parent", "source", "method", "model", "queries",
                                       "note"])


def diff_table(report: dict, limit: int = 50) -> pd.DataFrame:
    d = pd.DataFrame(report.get("diff") or [])
    if d.empty:
        return d
    cols = ["agent", "mode", "skill", "mean_parent", "mean_new", "delta", "n_parent", "n_new", "new_skill"]
    return d[[c for c in cols if c in d]].head(limit)


def attributed_table(report: dict) -> pd.DataFrame:
    return pd.DataFrame(sorted((report.get("attributed") or {}).items()), columns=["attributed by", "train pairs"])
