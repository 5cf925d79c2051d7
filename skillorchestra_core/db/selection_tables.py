"""Tables of selection: validation runs (replay and live), live per-query results and published configurations.

Runs are immutable records of one (version, router, lambda, split) evaluation; `settings_hash` identifies the
settings (content hash included), so an identical replay run is found rather than stored twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from skillorchestra_core.db.models import table_of, utcnow


def _json(default=dict) -> Any:
    return Field(default_factory=default, sa_column=Column(JSON, nullable=False))


class ValidationRun(SQLModel, table=True):
    __tablename__ = "validation_run"
    __table_args__ = (Index("ix_validation_run_handbook_split", "handbook_id", "split"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: int = Field(foreign_key="handbook.id")
    version_id: int = Field(foreign_key="handbook_version.id")
    version_number: int
    content_hash: str = ""
    candidate: str = ""  # the candidate's name (e.g. answer1, answer1-pruned), "" for a plain version
    n_skills: int = 0
    router: str
    lam: float
    cost_unit: str = "normalised"
    split: str = "val"
    mode: str = "answer"
    kind: str = "replay"  # replay | live
    status: str = "done"  # done | running | stopped (live: cost cap reached); running + owner gone reads interrupted
    baseline: bool = False
    n_queries: int = 0
    n_scored: int = 0
    accuracy: Optional[float] = None
    mean_cost_usd: Optional[float] = None
    cost_ref: Optional[float] = None  # mean cost of the best-single agent: the unit of normalised cost
    calls_by_agent: dict = _json()
    per_query: dict = _json()  # {"query_ids": [...], "agents": [...], "chosen": [...], "score": [...], "cost": [...]}
    settings: dict = _json()
    settings_hash: str = Field(default="", index=True)
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow)
    # The process executing a live run and its heartbeat: a running run whose owner is gone was killed.
    owner_pid: Optional[int] = None
    owner_host: Optional[str] = None
    heartbeat_at: Optional[datetime] = None


class LiveResult(SQLModel, table=True):
    """One query of a live run: the agent's answer, its score against the ground truth and its cost from usage."""

    __tablename__ = "live_result"
    __table_args__ = (UniqueConstraint("run_id", "query_id"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="validation_run.id", index=True)
    query_id: int = Field(foreign_key="query.id")
    agent: str
    answer: str = ""
    score: Optional[float] = None
    cost_usd: Optional[float] = None
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    latency_s: Optional[float] = None
    error: str = ""
    created_at: datetime = Field(default_factory=utcnow)


class PublishedConfig(SQLModel, table=True):
    """The routing configuration production loads by default: the latest row of a handbook."""

    __tablename__ = "published_config"
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: int = Field(foreign_key="handbook.id", index=True)
    version_id: int = Field(foreign_key="handbook_version.id")
    version_number: int
    content_hash: str = ""
    router: str = "skill"
    lam: float = 0.1
    cost_unit: str = "normalised"
    run_id: Optional[int] = Field(default=None, foreign_key="validation_run.id")
    actor: str = "system"
    note: str = ""
    published_at: datetime = Field(default_factory=utcnow)


TABLES = [table_of(ValidationRun), table_of(LiveResult), table_of(PublishedConfig)]
