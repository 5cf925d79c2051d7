"""The evidence refinement looks at: a version's TRAIN outcomes, attributions and query texts, as data frames.

Detectors and proposers read only the train split, whatever the frames loader returns (it may hold all splits or
only the ones the version learns from): validation and test queries stay unseen for later evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Query
from skillorchestra_core.handbook.store import LoadedVersion
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.competence import weighted_counts

TRAIN = "train"


@dataclass(frozen=True)
class RefinementEvidence:
    direct: pd.DataFrame  # query_id, mode, skill, weight, agent, score: train outcomes of directly attributed queries
    counts: pd.DataFrame  # agent, mode, skill, S, F: train counts rolled up to ancestors (as competence counts them)
    texts: dict[int, str]  # train query id -> text
    skills: pd.DataFrame  # skill, mode, parent, name
    agents: pd.DataFrame  # agent, mode


def train_only(outcomes: pd.DataFrame) -> pd.DataFrame:
    return outcomes[outcomes["split"] == TRAIN].reset_index(drop=True)


def evidence_from_frames(outcomes: pd.DataFrame, attributions: pd.DataFrame, skills: pd.DataFrame,
                         agents: pd.DataFrame, texts: dict[int, str]) -> RefinementEvidence:
    """Pure constructor (tests build evidence without a database)."""
    train = train_only(outcomes) if "split" in outcomes else outcomes
    att = attributions[attributions["query_id"].isin(set(train["query_id"]))]
    direct = att[["query_id", "mode", "skill", "weight"]].merge(
        train[["query_id", "mode", "agent", "score"]], on=["query_id", "mode"])
    counts = weighted_counts(train, att, skills)
    keep = set(train["query_id"])
    return RefinementEvidence(direct.reset_index(drop=True), counts, {q: t for q, t in texts.items() if q in keep},
                              skills, agents[["agent", "mode"]])


def load_evidence(s: Session, loaded: LoadedVersion) -> RefinementEvidence:
    frames = profile.load_frames(s, loaded)
    train = train_only(frames.outcomes)  # the loader may return every split or only the learned ones
    ids = sorted(set(int(q) for q in train["query_id"]))
    texts: dict[int, str] = {}
    for start in range(0, len(ids), 900):  # SQLite's bound-parameter limit
        chunk = ids[start:start + 900]
        texts.update((i, t) for i, t in s.exec(select(Query.id, Query.text).where(col(Query.id).in_(chunk)))
                     if i is not None)
    return evidence_from_frames(train, frames.attributions, frames.skills, frames.agents, texts)
