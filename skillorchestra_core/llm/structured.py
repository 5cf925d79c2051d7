"""Structured output: ask for JSON matching a pydantic model, validate, re-ask once on failure.

The re-ask shows the model its own reply and the validation error. A second failure returns the error instead of a
value, so the caller can fall back (and record why). Transport errors are not re-asked here (litellm retries them).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from skillorchestra_core.llm.base import LlmClient, LlmError, Message

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


@dataclass(frozen=True)
class Structured(Generic[T]):
    value: T | None
    error: str = ""
    attempts: int = 0
    raw: str = ""
    model: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


def extract_json(text: str) -> str:
    """The JSON object in a reply: strips code fences and any prose around the outermost braces."""
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    return body[start:end + 1] if start != -1 and end > start else body


def parse_reply(text: str, schema: type[T], check: Callable[[T], None] | None = None) -> T:
    """Validate `text` against `schema`, then run `check` (which raises ValueError for semantic problems)."""
    value = schema.model_validate_json(extract_json(text))
    _finite(value.model_dump())
    if check is not None:
        check(value)
    return value


def _finite(data: object) -> None:
    """pydantic's JSON parser accepts Infinity and NaN; no number an LLM gives us is meaningful as either."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            raise ValueError(f"the reply has a non-finite number ({node})")
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


MAX_ERROR_CHARS = 500


def _describe(exc: Exception) -> str:
    """One line, whatever the reply held (keys and refs echoed in messages may carry newlines)."""
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()[:5]]
        text = "; ".join(parts)
    else:
        text = str(exc)
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."


def ask_structured(client: LlmClient, messages: list[Message], schema: type[T], *, purpose: str,
                   check: Callable[[T], None] | None = None, model: str | None = None,
                   max_attempts: int = 2) -> Structured[T]:
    """Ask `client` for a `schema` object; at most `max_attempts` tries (one re-ask by default)."""
    convo = list(messages)
    schema_text = json.dumps(schema.model_json_schema(), separators=(",", ":"))
    error, raw, used = "", "", model or client.model
    for attempt in range(1, max_attempts + 1):
        try:
            reply = client.complete(convo, purpose=purpose, model=model, response_format=schema)
        except LlmError as exc:
            return Structured(None, f"call failed: {exc}", attempt, raw, used)
        raw, used = reply.text, reply.model
        try:
            return Structured(parse_reply(reply.text, schema, check), "", attempt, raw, used)
        except (ValidationError, ValueError) as exc:
            error = _describe(exc)
            client.calls.mark_last("invalid", error)
        convo = convo + [
            {"role": "assistant", "content": raw},
            {"role": "user", "content": f"Your reply did not validate: {error}. Reply again with only a JSON object "
                                        f"matching this JSON schema: {schema_text}"},
        ]
    return Structured(None, f"invalid output after {max_attempts} attempts: {error}", max_attempts, raw, used)
