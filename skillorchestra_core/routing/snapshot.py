"""RoutingModel <-> JSON, so production code can route from a file with no database.

Two inputs are understood:
- our routing snapshot (`to_snapshot`): the precomputed arrays of one version, exact to the database's routing;
- the SkillOrchestra reference handbook JSON (`agent_profiles` with alpha/beta per skill, `cost_stats`): posterior
  means are alpha / (alpha + beta) of the stored counts (which include the reference code's Beta(1,1) prior).
Replay needs the evidence and therefore the database; a file-based model routes and dry-runs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.routing.model import ModeTable, PathEvidence, RoutingModel

SNAPSHOT_FORMAT = "skillorchestra-routing-snapshot"
_ARRAYS = ("mean", "ci_low", "ci_high", "alpha", "beta", "n", "successes", "cost", "general", "overall_rate",
           "train_rate")


def _list(a: np.ndarray):
    return [None if isinstance(x, float) and np.isnan(x) else x for x in a.tolist()] if a.ndim == 1 else a.tolist()


def to_snapshot(model: RoutingModel, include_queries: bool = True) -> dict[str, Any]:
    """The model as JSON data. The activation settings chosen on val travel in `settings["activation"]` (the
    val queries themselves are not exported) and each mode's trained classifier in `activation_models`, so a
    loaded snapshot activates exactly as the database's model without retraining (and without the query texts)."""
    from skillorchestra_core.routing.activation import activator, settle_activation

    settle_activation(model)
    trained = {m: act.classifier.to_dict() for m in model.modes if (act := activator(model, m)) is not None}
    modes = {}
    for name, t in model.modes.items():
        modes[name] = {"agents": t.agents, "models": t.models, "skills": t.skills, "cost_source": t.cost_source,
                       "description": t.description, "insights": t.insights, "prices": t.prices,
                       **{k: _list(getattr(t, k)) for k in _ARRAYS}}
    out = {"format": SNAPSHOT_FORMAT, "format_version": 1, "handbook": model.handbook, "version": model.version,
           "content_hash": model.content_hash, "synthetic": model.synthetic, "settings": model.settings,
           "modes": modes, "skills": {k: vars(d) for k, d in model.skills.items()}, "activation_models": trained}
    if include_queries:
        out["skill_queries"] = [list(x) for x in model.skill_queries]
        if model.paths is not None:
            out["paths"] = {"texts": model.paths.texts, "paths": model.paths.paths,
                            "success": model.paths.success.tolist()}
    return out


def from_snapshot(data: dict[str, Any]) -> RoutingModel:
    modes = {}
    for name, m in data["modes"].items():
        arrays = {k: np.array([np.nan if x is None else x for x in m[k]] if m[k] and not isinstance(m[k][0], list)
                              else m[k], float) for k in _ARRAYS}
        for k in ("mean", "ci_low", "ci_high", "alpha", "beta", "n", "successes"):
            arrays[k] = arrays[k].reshape(len(m["agents"]), len(m["skills"]))
        modes[name] = ModeTable(mode=name, agents=m["agents"], models=m["models"], skills=m["skills"],
                                cost_source=m["cost_source"], description=m.get("description", ""),
                                insights=m.get("insights", []), prices=[tuple(p) for p in m.get("prices", [])],
                                **arrays)
    paths = data.get("paths")
    model = RoutingModel(
        handbook=data["handbook"], version=data.get("version"), content_hash=data.get("content_hash", ""),
        modes=modes, skills={k: SkillSpec(**v) for k, v in data["skills"].items()}, synthetic=data.get("synthetic", False),
        skill_queries=[(t, m, dict(w)) for t, m, w in data.get("skill_queries", [])],
        paths=PathEvidence(paths["texts"], paths["paths"], np.array(paths["success"], float)) if paths else None,
        settings=dict(data.get("settings", {})))
    if data.get("activation_models"):
        from skillorchestra_core.routing.activation import restore_activators

        restore_activators(model, data["activation_models"])
    return model


def from_reference_handbook(data: dict[str, Any], name: str = "reference-handbook", digest: str = "",
                            level: float = 0.95) -> RoutingModel:
    """A RoutingModel from the reference code's canonical handbook JSON (also what `skillorchestra export` writes in
    the canonical format, whose `metadata.studio` block names the handbook, version, hash and price cards)."""
    meta = data.get("metadata") or {}
    studio = meta.get("studio") or {}
    skills = {}
    for sid, s in data.get("skills", {}).items():
        skills[sid] = SkillSpec(sid, s.get("mode", ""), s.get("name", ""), s.get("description", ""),
                               list(s.get("indicators", [])), list(s.get("examples", [])), s.get("parent_skill_id"))
    index = data.get("mode_skill_index") or {}
    modes = {}
    profiles = {key: p for key, p in data.get("agent_profiles", {}).items()}
    for mode_name, mode_meta in (data.get("modes") or {}).items():
        keys_in_mode = sorted((p.get("agent_id") or key, key) for key, p in profiles.items()
                              if p.get("mode") == mode_name)
        if not keys_in_mode:
            continue
        agents = [a for a, _ in keys_in_mode]
        prof = [profiles[key] for _, key in keys_in_mode]
        modes[mode_name] = _reference_table(mode_name, agents, prof, skills, index, mode_meta or {}, level,
                                            studio.get("agents") or {}, [key for _, key in keys_in_mode])
    return RoutingModel(handbook=studio.get("handbook") or name, version=studio.get("version"),
                        content_hash=studio.get("content_hash") or digest, modes=modes, skills=skills,
                        settings={"source": "handbook JSON (alpha/beta as stored)",
                                  "reference_version": meta.get("version")})


def _reference_table(mode, agents, prof, skills, index, mode_meta, level, cards, keys) -> ModeTable:
    skill_keys = sorted(set(index.get(mode, [])) | {k for k, s in skills.items() if s.mode == mode})
    alpha = np.ones((len(agents), len(skill_keys)))
    beta = np.ones((len(agents), len(skill_keys)))
    for i, p in enumerate(prof):
        for j, k in enumerate(skill_keys):
            counts = (p.get("skill_competence") or {}).get(k)
            if counts:
                alpha[i, j], beta[i, j] = float(counts["alpha"]), float(counts["beta"])
    tail = (1.0 - level) / 2.0
    attempts = np.array([float(p.get("total_attempts") or 0) for p in prof])
    wins = np.array([float(p.get("total_successes") or 0) for p in prof])
    cost = np.array([float((p.get("cost_stats") or {}).get("avg_cost_usd") or 0.0) for p in prof])
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = np.where(attempts > 0, wins / np.where(attempts > 0, attempts, 1), 0.0)
    prices = [((cards.get(k) or {}).get("input_price_per_m"), (cards.get(k) or {}).get("output_price_per_m"))
              for k in keys]
    return ModeTable(
        mode=mode, agents=agents, models=[p.get("model_name") or a for a, p in zip(agents, prof)], skills=skill_keys,
        mean=alpha / (alpha + beta), ci_low=stats.beta.ppf(tail, alpha, beta),
        ci_high=stats.beta.ppf(1 - tail, alpha, beta), alpha=alpha, beta=beta, n=np.maximum(alpha + beta - 2.0, 0.0),
        successes=np.maximum(alpha - 1.0, 0.0), cost=cost, cost_source=["imported"] * len(agents),
        general=(wins + 1.0) / (attempts + 2.0), overall_rate=overall, train_rate=np.full(len(agents), np.nan),
        description=mode_meta.get("description", ""), insights=list(mode_meta.get("insights", [])), prices=prices)


def load_model_file(path: str | Path | dict) -> RoutingModel:
    """A RoutingModel from a snapshot or a reference handbook JSON (a path or already-parsed data)."""
    if isinstance(path, dict):
        data, digest, name = path, "", "handbook"
    else:
        p = Path(path)
        try:
            raw = p.read_bytes()
            data = json.loads(raw)
        except (OSError, json.JSONDecodeError) as exc:
            raise StudioError(f"cannot read handbook export {p}: {exc}") from exc
        digest, name = hashlib.sha256(raw).hexdigest(), p.stem
    if data.get("format") == SNAPSHOT_FORMAT:
        return from_snapshot(data)
    if "agent_profiles" in data:
        return from_reference_handbook(data, name=name, digest=digest)
    raise StudioError("unrecognised handbook export: expected a routing snapshot (format "
                      f"{SNAPSHOT_FORMAT!r}) or a SkillOrchestra handbook JSON with 'agent_profiles'")
