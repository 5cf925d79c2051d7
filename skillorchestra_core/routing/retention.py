"""How long stored decisions are kept: the newest N per handbook (`SKILLORCHESTRA_DECISION_KEEP`) and/or those of
the last D days (`SKILLORCHESTRA_DECISION_KEEP_DAYS`); unset keeps everything. `prune_decisions` applies it (the
`skillorchestra decisions prune` command), deleting in chunks so a million rows never sit in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy import delete, update
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import DecisionTrace, LlmCall

CHUNK = 5000


class RetentionSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLORCHESTRA_", env_file=".env", extra="ignore")

    decision_keep: int | None = Field(default=None, ge=0)
    decision_keep_days: float | None = Field(default=None, ge=0)


@dataclass(frozen=True)
class PruneResult:
    deleted: int
    kept: int
    keep: int | None
    keep_days: float | None


def _check(value, name: str):
    if value is not None and value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def prune_decisions(s: Session, keep: int | None = None, keep_days: float | None = None,
                    handbook: str | None = None, now: datetime | None = None) -> PruneResult:
    """Delete the decisions outside the retention (arguments, else the settings): beyond the newest `keep` per
    handbook, or routed more than `keep_days` ago. Their LLM call records stay, unlinked. Commits per chunk."""
    if keep is None and keep_days is None:
        configured = RetentionSettings()
        keep, keep_days = configured.decision_keep, configured.decision_keep_days
    _check(keep, "keep")
    _check(keep_days, "keep_days")
    doomed: list[list[Any]] = []
    names = [handbook] if handbook else list(s.exec(select(DecisionTrace.handbook_name).distinct()).all())
    for name in names:
        conds: list[Any] = [DecisionTrace.handbook_name == name]
        if keep is not None:  # the id of the newest decision past the kept ones: it and everything older go
            cut = s.exec(select(DecisionTrace.id).where(*conds).order_by(col(DecisionTrace.id).desc())
                         .offset(keep).limit(1)).first()
            if cut is not None:
                doomed.append(conds + [col(DecisionTrace.id) <= cut])
        if keep_days is not None:
            since = (now or datetime.now(timezone.utc)) - timedelta(days=keep_days)
            doomed.append(conds + [DecisionTrace.created_at < since])
    deleted = 0
    for conds in doomed:
        while True:
            ids = list(s.exec(select(DecisionTrace.id).where(*conds).limit(CHUNK)).all())
            if not ids:
                break
            s.execute(update(LlmCall).where(col(LlmCall.decision_trace_id).in_(ids)).values(decision_trace_id=None))
            s.execute(delete(DecisionTrace).where(col(DecisionTrace.id).in_(ids)))
            s.commit()
            deleted += len(ids)
    kept = len(s.exec(select(DecisionTrace.id).where(
        *([DecisionTrace.handbook_name == handbook] if handbook else []))).all())
    return PruneResult(deleted, kept, keep, keep_days)
