"""Agent profiles of a stored version: its evidence as data frames, competence and mode costs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlmodel import Session

from skillorchestra_core.db.models import Query, Trajectory
from skillorchestra_core.evidence.costs import mode_costs
from skillorchestra_core.handbook.store import LoadedVersion
from skillorchestra_core.learning.competence import PriorConfig, competence_table
from skillorchestra_core.settings import get_settings


@dataclass(frozen=True)
class VersionFrames:
    outcomes: pd.DataFrame  # one row per trajectory the version sees, with its query's ext_id, split and task
    attributions: pd.DataFrame  # query_id, mode, skill, weight, attributed_by
    skills: pd.DataFrame  # skill, mode, parent, name
    agents: pd.DataFrame  # agent, mode, model, prices, imported_cost_usd
    imported: pd.DataFrame  # agent, mode, skill, alpha, beta


def load_outcomes(s: Session, handbook_id: int, watermark: int) -> pd.DataFrame:
    stmt = (
        select(Trajectory.id.label("trajectory_id"), Trajectory.query_id, Query.ext_id, Query.split, Query.task,
               Trajectory.agent, Trajectory.mode, Trajectory.score, Trajectory.prompt_tokens,
               Trajectory.completion_tokens, Trajectory.cost_usd, Trajectory.latency_s, Trajectory.path,
               Trajectory.source)
        .join(Query, Query.id == Trajectory.query_id)
        .where(Trajectory.handbook_id == handbook_id, Trajectory.id <= watermark)
        .order_by(Trajectory.id)
    )
    df = pd.read_sql(stmt, s.connection())
    for col in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "score"):
        df[col] = df[col].astype(float)
    return df


def load_frames(s: Session, version: LoadedVersion, splits: tuple[str, ...] | None = None) -> VersionFrames:
    """The version's evidence; `splits` keeps only queries of those splits (e.g. ("train",) to learn competence
    with validation and test queries held out)."""
    c = version.content
    outcomes = load_outcomes(s, version.handbook_id, c.evidence_watermark)
    if splits is not None:
        outcomes = outcomes[outcomes["split"].isin(splits)].reset_index(drop=True)
    attributions = pd.DataFrame(
        [(q, m, k, w, by) for (q, m, k), (w, by) in c.attributions.items()],
        columns=["query_id", "mode", "skill", "weight", "attributed_by"],
    )
    skills = pd.DataFrame([(k.key, k.mode, k.parent_key, k.name or k.key) for k in c.skills.values()],
                          columns=["skill", "mode", "parent", "name"])
    agents = pd.DataFrame(
        [(a.name, a.mode, a.model,
          np.nan if a.input_price_per_m is None else a.input_price_per_m,
          np.nan if a.output_price_per_m is None else a.output_price_per_m,
          _imported_cost(a.profile))
         for a in c.agents.values()],
        columns=["agent", "mode", "model", "input_price_per_m", "output_price_per_m", "imported_cost_usd"],
    )
    imported = pd.DataFrame([(i.agent, i.mode, i.skill_key, i.alpha, i.beta) for i in c.imported.values()],
                            columns=["agent", "mode", "skill", "alpha", "beta"])
    return VersionFrames(outcomes, attributions, skills, agents, imported)


def _imported_cost(profile_: dict) -> float:
    value = (profile_.get("cost_stats") or {}).get("avg_cost_usd")
    return np.nan if value is None else float(value)


def competence(frames: VersionFrames, prior: PriorConfig | None = None, level: float | None = None) -> pd.DataFrame:
    settings = get_settings()
    prior = prior or PriorConfig(settings.prior, settings.prior_strength)
    return competence_table(frames.outcomes, frames.attributions, frames.skills, frames.agents, frames.imported,
                            prior=prior, level=level or settings.credible_level)


def costs(frames: VersionFrames) -> pd.DataFrame:
    return mode_costs(frames.outcomes, frames.agents)
