"""A fake LLM for tests: replays queued outputs in order and records every prompt it was sent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel

from skillorchestra_core.llm.base import BaseLlmClient, LlmError, LlmReply, Message

Output = str | dict | list | Exception | Callable[[list[Message]], str]


@dataclass(frozen=True)
class FakeRequest:
    purpose: str
    model: str
    messages: list[Message]
    schema: str | None


class FakeLlm(BaseLlmClient):
    """`FakeLlm(["...", {"a": 1}, ValueError("boom")])`: each call takes the next output.

    A dict or list is sent as JSON text, an exception is raised (as a failed call), a callable gets the messages.
    Running out of outputs is an error, so a test notices an unexpected extra call.
    """

    backend = "fake"

    def __init__(self, outputs: list[Output] | None = None, model: str = "fake/model", *,
                 prompt_tokens: int = 10, completion_tokens: int = 5, cost_usd: float | None = 0.0, sink=None):
        super().__init__(model, sink)
        self.outputs: list[Output] = list(outputs or [])
        self.requests: list[FakeRequest] = []
        self.usage = (prompt_tokens, completion_tokens, cost_usd)

    def queue(self, *outputs: Output) -> "FakeLlm":
        self.outputs.extend(outputs)
        return self

    @property
    def prompts(self) -> list[str]:
        """The text of each request's messages, joined: what the model was asked."""
        return ["\n".join(str(m.get("content", "")) for m in r.messages) for r in self.requests]

    def _complete(self, messages: list[Message], model: str, response_format: type[BaseModel] | None,
                  params: dict[str, Any]) -> LlmReply:
        self.requests.append(FakeRequest(params.get("_purpose", ""), model, [dict(m) for m in messages],
                                         response_format.__name__ if response_format else None))
        if not self.outputs:
            raise LlmError("fake LLM has no queued output left")
        out = self.outputs.pop(0)
        if isinstance(out, Exception):
            raise out
        if callable(out):
            out = out(messages)
        text = out if isinstance(out, str) else json.dumps(out)
        pt, ct, cost = self.usage
        return LlmReply(text=text, model=model, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost)

    def complete(self, messages, *, purpose, model=None, response_format=None, **params):
        return super().complete(messages, purpose=purpose, model=model, response_format=response_format,
                                _purpose=purpose, **params)
