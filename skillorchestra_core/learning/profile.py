"""Agent profiles of a stored version: its evidence as data frames, competence and mode costs."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlmodel import Session

from skillorchestra_core.evidence.batches import version_batches
from skillorchestra_core.evidence.costs import mode_costs
from skillorchestra_core.evidence.reader import OUTCOME_COLUMNS, empty_outcomes, read_outcomes  # noqa: F401
from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.handbook.store import LoadedVersion
from skillorchestra_core.learning.competence import PriorConfig, competence_table
from skillorchestra_core.learning.content_frames import content_frames
from skillorchestra_core.learning.evidence_summary import learned_from
from skillorchestra_core.settings import get_settings


@dataclass(frozen=True)
class VersionFrames:
    outcomes: pd.DataFrame  # the trajectories the version LEARNS from (its learn splits), with ext_id, split, task
    attributions: pd.DataFrame  # query_id, mode, skill, weight, attributed_by
    skills: pd.DataFrame  # skill, mode, parent, name
    agents: pd.DataFrame  # agent, mode, model, prices, imported_cost_usd
    imported: pd.DataFrame  # agent, mode, skill, alpha, beta
    evidence: pd.DataFrame  # every trajectory the version sees, all splits: for replay, the oracle and evaluation
    learn_splits: tuple[str, ...] = ("train",)

    @property
    def learned_from(self) -> str:
        return learned_from(int(self.outcomes["query_id"].nunique()) if len(self.outcomes) else 0, self.learn_splits)


def load_outcomes(s: Session, version_id: int) -> pd.DataFrame:
    """Every trajectory of the version's evidence batches, in id order (OUTCOME_COLUMNS; see evidence.reader)."""
    return read_outcomes(s.connection(), version_batches(s, version_id))


def load_frames(s: Session, version: LoadedVersion, splits: tuple[str, ...] | None = None) -> VersionFrames:
    """The version's evidence. `outcomes`, which everything learned reads, keeps only the queries of the version's
    learn splits (default train; `splits` overrides, e.g. for a what-if); `evidence` keeps every split."""
    evidence = load_outcomes(s, version.version_id)
    return frames_from_content(version.content, evidence, splits)


def frames_from_content(c: HandbookContent, evidence: pd.DataFrame | None = None,
                        splits: tuple[str, ...] | None = None) -> VersionFrames:
    """Frames of a content with the given evidence (none for a handbook file: imported counts only)."""
    if evidence is None:
        evidence = empty_outcomes()
    learn = tuple(splits or c.learn_splits)
    outcomes = evidence[evidence["split"].isin(learn)].reset_index(drop=True)
    f = content_frames(c)
    return VersionFrames(outcomes, f.attributions, f.skills, f.agents, f.imported, evidence, learn)


def default_prior() -> PriorConfig:
    settings = get_settings()
    return PriorConfig(settings.prior, settings.prior_strength)


def competence(frames: VersionFrames, prior: PriorConfig | None = None, level: float | None = None) -> pd.DataFrame:
    settings = get_settings()
    prior = prior or default_prior()
    return competence_table(frames.outcomes, frames.attributions, frames.skills, frames.agents, frames.imported,
                            prior=prior, level=level or settings.credible_level)


def costs(frames: VersionFrames) -> pd.DataFrame:
    return mode_costs(frames.outcomes, frames.agents)
