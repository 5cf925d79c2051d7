"""The LLM client protocol, the call log every client keeps, and the shared wrapper that times and logs calls.

Three implementations share it: `LiteLlmClient` (any litellm model string, imported lazily), `OfflineLlm`
(deterministic stand-ins registered per purpose; the default) and `FakeLlm` (tests: replays queued outputs and
records prompts). Every call leaves one `LlmCallRecord` (purpose, model, prompt hash, tokens, cost, latency, outcome)
in the client's `CallLog`; `skillorchestra_core.llm.log.save_calls` persists them.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Protocol, runtime_checkable

from pydantic import BaseModel

from skillorchestra_core.errors import StudioError
from skillorchestra_core.llm.redact import install_log_redaction, redact

Message = dict[str, Any]
install_log_redaction()  # provider libraries log through these loggers; no key reaches a log line


class LlmError(StudioError):
    """The call failed (transport, provider, timeout) or no output could be produced."""


class LlmUnavailable(LlmError):
    """The configured backend cannot serve this purpose (e.g. the offline backend has no stand-in for it)."""


@dataclass(frozen=True)
class LlmReply:
    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None  # ours: tokens x price card when known, else the provider's figure
    provider_cost_usd: float | None = None  # litellm's response_cost, kept as a cross-check
    latency_s: float = 0.0


@dataclass
class LlmCallRecord:
    purpose: str
    backend: str
    model: str
    prompt_hash: str
    outcome: str = "ok"  # ok | error | invalid (the reply failed validation)
    error: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


class CallLog:
    """Records of the calls a client made; an optional sink sees each record as it is added."""

    def __init__(self, sink: Callable[[LlmCallRecord], None] | None = None):
        self.records: list[LlmCallRecord] = []
        self.sink = sink
        self._lock = threading.Lock()

    def add(self, record: LlmCallRecord) -> None:
        with self._lock:
            self.records.append(record)
        if self.sink is not None:
            self.sink(record)

    def mark_last(self, outcome: str, error: str) -> None:
        with self._lock:
            if self.records:
                self.records[-1].outcome, self.records[-1].error = outcome, redact(error)[:2000]

    def since(self, start: int) -> list[LlmCallRecord]:
        with self._lock:
            return list(self.records[start:])

    def __len__(self) -> int:
        return len(self.records)


def prompt_hash(messages: list[Message], model: str, schema: type[BaseModel] | None = None) -> str:
    blob = json.dumps({"m": messages, "model": model, "schema": schema.__name__ if schema else None},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@runtime_checkable
class LlmClient(Protocol):
    backend: str
    model: str
    calls: CallLog

    def complete(self, messages: list[Message], *, purpose: str, model: str | None = None,
                 response_format: type[BaseModel] | None = None, **params: Any) -> LlmReply: ...


class BaseLlmClient:
    """Times, hashes and logs every call; subclasses implement `_complete`."""

    backend = "base"

    def __init__(self, model: str = "", sink: Callable[[LlmCallRecord], None] | None = None):
        self.model = model
        self.calls = CallLog(sink)

    @property
    def configured(self) -> bool:
        """True when this client talks to a real model (activation and mode policy then ask it)."""
        return True

    def complete(self, messages: list[Message], *, purpose: str, model: str | None = None,
                 response_format: type[BaseModel] | None = None, **params: Any) -> LlmReply:
        used = model or self.model
        record = LlmCallRecord(purpose=purpose, backend=self.backend, model=used,
                               prompt_hash=prompt_hash(messages, used, response_format))
        start = time.perf_counter()
        secrets = self.secrets()
        try:
            reply = self._complete(messages, used, response_format, params)
        except LlmError as exc:
            exc.args = (redact(exc, secrets),)  # it is stored in traces and printed: never with a key in it
            record.outcome, record.error = "error", str(exc)[:2000]
            record.latency_s = time.perf_counter() - start
            self.calls.add(record)
            raise
        except Exception as exc:  # provider exceptions become LlmError with the cause named
            cause = redact(f"{type(exc).__name__}: {exc}", secrets)
            record.outcome, record.error = "error", cause[:2000]
            record.latency_s = time.perf_counter() - start
            self.calls.add(record)
            # Not chained: the provider's exception (and so any traceback printed or logged) may quote the key.
            raise LlmError(f"{self.backend} call for {purpose} to {used} failed: {cause}") from None
        record.latency_s = time.perf_counter() - start
        record.prompt_tokens, record.completion_tokens = reply.prompt_tokens, reply.completion_tokens
        record.cost_usd = reply.cost_usd
        self.calls.add(record)
        return LlmReply(reply.text, used, reply.prompt_tokens, reply.completion_tokens,
                        reply.cost_usd, reply.provider_cost_usd, record.latency_s)

    def secrets(self) -> list[str]:
        """Credentials this client holds, removed from every error it records or raises."""
        key = getattr(self, "api_key", None)
        return [key] if isinstance(key, str) and key else []

    def _complete(self, messages: list[Message], model: str, response_format: type[BaseModel] | None,
                  params: dict[str, Any]) -> LlmReply:
        raise NotImplementedError
