"""The offline backend: deterministic stand-ins registered per purpose, no network, no API key.

Features that have an offline method of their own (skill activation uses the TF-IDF retriever, the mode policy uses
the evidence's paths) check `client.configured` and do not ask this client at all. Other features may register a
deterministic handler for their purpose with `register_offline_handler`.
"""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel

from skillorchestra_core.llm.base import BaseLlmClient, LlmReply, LlmUnavailable, Message

Handler = Callable[[list[Message], type[BaseModel] | None], str]
_HANDLERS: dict[str, Handler] = {}


def register_offline_handler(purpose: str, handler: Handler) -> None:
    """Make `purpose` answerable offline: `handler(messages, schema)` returns the reply text (JSON for a schema)."""
    _HANDLERS[purpose] = handler


class OfflineLlm(BaseLlmClient):
    backend = "offline"

    def __init__(self, handlers: dict[str, Handler] | None = None, sink=None):
        super().__init__("offline", sink)
        self.handlers = dict(handlers or {})

    @property
    def configured(self) -> bool:
        return False

    def complete(self, messages, *, purpose, model=None, response_format=None, **params):
        return super().complete(messages, purpose=purpose, model=model, response_format=response_format,
                                _purpose=purpose, **params)

    def _complete(self, messages: list[Message], model: str, response_format: type[BaseModel] | None,
                  params: dict[str, Any]) -> LlmReply:
        purpose = params.get("_purpose", "")
        handler = self.handlers.get(purpose) or _HANDLERS.get(purpose)
        if handler is None:
            raise LlmUnavailable(f"the offline LLM backend has no stand-in for {purpose!r}; "
                                 "set SKILLORCHESTRA_LLM_BACKEND=litellm and a model to use a real LLM")
        return LlmReply(text=handler(messages, response_format), model="offline", prompt_tokens=0,
                        completion_tokens=0, cost_usd=0.0)
