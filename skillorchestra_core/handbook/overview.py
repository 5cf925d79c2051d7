"""Read models of one version for the Overview page and `skillorchestra show`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlmodel import Session

from skillorchestra_core.handbook.store import LoadedVersion, get_version, list_versions, load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.competence import PriorConfig


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
    loaded = load_version(s, name, number)
    return overview_of(s, loaded, profile.load_frames(s, loaded))


def overview_of(s: Session, loaded: LoadedVersion, frames: profile.VersionFrames,
                costs: pd.DataFrame | None = None) -> VersionOverview:
    """The overview of a version already loaded (the app shares one load of a version's evidence, and its
    `costs`, between pages)."""
    name = loaded.handbook_name
    row = get_version(s, name, loaded.number)
    c = loaded.content
    counts: dict[str, int | str] = {
        "Queries": int(frames.evidence["query_id"].nunique()),
        "Trajectories": len(frames.evidence),
        "Learned from": f"{int(frames.outcomes['query_id'].nunique()):,} {'+'.join(frames.learn_splits)} queries",
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
    costs = profile.costs(frames) if costs is None else costs
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
    loaded = load_version(s, name, number)
    frames = profile.load_frames(s, loaded)
    comp = profile.competence(frames, prior=prior, level=level)
    costs = profile.costs(frames).set_index(["agent", "mode"])
    c = loaded.content
    return {
        "handbook": loaded.handbook_name,
        "version": loaded.number,
        "content_hash": loaded.content_hash,
        "synthetic": loaded.synthetic,
        "counts": {"queries": int(frames.evidence["query_id"].nunique()), "trajectories": len(frames.evidence),
                   "agents": len(c.agents), "skills": len(c.skills), "modes": len(c.modes)},
        "learn_splits": list(frames.learn_splits),
        "learned_from": frames.learned_from,
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
