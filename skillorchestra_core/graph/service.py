"""Everything the explorer pages read for one version, loaded in one call (and cacheable: versions are immutable)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import networkx as nx
import pandas as pd
from sqlmodel import Session

from skillorchestra_core.evidence.costs import costs_from_stats
from skillorchestra_core.gc_pause import gc_paused
from skillorchestra_core.graph.build import build_graph
from skillorchestra_core.handbook.store import LoadedVersion, load_version
from skillorchestra_core.learning.competence import PriorConfig, ancestor_pairs, competence_from_counts
from skillorchestra_core.learning.content_frames import ContentFrames, content_frames
from skillorchestra_core.learning.evidence_summary import EvidenceSummary, version_summary

CREDIBLE_LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)


@dataclass(frozen=True)
class VersionData:
    loaded: LoadedVersion
    frames: ContentFrames
    summary: EvidenceSummary  # what the pages read of the evidence: no trajectory is loaded to show a version
    competence: pd.DataFrame  # profile.competence at `level` under `prior`
    costs: pd.DataFrame  # agent, mode, cost, n_cost, cost_source
    prior: PriorConfig
    level: float

    @property
    def label(self) -> str:
        return self.loaded.label

    @property
    def learned_from(self) -> str:
        return self.summary.learned_from


def load_version_data(s: Session, handbook: str, version: int | None, prior: PriorConfig | None = None,
                      level: float = 0.95) -> VersionData:
    prior = prior or PriorConfig()
    with gc_paused():  # a version summed on read (made before schema 9) reads every trajectory: see gc_pause
        loaded = load_version(s, handbook, version)
        frames = content_frames(loaded.content)
        summary = version_summary(s.connection(), loaded.version_id, loaded.content, frames)
        return VersionData(loaded, frames, summary, _competence(frames, summary, prior, level),
                           costs_from_stats(summary.pool, frames.agents), prior, level)


def _competence(frames: ContentFrames, summary: EvidenceSummary, prior: PriorConfig, level: float) -> pd.DataFrame:
    return competence_from_counts(summary.counts, summary.pool, frames.skills, frames.agents, frames.imported,
                                  prior=prior, level=level)


def with_level(data: VersionData, level: float, prior: PriorConfig | None = None) -> VersionData:
    """The same version under another credible level or prior, without touching the database."""
    prior = prior or data.prior
    if level == data.level and prior == data.prior:
        return data
    return replace(data, competence=_competence(data.frames, data.summary, prior, level), prior=prior, level=level)


def queries_per_skill(frames: ContentFrames) -> dict[str, int]:
    """Distinct evidence queries per skill, a parent counting its subtree's."""
    if frames.attributions.empty or frames.skills.empty:
        return {}
    rolled = frames.attributions.merge(ancestor_pairs(frames.skills), on="skill")
    return rolled.groupby("target")["query_id"].nunique().astype(int).to_dict()


def version_graph(data: VersionData, with_edges: bool = True) -> nx.DiGraph:
    """The version's graph; `with_edges=False` keeps the posteriors as a frame only (what the Graph page draws
    from: its filters pick the few edges to show)."""
    with gc_paused():
        return build_graph(data.loaded.content, data.competence, queries_per_skill(data.frames),
                           with_edges=with_edges)
