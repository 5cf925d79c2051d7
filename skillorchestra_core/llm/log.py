"""Persist LLM call records as `LlmCall` rows."""

from __future__ import annotations

from sqlmodel import Session

from skillorchestra_core.db.models import LlmCall
from skillorchestra_core.llm.base import LlmCallRecord
from skillorchestra_core.llm.redact import redact


def save_calls(s: Session, records: list[LlmCallRecord], decision_trace_id: int | None = None) -> int:
    """Add one row per record (the caller commits), errors redacted once more (a record may come from any client).
    Returns how many were added."""
    for r in records:
        s.add(LlmCall(at=r.at, purpose=r.purpose, backend=r.backend, model=r.model, prompt_hash=r.prompt_hash,
                      prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens, cost_usd=r.cost_usd,
                      latency_s=r.latency_s, outcome=r.outcome, error=redact(r.error),
                      decision_trace_id=decision_trace_id))
    return len(records)
