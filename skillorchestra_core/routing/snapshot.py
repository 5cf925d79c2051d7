"""RoutingModel <-> JSON, so production code can route from a file with no database.

Two inputs are understood:
- our routing snapshot (`to_snapshot`): the precomputed arrays of one version, exact to the database's routing;
- the canonical handbook JSON (the reference code's or our export): read exactly as `import handbook` reads it, its
  alpha/beta becoming imported counts, and turned into posteriors by the same competence code as a stored version.
Replay needs the evidence and therefore the database; a file-based model routes and dry-runs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.routing.model import ModeTable, PathEvidence, RoutingModel

SNAPSHOT_FORMAT = "skillorchestra-routing-snapshot"
_ARRAYS = ("mean", "ci_low", "ci_high", "alpha", "beta", "n", "successes", "cost", "general", "overall_rate",
           "train_rate")
# Format 2 adds the per-skill costs; a format-1 snapshot prices every skill at the mode cost.
SNAPSHOT_VERSION = 2
_COST_ARRAYS = ("cost_n", "skill_cost", "skill_cost_n")
_GRIDS = ("mean", "ci_low", "ci_high", "alpha", "beta", "n", "successes", "skill_cost", "skill_cost_n")


def _list(a: np.ndarray):
    return [None if isinstance(x, float) and np.isnan(x) else x for x in a.tolist()] if a.ndim == 1 else a.tolist()


def to_snapshot(model: RoutingModel, include_queries: bool = True) -> dict[str, Any]:
    """The model as JSON data. The activation settings chosen on val travel in `settings["activation"]` (the
    val queries themselves are not exported) and each mode's trained classifier in `activation_models`, so a
    loaded snapshot activates exactly as the database's model without retraining (and without the query texts)."""
    from skillorchestra_core.routing.activation import activator, settle_activation

    settle_activation(model)
    trained = {m: act.classifier.to_dict() for m in model.modes
               if (act := activator(model, m)) is not None and act.classifier is not None}
    modes = {}
    for name, t in model.modes.items():
        modes[name] = {"agents": t.agents, "models": t.models, "skills": t.skills, "cost_source": t.cost_source,
                       "description": t.description, "insights": t.insights, "prices": t.prices,
                       **{k: _list(getattr(t, k)) for k in (*_ARRAYS, *_COST_ARRAYS)}}
    out = {"format": SNAPSHOT_FORMAT, "format_version": SNAPSHOT_VERSION, "handbook": model.handbook,
           "version": model.version, "content_hash": model.content_hash, "synthetic": model.synthetic,
           "settings": model.settings, "modes": modes, "skills": {k: vars(d) for k, d in model.skills.items()},
           "activation_models": trained}
    if include_queries:
        out["skill_queries"] = [list(x) for x in model.skill_queries]
        if model.paths is not None:
            out["paths"] = {"texts": model.paths.texts, "paths": model.paths.paths,
                            "success": model.paths.success.tolist()}
    return out


def from_snapshot(data: dict[str, Any]) -> RoutingModel:
    version = data.get("format_version", 1)
    if not isinstance(version, int) or version > SNAPSHOT_VERSION:
        raise StudioError(f"routing snapshot format_version {version!r} is newer than this code reads "
                          f"({SNAPSHOT_VERSION}): upgrade skillorchestra")
    modes = {}
    for name, m in data["modes"].items():
        keys = [k for k in (*_ARRAYS, *_COST_ARRAYS) if k in m]
        arrays = {k: np.array([np.nan if x is None else x for x in m[k]] if m[k] and not isinstance(m[k][0], list)
                              else m[k], float) for k in keys}
        for k in _GRIDS:
            if k in arrays:
                arrays[k] = arrays[k].reshape(len(m["agents"]), len(m["skills"]))
        modes[name] = ModeTable(mode=name, agents=m["agents"], models=m["models"], skills=m["skills"],
                                cost_source=m["cost_source"], description=m.get("description", ""),
                                insights=m.get("insights", []), prices=[tuple(p) for p in m.get("prices", [])],
                                **arrays)
    paths = data.get("paths")
    model = RoutingModel(
        handbook=data["handbook"], version=data.get("version"), content_hash=data.get("content_hash", ""),
        modes=modes, skills={k: SkillSpec(**v) for k, v in data["skills"].items()},
        synthetic=data.get("synthetic", False),
        skill_queries=[(t, m, dict(w)) for t, m, w in data.get("skill_queries", [])],
        paths=PathEvidence(paths["texts"], paths["paths"], np.array(paths["success"], float)) if paths else None,
        settings=dict(data.get("settings", {})))
    if data.get("activation_models"):
        from skillorchestra_core.routing.activation import restore_activators

        restore_activators(model, data["activation_models"])
    return model


def from_reference_handbook(data: dict[str, Any], name: str = "reference-handbook", digest: str = "",
                            level: float | None = None) -> RoutingModel:
    """A RoutingModel from the canonical handbook JSON (the reference code's, or what `skillorchestra export`
    writes, whose `metadata.studio` block names the handbook, version, hash, prices and prior).

    The file is read exactly as `skillorchestra import handbook` reads it (its alpha/beta become imported counts)
    and turned into posteriors by the same competence code as a stored version, so routing from the file and from
    the imported handbook agree."""
    from skillorchestra_core.formats.canonical import parse_canonical
    from skillorchestra_core.learning.profile import frames_from_content
    from skillorchestra_core.routing.build import model_from_frames

    content = parse_canonical(data, name)
    studio = (data.get("metadata") or {}).get("studio") or {}
    model = model_from_frames(frames_from_content(content), content, handbook=studio.get("handbook") or name,
                              version=studio.get("version"), content_hash=studio.get("content_hash") or digest,
                              level=level)
    model.settings["source"] = "handbook JSON (imported counts)"
    return model


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
