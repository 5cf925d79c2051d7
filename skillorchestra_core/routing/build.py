"""Build a RoutingModel from a stored version (evidence -> competence -> arrays), cached per immutable version:
in this process (an LRU) and on disk next to the database (`routing.cache`), so only the first process to route
with a version pays for reading its evidence. The build path imports pandas and scipy; a cache hit does not."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np
from sqlmodel import Session, col

from skillorchestra_core.db.models import HandbookVersion
from skillorchestra_core.db.models import key as stored_key
from skillorchestra_core.errors import NotFound
from skillorchestra_core.handbook.content import HandbookContent, SkillSpec
from skillorchestra_core.handbook.store import LoadedVersion, get_version, load_version_by_id
from skillorchestra_core.routing import cache, cache_state
from skillorchestra_core.routing.evidence_index import EvidenceIndex
from skillorchestra_core.routing.model import PathEvidence, RoutingModel
from skillorchestra_core.settings import get_settings

if TYPE_CHECKING:
    import pandas as pd

    from skillorchestra_core.learning import profile
    from skillorchestra_core.learning.competence import PriorConfig

_CACHE: "OrderedDict[tuple, RoutingModel]" = OrderedDict()
_LOCK = threading.Lock()
_CACHE_SIZE = 16


def build_routing_model(s: Session, loaded: LoadedVersion, prior: PriorConfig | None = None,
                        level: float | None = None) -> RoutingModel:
    import pandas as pd
    from sqlalchemy import select

    from skillorchestra_core.db.models import Query
    from skillorchestra_core.learning import profile

    frames = profile.load_frames(s, loaded)
    queries = pd.read_sql(select(col(Query.id), col(Query.ext_id), col(Query.text), col(Query.split))
                          .where(col(Query.handbook_id) == loaded.handbook_id), s.connection())
    return model_from_frames(frames, loaded.content, handbook=loaded.handbook_name, version=loaded.number,
                             content_hash=loaded.content_hash, prior=prior, level=level, queries=queries,
                             handbook_id=loaded.handbook_id, version_id=loaded.version_id, synthetic=loaded.synthetic)


def model_from_frames(frames: profile.VersionFrames, content: HandbookContent, *, handbook: str,
                      version: int | None, content_hash: str, prior: PriorConfig | None = None,
                      level: float | None = None, queries: pd.DataFrame | None = None,
                      **ids) -> RoutingModel:
    """The one way counts become a RoutingModel, for a stored version and for a handbook file alike."""
    from skillorchestra_core.evidence.skill_costs import imported_skill_costs, skill_costs
    from skillorchestra_core.learning import profile
    from skillorchestra_core.learning.competence import PriorConfig, pooled_rates
    from skillorchestra_core.routing.model import mode_table_from_frames

    settings = get_settings()
    prior = prior or PriorConfig(settings.prior, settings.prior_strength)
    level = level or settings.credible_level
    comp = profile.competence(frames, prior=prior, level=level)
    costs = profile.costs(frames)
    per_skill = skill_costs(frames.outcomes, frames.attributions, frames.skills, frames.agents, costs,
                            imported=imported_skill_costs(content.agents.values()))
    pooled = pooled_rates(frames.outcomes, frames.agents, frames.imported, frames.skills)
    modes = {}
    for name in content.modes:  # the content's order (as created), which the fallback mode order follows
        if (frames.agents["mode"] == name).any():
            spec = content.modes[name]
            modes[name] = mode_table_from_frames(name, comp, costs, frames.agents, frames.outcomes, pooled,
                                                 spec.description, spec.insights, per_skill)
    skills = {k.key: SkillSpec(k.key, k.mode, k.name, k.description, list(k.indicators), list(k.examples),
                              k.parent_key) for k in content.skills.values()}
    has_queries = queries is not None and not queries.empty
    return RoutingModel(
        handbook=handbook, version=version, content_hash=content_hash, modes=modes, skills=skills,
        skill_queries=_skill_queries(queries, frames, frames.learn_splits) if has_queries else [],
        val_queries=_skill_queries(queries, frames, ("val",)) if has_queries else [],
        paths=_paths(queries, frames.outcomes) if has_queries else None,
        evidence=_evidence(queries, frames.evidence, frames.agents) if has_queries else None,
        settings={"prior": prior.kind, "prior_strength": prior.strength, "level": level,
                  "learn_splits": list(frames.learn_splits)},
        **ids,
    )


def _skill_queries(queries: pd.DataFrame, frames: profile.VersionFrames,
                   splits: tuple[str, ...]) -> list[tuple[str, str, dict[str, float]]]:
    """Queries of some splits with their attributed skills (text and labels only, never outcomes): the learn
    splits teach the activation classifier, val calibrates it; test queries are never here, so evaluating a router
    never sees its own answer."""
    attributions = frames.attributions
    if attributions.empty:
        return []
    train = queries.loc[queries["split"].isin(splits), ["id", "text"]].rename(columns={"id": "query_id"})
    a = attributions.merge(train, on="query_id").sort_values(["query_id", "mode"], kind="stable")
    out: list[tuple[str, str, dict[str, float]]] = []
    last = None
    for qid, mode, text, skill, weight in zip(a["query_id"].tolist(), a["mode"].astype(str).tolist(),
                                              a["text"].astype(str).tolist(), a["skill"].tolist(),
                                              a["weight"].astype(float).tolist()):
        if (qid, mode) != last:
            out.append((text, mode, {}))
            last = (qid, mode)
        out[-1][2][skill] = weight
    return out


def _paths(queries: pd.DataFrame, outcomes: pd.DataFrame) -> PathEvidence | None:
    """Mode paths of the learn-split runs, for the offline mode policy."""
    if outcomes.empty or "path" not in outcomes or outcomes["path"].isna().all():
        return None
    o = outcomes.dropna(subset=["path"])
    text = queries.set_index("id")["text"]
    texts = text.reindex(o["query_id"].to_numpy()).fillna("").astype(str).tolist()
    return PathEvidence(texts=texts, paths=o["path"].astype(str).tolist(),
                        success=(o["score"].to_numpy(float) >= 0.5).astype(float))


def _evidence(queries: pd.DataFrame, outcomes: pd.DataFrame, agents: pd.DataFrame) -> EvidenceIndex:
    """Every recorded outcome of every split (replay and the oracle learn nothing), one per (query, mode, agent):
    "import" evidence first, then any other source, oldest first (vectorised; see EvidenceIndex.from_frame)."""
    from skillorchestra_core.evidence.costs import trajectory_costs

    o = outcomes
    cost = trajectory_costs(o, agents) if len(o) else np.zeros(0)
    return EvidenceIndex.from_frame(
        queries["id"].to_numpy(), queries["ext_id"].tolist(), queries["text"].tolist(),
        o["query_id"].to_numpy(), o["mode"], o["agent"],
        o["score"].to_numpy(float), cost, o["trajectory_id"].to_numpy(), (o["source"] == "import").to_numpy())


def routing_model(s: Session, handbook: str | None = None, number: int | None = None, *,
                  version_id: int | None = None, prior: "PriorConfig | None" = None,
                  level: float | None = None) -> RoutingModel:
    """The RoutingModel of a version (by name and number, latest when None, or by id): from the in-process cache,
    else the on-disk cache, else built from the evidence (and then stored in both)."""
    version = _version_row(s, handbook, number, version_id)
    settings = get_settings()
    kind, strength = (prior.kind, prior.strength) if prior is not None else (settings.prior, settings.prior_strength)
    level = level or settings.credible_level
    key = cache.cache_key(stored_key(version), version.created_at, version.content_hash,
                          {"prior": kind, "prior_strength": float(strength), "level": float(level)})
    url = s.get_bind().engine.url
    memory_key = (url.render_as_string(hide_password=False), key)
    with _LOCK:
        hit = _CACHE.get(memory_key)
        if hit is not None:
            _CACHE.move_to_end(memory_key)
            return hit
    folder = cache.cache_dir(url)
    model = cache.load(folder, key)
    if model is None:
        from skillorchestra_core.learning.competence import PriorConfig

        model = build_routing_model(s, load_version_by_id(s, stored_key(version)), PriorConfig(kind, strength), level)
        cache_state.warm(model)  # the retrievers too, so they are stored with it
        cache.save(folder, key, model)
    with _LOCK:
        _CACHE[memory_key] = model
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return model


def _version_row(s: Session, handbook: str | None, number: int | None, version_id: int | None) -> HandbookVersion:
    """The version's row only (not its content): enough to find a cached model."""
    if version_id is None:
        if handbook is None:
            raise ValueError("give a handbook name or a version id")
        return get_version(s, handbook, number)
    version = s.get(HandbookVersion, version_id)
    if version is None:
        raise NotFound(f"no handbook version with id {version_id}")
    return version


def clear_memory_cache() -> None:
    """Forget the in-process models (tests; the on-disk cache stays)."""
    with _LOCK:
        _CACHE.clear()
