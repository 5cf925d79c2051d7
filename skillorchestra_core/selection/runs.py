"""Validation runs as typed records, stored with their settings, content hash and per-query results."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

import numpy as np
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import key
from skillorchestra_core.db.selection_tables import ValidationRun
from skillorchestra_core.processes import owner_gone

BASELINES = ("best-single", "cheapest", "random", "oracle", "reference-rule")
SINGLE = "single:"  # router name prefix of an every-query-to-one-agent baseline


@dataclass(frozen=True)
class RunRecord:
    router: str
    version: int
    candidate: str
    n_skills: int
    lam: float
    split: str
    mode: str
    accuracy: float | None
    mean_cost_usd: float | None
    n_queries: int
    n_scored: int
    calls_by_agent: dict[str, int]
    cost_ref: float | None  # best-single's mean cost per query on this split: the unit of normalised cost
    baseline: bool = False
    kind: str = "replay"
    status: str = "done"
    cost_unit: str = "normalised"
    content_hash: str = ""
    id: int | None = None
    settings: dict = field(default_factory=dict)

    @property
    def cost(self) -> float:
        """The mean cost per query of a run that has one (every finished replay run; refused otherwise)."""
        if self.mean_cost_usd is None:
            raise ValueError(f"run {self.label} has no cost yet")
        return self.mean_cost_usd

    @property
    def normalised_cost(self) -> float | None:
        if self.mean_cost_usd is None or not self.cost_ref:
            return None
        return self.mean_cost_usd / self.cost_ref

    @property
    def label(self) -> str:
        if self.baseline:
            return self.router
        name = "" if self.candidate in ("", f"v{self.version}") else f" {self.candidate}"
        return f"{self.router} v{self.version}{name} λ={self.lam:g}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["lambda"] = d.pop("lam")
        d["normalised_cost"] = self.normalised_cost
        return d


def settings_hash(content_hash: str, router: str, lam: float, split: str, mode: str, kind: str, extra: dict) -> str:
    blob = json.dumps({"content": content_hash, "router": router, "lambda": round(float(lam), 12), "split": split,
                       "mode": mode, "kind": kind, **extra}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def per_query(query_ids: list[str], agents: list[str], chosen: np.ndarray, score: np.ndarray,
              cost: np.ndarray) -> dict:
    """Per-query results in a compact, JSON-safe form (NaN scores become null)."""
    return {"query_ids": list(query_ids), "agents": list(agents), "chosen": [int(x) for x in chosen],
            "score": [None if np.isnan(x) else float(x) for x in score], "cost": [float(x) for x in cost]}


def store_run(s: Session, rec: RunRecord, *, handbook_id: int, version_id: int, results: dict,
              actor: str = "system") -> RunRecord:
    """Store a finished run unless an identical one (same settings hash) is stored; returns it with its id."""
    h = rec.settings.get("hash") or ""
    found = s.exec(select(ValidationRun).where(ValidationRun.settings_hash == h, ValidationRun.status == "done")
                   ).first() if h else None
    if found is None:
        found = ValidationRun(
            handbook_id=handbook_id, version_id=version_id, version_number=rec.version, content_hash=rec.content_hash,
            candidate=rec.candidate, n_skills=rec.n_skills, router=rec.router, lam=rec.lam, cost_unit=rec.cost_unit,
            split=rec.split, mode=rec.mode, kind=rec.kind, status=rec.status, baseline=rec.baseline,
            n_queries=rec.n_queries, n_scored=rec.n_scored, accuracy=rec.accuracy, mean_cost_usd=rec.mean_cost_usd,
            cost_ref=rec.cost_ref, calls_by_agent=rec.calls_by_agent, per_query=results, settings=rec.settings,
            settings_hash=h, actor=actor)
        s.add(found)
        s.flush()
    return record_of(found)


def run_status(row: ValidationRun) -> str:
    """The stored status, except that a `running` run whose owner is gone (its pid dead on its host, or no beat
    for STALE_S; a run never claimed is judged by its creation time) reads `interrupted`: resume it."""
    if row.status == "running" and owner_gone(row.owner_pid, row.heartbeat_at or row.created_at, row.owner_host):
        return "interrupted"
    return row.status


def record_of(row: ValidationRun) -> RunRecord:
    return RunRecord(row.router, row.version_number, row.candidate, row.n_skills, row.lam, row.split, row.mode,
                     row.accuracy, row.mean_cost_usd, row.n_queries, row.n_scored, dict(row.calls_by_agent),
                     row.cost_ref, row.baseline, row.kind, run_status(row), row.cost_unit, row.content_hash, row.id,
                     dict(row.settings))


def list_runs(s: Session, handbook_id: int, *, split: str | None = None, router: str | None = None,
              kind: str | None = None) -> list[RunRecord]:
    stmt = select(ValidationRun).where(ValidationRun.handbook_id == handbook_id)
    if split:
        stmt = stmt.where(ValidationRun.split == split)
    if router:
        stmt = stmt.where(ValidationRun.router == router)
    if kind:
        stmt = stmt.where(ValidationRun.kind == kind)
    return [record_of(r) for r in s.exec(stmt.order_by(col(ValidationRun.id)))]


def run_results(s: Session, run_id: int) -> dict:
    row = s.get(ValidationRun, run_id)
    return dict(row.per_query) if row is not None else {}


def run_rows(s: Session, handbook_id: int, *, kind: str | None = None, limit: int = 50) -> list[dict]:
    """The stored runs of a handbook, newest first, as the CLI and the Pareto page list them: each with the status
    it reads as (a killed live run is `interrupted`) and, for a live run, how many queries have an answer."""
    from sqlalchemy import func

    from skillorchestra_core.db.selection_tables import LiveResult

    stmt = select(ValidationRun).where(ValidationRun.handbook_id == handbook_id)
    if kind:
        stmt = stmt.where(ValidationRun.kind == kind)
    rows = list(s.exec(stmt.order_by(col(ValidationRun.id).desc()).limit(limit)))
    live = [key(r) for r in rows if r.kind == "live"]
    answered = dict(s.exec(select(LiveResult.run_id, func.count()).where(col(LiveResult.run_id).in_(live))
                           .group_by(col(LiveResult.run_id))).all()) if live else {}
    return [{"id": r.id, "kind": r.kind, "status": run_status(r), "version": r.version_number,
             "candidate": r.candidate, "router": r.router, "lambda": r.lam, "split": r.split,
             "answered": answered.get(key(r), 0) if r.kind == "live" else r.n_queries, "queries": r.n_queries,
             "accuracy": r.accuracy, "mean_cost_usd": r.mean_cost_usd, "created_at": r.created_at,
             "owner": f"{r.owner_pid}@{r.owner_host}" if r.owner_pid else ""} for r in rows]
