"""Read models of one version for the Overview page and `skillorchestra show`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlmodel import Session

from skillorchestra_core.graph.service import load_version_data
from skillorchestra_core.handbook.store import LoadedVersion, get_version, list_versions
from skillorchestra_core.learning.competence import PriorConfig
from skillorchestra_core.learning.content_frames import ContentFrames
from skillorchestra_core.learning.evidence_summary import EvidenceSummary
from skillorchestra_core.learning.profile import default_prior


@dataclass(frozen=True)
class VersionOverview:
    label: str
    synthetic: bool
    content_hash: str
    author: str
    message: str
    counts: dict[str, int | str]
    skills: pd.DataFrame
    agents: pd.DataFrame
    versions: pd.DataFrame


def version_overview(s: Session, name: str, number: int | None = None) -> VersionOverview:
    data = load_version_data(s, name, number)
    return overview_of(s, data.loaded, data.frames, data.summary, data.costs)


def overview_of(s: Session, loaded: LoadedVersion, frames: ContentFrames, summary: EvidenceSummary,
                costs: pd.DataFrame) -> VersionOverview:
    """The overview of a version already loaded (the app shares one load of a version, and its `costs`, between
    pages): its counts come from the version's evidence summary, not from its trajectories."""
    name = loaded.handbook_name
    row = get_version(s, name, loaded.number)
    c = loaded.content
    counts: dict[str, int | str] = {
        "Queries": summary.queries,
        "Trajectories": summary.trajectories,
        "Learned from": f"{summary.learn_queries:,} {'+'.join(summary.learn_splits)} queries",
        "Modes": len(c.modes),
        "Skills": len(c.skills),
        "Agents": len(c.agents),
    }
    n_queries = frames.attributions.groupby("skill")["query_id"].nunique() if len(frames.attributions) else {}
    skills = pd.DataFrame([
        {"mode": k.mode, "skill": k.key, "name": k.name, "parent": k.parent_key or "",
         "evidence queries": int(n_queries.get(k.key, 0)) if len(frames.attributions) else 0}
        for k in sorted(c.skills.values(), key=lambda k: (k.mode, k.key))
    ], columns=["mode", "skill", "name", "parent", "evidence queries"])
    agents = costs.merge(frames.agents[["agent", "mode", "model", "input_price_per_m", "output_price_per_m"]],
                         on=["agent", "mode"]).rename(columns={"cost": "cost per call (USD)"})
    versions = pd.DataFrame([
        {"version": v.number, "author": v.author, "message": v.message, "source": v.source,
         "created": v.created_at.strftime("%Y-%m-%d %H:%M"), "hash": v.content_hash[:12]}
        for v in reversed(list_versions(s, name))
    ])
    return VersionOverview(loaded.label, loaded.synthetic, loaded.content_hash, row.author, row.message, counts,
                           skills, agents, versions)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def show_record(s: Session, name: str, number: int | None = None, prior: PriorConfig | None = None,
                level: float = 0.95) -> dict[str, Any]:
    """Everything `skillorchestra show --json` prints: counts, modes, skills, agents, one record per agent-skill."""
    data = load_version_data(s, name, number, prior or default_prior(), level)
    loaded, summary, comp = data.loaded, data.summary, data.competence
    costs = data.costs.set_index(["agent", "mode"])
    c = loaded.content
    return {
        "handbook": loaded.handbook_name,
        "version": loaded.number,
        "content_hash": loaded.content_hash,
        "synthetic": loaded.synthetic,
        "counts": {"queries": summary.queries, "trajectories": summary.trajectories,
                   "agents": len(c.agents), "skills": len(c.skills), "modes": len(c.modes)},
        "learn_splits": list(summary.learn_splits),
        "learned_from": summary.learned_from,
        "modes": [{"name": m.name, "description": m.description, "insights": m.insights}
                  for m in sorted(c.modes.values(), key=lambda m: m.name)],
        "skills": [{"key": k.key, "mode": k.mode, "name": k.name, "description": k.description,
                    "parent": k.parent_key, "indicators": k.indicators, "provenance": k.provenance}
                   for k in sorted(c.skills.values(), key=lambda k: k.key)],
        "agents": [{"name": a.name, "mode": a.mode, "model": a.model, "input_price_per_m": a.input_price_per_m,
                    "output_price_per_m": a.output_price_per_m, "price_source": a.price_source,
                    "cost_per_call": float(costs.loc[(a.name, a.mode), "cost"]),
                    "cost_source": costs.loc[(a.name, a.mode), "cost_source"]}
                   for a in sorted(c.agents.values(), key=lambda a: (a.mode, a.name))],
        "competence": [
            {"agent": r.agent, "mode": r.mode, "skill": r.skill, "mean": float(r.mean), "n": float(r.n),
             "ci_low": float(r.ci_low), "ci_high": float(r.ci_high), "empirical_rate": _clean(float(r.empirical_rate)),
             "n_imported": float(r.n_imported), "basis": r.basis}
            for r in comp.itertuples()
        ],
    }
