"""SQLModel tables.

Evidence (queries, trajectories) belongs to a handbook and is append-only; everything a reviewer curates (modes,
skills, agents, attributions, imported counts) belongs to one immutable handbook version. Evidence arrives in
batches (one per import) and a version sees exactly the batches listed for it in `version_batch`, so its competence
never changes after it is created, whatever other writers commit later and in whatever order ids are allocated.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional, Protocol

from sqlalchemy import JSON, Column, Index, LargeBinary, Table, UniqueConstraint, text
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class _Stored(Protocol):
    id: Optional[int]


def key(row: _Stored) -> int:
    """The primary key of a stored row (loaded, or added and flushed). SQLModel types every id Optional because a
    new row has none until the flush; past it, a missing id is a bug, reported as one."""
    if row.id is None:
        raise ValueError(f"{type(row).__name__} has no id yet: it was never flushed")
    return row.id


def table_of(model: type[SQLModel]) -> Table:
    """The Core table of a model class (SQLModel sets `__table__` at class creation without declaring it)."""
    return SQLModel.metadata.tables[str(model.__tablename__)]


def _json_list() -> Any:
    return Field(default_factory=list, sa_column=Column(JSON, nullable=False))


def _json_dict() -> Any:
    return Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Handbook(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    description: str = ""
    synthetic: bool = False
    created_at: datetime = Field(default_factory=utcnow)


class HandbookVersion(SQLModel, table=True):
    __tablename__ = "handbook_version"
    __table_args__ = (UniqueConstraint("handbook_id", "number"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: int = Field(foreign_key="handbook.id", index=True)
    number: int
    parent_id: Optional[int] = Field(default=None, foreign_key="handbook_version.id")
    author: str = "system"
    message: str = ""
    source: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    content_hash: str = ""
    # Unused since evidence batches (kept so older databases keep their column); membership is `version_batch`.
    evidence_watermark: int = 0
    metadata_: dict = Field(default_factory=dict, sa_column=Column("metadata", JSON, nullable=False))


class Mode(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("version_id", "name"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    version_id: int = Field(foreign_key="handbook_version.id", index=True)
    name: str
    description: str = ""
    insights: list = _json_list()


class Skill(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("version_id", "key"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    version_id: int = Field(foreign_key="handbook_version.id", index=True)
    key: str  # dotted id, e.g. "math.word_problems"
    name: str = ""
    description: str = ""
    indicators: list = _json_list()
    examples: list = _json_list()
    mode: str
    parent_key: Optional[str] = None
    provenance: dict = _json_dict()


class Agent(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("version_id", "name", "mode"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    version_id: int = Field(foreign_key="handbook_version.id", index=True)
    name: str
    mode: str
    model: str = ""  # litellm model string
    input_price_per_m: Optional[float] = None  # USD per 1M input tokens
    output_price_per_m: Optional[float] = None
    price_source: str = "unknown"  # card | litellm | import | unknown
    tools: list = _json_list()
    # Extra profile facts carried by imports (strengths, weaknesses, routing signals, imported cost stats).
    profile: dict = _json_dict()


class ImportedCompetence(SQLModel, table=True):
    """Alpha/beta taken from a reference handbook file: counts with no evidence behind them."""

    __tablename__ = "imported_competence"
    __table_args__ = (UniqueConstraint("version_id", "agent", "mode", "skill_key"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    version_id: int = Field(foreign_key="handbook_version.id", index=True)
    agent: str
    mode: str
    skill_key: str
    alpha: float
    beta: float


class Query(SQLModel, table=True):
    __table_args__ = (UniqueConstraint("handbook_id", "ext_id"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: int = Field(foreign_key="handbook.id", index=True)
    ext_id: str
    text: str
    ground_truth: Optional[str] = None
    task: Optional[str] = None
    split: str = "train"
    dataset: str = ""


class EvidenceBatch(SQLModel, table=True):
    """One import's trajectories. `digest` hashes their content (query ext id, agent, mode, values), not ids."""

    __tablename__ = "evidence_batch"
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: int = Field(foreign_key="handbook.id", index=True)
    digest: str = Field(index=True)
    trajectories: int = 0
    source: str = ""
    created_at: datetime = Field(default_factory=utcnow)


class VersionBatch(SQLModel, table=True):
    """The evidence batches one version sees."""

    __tablename__ = "version_batch"
    version_id: int = Field(foreign_key="handbook_version.id", primary_key=True)
    batch_id: int = Field(foreign_key="evidence_batch.id", primary_key=True, index=True)


class VersionSummary(SQLModel, table=True):
    """What the explorer reads of a version's evidence, summed once (learning.evidence_summary): a version's
    evidence never changes, so neither does this."""

    __tablename__ = "version_summary"
    version_id: int = Field(foreign_key="handbook_version.id", primary_key=True)
    format: int
    payload: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class Trajectory(SQLModel, table=True):
    """One agent's attempt in one mode on one query."""

    __table_args__ = (
        UniqueConstraint("query_id", "agent", "mode", "source"),
        Index("ix_trajectory_handbook_id_id", "handbook_id", "id"),
    )
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: int = Field(foreign_key="handbook.id")
    query_id: int = Field(foreign_key="query.id", index=True)
    agent: str
    mode: str = "answer"
    score: float
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    cost_usd: Optional[float] = None
    latency_s: Optional[float] = None
    response: Optional[str] = None
    source: str = "import"
    # Modes the run went through, comma separated ("search,code,answer"), when known.
    path: Optional[str] = None
    batch_id: Optional[int] = Field(default=None, foreign_key="evidence_batch.id", index=True)
    created_at: datetime = Field(default_factory=utcnow)


class Attribution(SQLModel, table=True):
    """Which skills a (query, mode) exercised under one version, with weights summing to 1 and who said so."""

    __table_args__ = (
        UniqueConstraint("version_id", "query_id", "mode", "skill_key"),
        Index("ix_attribution_version_skill", "version_id", "skill_key"),
    )
    id: Optional[int] = Field(default=None, primary_key=True)
    version_id: int = Field(foreign_key="handbook_version.id", index=True)
    query_id: int = Field(foreign_key="query.id")
    mode: str
    skill_key: str
    weight: float
    attributed_by: str = "label"


class AuditLog(SQLModel, table=True):
    __tablename__ = "audit_log"
    id: Optional[int] = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow, index=True)
    actor: str = "system"
    action: str
    entity: str = ""
    entity_id: Optional[int] = None
    handbook_id: Optional[int] = Field(default=None, index=True)
    details: dict = _json_dict()


class SchemaMigration(SQLModel, table=True):
    __tablename__ = "schema_migration"
    version: int = Field(primary_key=True)
    name: str
    applied_at: datetime = Field(default_factory=utcnow)


class DecisionTrace(SQLModel, table=True):
    """One routed query: the handbook version it was routed with, what the list and its filters need in typed
    columns, and the trace in its compact form (`payload`, see routing.decision_codec; rows written before it keep
    their full JSON in `trace` with codec 0)."""

    __tablename__ = "decision_trace"
    __table_args__ = (Index("ix_decision_trace_handbook_created", "handbook_id", "created_at"),
                      Index("ix_decision_trace_handbook_name_id", "handbook_name", "id"))
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: Optional[int] = Field(default=None, foreign_key="handbook.id")
    handbook_name: str = ""
    version_id: Optional[int] = Field(default=None, foreign_key="handbook_version.id")
    version_number: Optional[int] = None
    content_hash: str = ""  # empty when the version row holds it (compact rows)
    router: str
    lam: float
    cost_unit: str = "normalised"
    execution: str = "dry-run"
    query_text: str
    chosen_agent: Optional[str] = Field(default=None, index=True)
    cause: str = Field(default="", index=True)
    n_steps: int = 0
    margin: Optional[float] = None
    total_cost_usd: Optional[float] = None
    outcome: Optional[float] = None
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow, index=True)
    trace: dict = _json_dict()
    # server defaults as migration 7 adds them, so a migrated and a new database have the same schema
    codec: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    payload: Optional[bytes] = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    # " agent:A skill:K ..." for every step: the agents chosen at any step and the skills activated (filters)
    tags: str = Field(default="", sa_column_kwargs={"server_default": text("''")})


class DecisionFacet(SQLModel, table=True):
    """The distinct filter values (agents, causes, routers, versions) seen in a handbook's decisions, kept as they
    are stored, so the filter widgets never scan the decisions."""

    __tablename__ = "decision_facet"
    handbook_name: str = Field(primary_key=True)
    field: str = Field(primary_key=True)
    value: str = Field(primary_key=True)


class LlmCall(SQLModel, table=True):
    """Every LLM call: what for, which model, a hash of the prompt, tokens, cost, latency and how it went."""

    __tablename__ = "llm_call"
    id: Optional[int] = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow, index=True)
    purpose: str = Field(index=True)
    backend: str
    model: str
    prompt_hash: str
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    cost_usd: Optional[float] = None
    latency_s: float = 0.0
    outcome: str = "ok"
    error: str = ""
    decision_trace_id: Optional[int] = Field(default=None, foreign_key="decision_trace.id", index=True)


class LearningRun(SQLModel, table=True):
    """One learning run: its options, per-stage progress and outcome. The worker updates it in short transactions;
    the version it makes is committed in one transaction at the end."""

    __tablename__ = "learning_run"
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_name: str = Field(index=True)
    parent_version: Optional[int] = None
    method: str = "offline"  # offline | llm:<model>
    options: dict = _json_dict()
    status: str = Field(default="queued", index=True)  # queued | running | done | failed | cancelled
    stage: str = ""
    progress: dict = _json_dict()  # stage -> fraction done
    detail: str = ""
    cancel_requested: bool = False
    pid: Optional[int] = None
    owner_host: Optional[str] = None  # the worker's host: its pid is only checked there
    version: Optional[int] = None
    report: dict = _json_dict()
    error: str = ""
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class RefinementCandidate(SQLModel, table=True):
    """A split or merge found by a detector on one version, its proposal, and the review decision (compare-and-set
    on `row_version`: every change bumps it, and a decision only applies to the row version the reviewer saw)."""

    __tablename__ = "refinement_candidate"
    __table_args__ = (Index("ix_refinement_candidate_handbook_status", "handbook_id", "status"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    handbook_id: int = Field(foreign_key="handbook.id")
    version_id: int = Field(foreign_key="handbook_version.id", index=True)  # the version it was computed on
    kind: str  # split | merge
    detector: str = "bayes"
    mode: str = ""
    skills: list = _json_list()
    statistic: float = 0.0
    record: dict = _json_dict()  # CandidateRecord: groups, per-agent evidence, examples
    status: str = "pending"  # pending | approved | edited | rejected | superseded
    row_version: int = 1
    proposal: dict = _json_dict()  # Proposal, when one succeeded
    proposal_status: str = "none"  # none | ok | failed
    proposal_error: str = ""
    decided_by: Optional[str] = None
    decided_at: Optional[datetime] = None
    decision_note: str = ""
    result_version_id: Optional[int] = Field(default=None, foreign_key="handbook_version.id")
    created_by: str = "system"
    created_at: datetime = Field(default_factory=utcnow)


class Member(SQLModel, table=True):
    """Who may do what: viewer (read), reviewer (decide candidates, restore versions), admin (also manage members)."""

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    role: str = "viewer"
    added_by: str = "system"
    created_at: datetime = Field(default_factory=utcnow)
