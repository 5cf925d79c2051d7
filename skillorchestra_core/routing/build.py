"""Build a RoutingModel from a stored version (evidence -> competence -> arrays), cached per immutable version."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlmodel import Session

from skillorchestra_core.db.models import Query
from skillorchestra_core.evidence.costs import trajectory_costs
from skillorchestra_core.handbook.content import HandbookContent, SkillSpec
from skillorchestra_core.handbook.store import LoadedVersion, load_version, load_version_by_id
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.competence import PriorConfig, pooled_rates
from skillorchestra_core.routing.model import (
    EvidenceIndex,
    PathEvidence,
    RoutingModel,
    mode_table_from_frames,
)
from skillorchestra_core.settings import get_settings

_CACHE: "OrderedDict[tuple, RoutingModel]" = OrderedDict()
_LOCK = threading.Lock()
_CACHE_SIZE = 16


def normalise_text(text: str) -> str:
    return " ".join(text.split()).lower()


def build_routing_model(s: Session, loaded: LoadedVersion, prior: PriorConfig | None = None,
                        level: float | None = None) -> RoutingModel:
    frames = profile.load_frames(s, loaded)
    queries = pd.read_sql(select(Query.id, Query.ext_id, Query.text, Query.split)
                          .where(Query.handbook_id == loaded.handbook_id), s.connection())
    return model_from_frames(frames, loaded.content, handbook=loaded.handbook_name, version=loaded.number,
                             content_hash=loaded.content_hash, prior=prior, level=level, queries=queries,
                             handbook_id=loaded.handbook_id, version_id=loaded.version_id, synthetic=loaded.synthetic)


def model_from_frames(frames: profile.VersionFrames, content: HandbookContent, *, handbook: str,
                      version: int | None, content_hash: str, prior: PriorConfig | None = None,
                      level: float | None = None, queries: pd.DataFrame | None = None,
                      **ids) -> RoutingModel:
    """The one way counts become a RoutingModel, for a stored version and for a handbook file alike."""
    settings = get_settings()
    prior = prior or PriorConfig(settings.prior, settings.prior_strength)
    level = level or settings.credible_level
    comp = profile.competence(frames, prior=prior, level=level)
    costs = profile.costs(frames)
    pooled = pooled_rates(frames.outcomes, frames.agents, frames.imported, frames.skills)
    modes = {}
    for name in content.modes:  # the content's order (as created), which the fallback mode order follows
        if (frames.agents["mode"] == name).any():
            spec = content.modes[name]
            modes[name] = mode_table_from_frames(name, comp, costs, frames.agents, frames.outcomes, pooled,
                                                 spec.description, spec.insights)
    skills = {k.key: SkillSpec(k.key, k.mode, k.name, k.description, list(k.indicators), list(k.examples),
                              k.parent_key) for k in content.skills.values()}
    has_queries = queries is not None and not queries.empty
    return RoutingModel(
        handbook=handbook, version=version, content_hash=content_hash, modes=modes, skills=skills,
        skill_queries=_skill_queries(queries, frames.attributions, frames.learn_splits) if has_queries else [],
        val_queries=_skill_queries(queries, frames.attributions, ("val",)) if has_queries else [],
        paths=_paths(queries, frames.outcomes) if has_queries else None,
        evidence=_evidence(queries, frames) if has_queries else None,
        settings={"prior": prior.kind, "prior_strength": prior.strength, "level": level,
                  "learn_splits": list(frames.learn_splits)},
        **ids,
    )


def _skill_queries(queries: pd.DataFrame, attributions: pd.DataFrame,
                   splits: tuple[str, ...]) -> list[tuple[str, str, dict[str, float]]]:
    """Queries of some splits with their attributed skills: the learn splits teach the activation classifier, val
    ones calibrate it (test queries are left out so evaluating a router never sees its own answer)."""
    if attributions.empty or queries.empty:
        return []
    train = queries[queries["split"].isin(splits)].set_index("id")["text"]
    a = attributions[attributions["query_id"].isin(train.index)]
    out = []
    for (qid, mode), g in a.groupby(["query_id", "mode"], sort=True):
        out.append((str(train[qid]), str(mode), dict(zip(g["skill"], g["weight"].astype(float)))))
    return out


def _paths(queries: pd.DataFrame, outcomes: pd.DataFrame) -> PathEvidence | None:
    """Mode paths of the learn-split runs, for the offline mode policy."""
    if outcomes.empty or "path" not in outcomes or outcomes["path"].isna().all():
        return None
    o = outcomes.dropna(subset=["path"])
    text = queries.set_index("id")["text"]
    return PathEvidence(texts=[str(text.get(q, "")) for q in o["query_id"]], paths=[str(p) for p in o["path"]],
                        success=(o["score"].to_numpy(float) >= 0.5).astype(float))


def _evidence(queries: pd.DataFrame, frames: profile.VersionFrames) -> EvidenceIndex:
    o = frames.evidence  # every split: replay and the oracle read recorded outcomes, nothing is learned here
    outcomes: dict = {}
    if len(o):
        j, cost = o, trajectory_costs(o, frames.agents)
        # "import" evidence first, then any other source, oldest first: one outcome per (query, mode, agent).
        order = np.lexsort((j["trajectory_id"].to_numpy(), (j["source"] != "import").to_numpy()))
        for i in order:
            key = (int(j["query_id"].iat[i]), str(j["mode"].iat[i]), str(j["agent"].iat[i]))
            if key not in outcomes:
                ci = float(cost[i])
                outcomes[key] = (float(j["score"].iat[i]), None if np.isnan(ci) else ci, int(j["trajectory_id"].iat[i]))
    return EvidenceIndex(
        by_text={normalise_text(t): int(q) for q, t in zip(queries["id"], queries["text"])},
        by_ref={str(e): int(q) for q, e in zip(queries["id"], queries["ext_id"])},
        refs={int(q): str(e) for q, e in zip(queries["id"], queries["ext_id"])},
        outcomes=outcomes,
    )


def routing_model(s: Session, handbook: str | None = None, number: int | None = None, *,
                  version_id: int | None = None, prior: PriorConfig | None = None,
                  level: float | None = None) -> RoutingModel:
    """The RoutingModel of a version (by name and number, latest when None, or by id), built once and cached."""
    loaded = load_version_by_id(s, version_id) if version_id is not None else load_version(s, handbook, number)
    settings = get_settings()
    prior = prior or PriorConfig(settings.prior, settings.prior_strength)
    level = level or settings.credible_level
    url = str(s.get_bind().url)
    key = (url, loaded.version_id, loaded.content_hash, prior.kind, prior.strength, level)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    model = build_routing_model(s, loaded, prior, level)
    with _LOCK:
        _CACHE[key] = model
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return model
