"""A compiled routing model per handbook version, kept on disk next to the SQLite database.

Building a model reads every trajectory of the version; a version is immutable, so the result is stored once as
`<database file>.routing/<key>.npz` and every later process (the CLI, the app, the API) loads it in milliseconds.
The key names the version (id, creation time, content hash) and the settings the model was built with (prior,
level) plus the cache format: a new version, a rebuilt database or new settings simply miss. A file, not a table:
no schema migration, the payload is plain arrays and JSON (`allow_pickle=False`, so a cache file can never run
code), writes are atomic (temporary file + rename), and a cache file that cannot be read is rebuilt, never an
error. Databases without a file (PostgreSQL, `:memory:`) keep only the in-process cache.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.processes import remove_orphans, temp_file
from skillorchestra_core.routing import cache_state
from skillorchestra_core.routing.evidence_index import EvidenceIndex
from skillorchestra_core.routing.model import ModeTable, PathEvidence, RoutingModel

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

CACHE_FORMAT = 3  # 3: per-skill costs
MAX_FILES = 64  # per cache folder; the oldest are removed first
_TABLE_ARRAYS = ("mean", "ci_low", "ci_high", "alpha", "beta", "n", "successes", "cost", "general", "overall_rate",
                 "train_rate", "cost_n", "skill_cost", "skill_cost_n")
_TABLE_FIELDS = ("agents", "models", "skills", "cost_source", "description", "insights", "prices")
_EVIDENCE_ARRAYS = ("query_ids", "keys", "score", "cost", "trajectory")
_MODEL_FIELDS = {"handbook", "version", "content_hash", "modes", "skills", "handbook_id", "version_id", "synthetic",
                 "skill_queries", "val_queries", "paths", "evidence", "settings"}


def cache_dir(url: str | URL) -> Path | None:
    """The cache folder of a SQLite database file, None for other databases."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    db = Path(parsed.database)
    return db.with_name(db.name + ".routing")


def cache_key(version_id: int, created_at, content_hash: str, settings: dict) -> str:
    ident = json.dumps([CACHE_FORMAT, version_id, str(created_at), content_hash, settings], sort_keys=True,
                       default=str)
    return f"v{version_id}-{content_hash[:12]}-{hashlib.sha256(ident.encode()).hexdigest()[:16]}"


def load(folder: Path | None, key: str) -> RoutingModel | None:
    """The cached model, or None when absent or unreadable (a stale or damaged file is just a miss)."""
    if folder is None:
        return None
    path = folder / f"{key}.npz"
    collecting = gc.isenabled()
    gc.disable()  # decoding makes many small objects and no cycles: collections would only cost time
    try:
        with np.load(path, allow_pickle=False) as z:
            return _decode(json.loads(z["meta"].tobytes().decode()), z)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001  (any damage: rebuild instead)
        return None
    finally:
        if collecting:
            gc.enable()


def save(folder: Path | None, key: str, model: RoutingModel) -> Path | None:
    """Write atomically; failures (read-only folder, full disk) only cost a rebuild next time."""
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        meta, arrays = _encode(model)
        fd, tmp = temp_file(folder, "")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, allow_pickle=False, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)
            target = folder / f"{key}.npz"
            os.replace(tmp, target)  # readers see the old file or the whole new one, never a part
        finally:
            Path(tmp).unlink(missing_ok=True)
        _prune(folder)
        return target
    except (OSError, TypeError, ValueError):  # TypeError/ValueError: a model the format cannot hold
        return None


def _prune(folder: Path) -> None:
    files = sorted(folder.glob("*.npz"), key=lambda p: p.stat().st_mtime)
    for old in files[:-MAX_FILES]:
        old.unlink(missing_ok=True)
    remove_orphans(folder, "", own_folder=True)  # what writers killed mid-save (SIGKILL skips cleanup) left


def _check_fields() -> None:
    """A field added to the model and unknown here would be silently lost: refuse to cache instead."""
    model_fields = {f.name for f in dataclasses.fields(RoutingModel)}
    table_fields = {f.name for f in dataclasses.fields(ModeTable)}
    if model_fields - _MODEL_FIELDS or table_fields - {"mode", *_TABLE_FIELDS, *_TABLE_ARRAYS}:
        raise ValueError("the routing model has fields the cache format does not know")


def _encode(model: RoutingModel) -> tuple[dict, dict[str, np.ndarray]]:
    from skillorchestra_core.routing.activation import settle_activation

    _check_fields()
    settle_activation(model)  # train the activators once, here: stored with the derived state below
    arrays: dict[str, np.ndarray] = {}
    tables = []
    for i, (name, t) in enumerate(model.modes.items()):
        tables.append({"mode": name, **{f: getattr(t, f) for f in _TABLE_FIELDS}})
        arrays.update({f"t{i}.{a}": np.asarray(getattr(t, a), float) for a in _TABLE_ARRAYS})
    meta = {"format": CACHE_FORMAT, "handbook": model.handbook, "version": model.version,
            "content_hash": model.content_hash, "handbook_id": model.handbook_id, "version_id": model.version_id,
            "synthetic": model.synthetic, "settings": model.settings, "tables": tables,
            "skills": {k: vars(s) for k, s in model.skills.items()},
            "skill_queries": [list(x) for x in model.skill_queries],
            "val_queries": [list(x) for x in model.val_queries],
            "paths": None, "evidence": None}
    if model.paths is not None:
        meta["paths"] = {"texts": model.paths.texts, "paths": model.paths.paths}
        arrays["paths.success"] = np.asarray(model.paths.success, float)
    ev = model.evidence
    if ev is not None:
        meta["evidence"] = {"ext_ids": ev.ext_ids, "texts": ev.texts, "modes": ev.modes, "agents": ev.agents}
        arrays.update({f"ev.{a}": getattr(ev, a) for a in _EVIDENCE_ARRAYS})
    meta["derived"] = cache_state.encode(model, arrays)
    return meta, arrays


def _decode(meta: dict, z) -> RoutingModel:
    if meta.get("format") != CACHE_FORMAT:
        raise ValueError("cache format changed")
    modes = {}
    for i, t in enumerate(meta["tables"]):
        fields = {f: t[f] for f in _TABLE_FIELDS}
        fields["prices"] = [tuple(p) for p in fields["prices"]]
        modes[t["mode"]] = ModeTable(mode=t["mode"], **fields, **{a: z[f"t{i}.{a}"] for a in _TABLE_ARRAYS})
    p, e = meta["paths"], meta["evidence"]
    model = RoutingModel(
        handbook=meta["handbook"], version=meta["version"], content_hash=meta["content_hash"], modes=modes,
        skills={k: SkillSpec(**v) for k, v in meta["skills"].items()}, handbook_id=meta["handbook_id"],
        version_id=meta["version_id"], synthetic=meta["synthetic"],
        skill_queries=[(t, m, w) for t, m, w in meta["skill_queries"]],
        val_queries=[(t, m, w) for t, m, w in meta["val_queries"]],
        paths=None if p is None else PathEvidence(p["texts"], p["paths"], z["paths.success"]),
        evidence=None if e is None else EvidenceIndex(
            **{a: z[f"ev.{a}"] for a in _EVIDENCE_ARRAYS}, ext_ids=e["ext_ids"], texts=e["texts"],
            modes=e["modes"], agents=e["agents"]),
        settings=meta["settings"])
    cache_state.decode(meta.get("derived", []), z, model)
    return model
