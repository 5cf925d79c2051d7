"""The litellm adapter: any provider or local OpenAI-compatible server through one model string.

litellm is imported lazily inside `_litellm()`, after the offline flags are set, so importing this package costs
nothing and never reaches for the network (see ecosystem notes section 4).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from pydantic import BaseModel

from skillorchestra_core.llm.base import BaseLlmClient, LlmCallRecord, LlmReply, Message

PriceCard = tuple[float | None, float | None]  # USD per 1M input / output tokens


def set_offline_flags() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def _litellm():
    set_offline_flags()
    import litellm  # noqa: PLC0415  (lazy on purpose: ~3 s, and network at import without the flags)

    litellm.suppress_debug_info = True
    return litellm


class LiteLlmClient(BaseLlmClient):
    """`complete()` calls `litellm.completion`; our cost is tokens x the price card given for the model (the
    handbook's agent card), else litellm's own `response_cost`, which is kept as a cross-check either way."""

    backend = "litellm"

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, retries: int = 2, price_cards: dict[str, PriceCard] | None = None,
                 sink: Callable[[LlmCallRecord], None] | None = None):
        super().__init__(model, sink)
        self.api_base, self.api_key = api_base, api_key
        self.timeout_s, self.retries = timeout_s, retries
        self.price_cards = dict(price_cards or {})

    def _complete(self, messages: list[Message], model: str, response_format: type[BaseModel] | None,
                  params: dict[str, Any]) -> LlmReply:
        litellm = _litellm()
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "timeout": self.timeout_s,
                                  "num_retries": self.retries}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if response_format is not None:
            kwargs["response_format"] = response_format
        kwargs.update({k: v for k, v in params.items() if not k.startswith("_")})
        resp = litellm.completion(**kwargs)
        text = resp.choices[0].message.content or ""
        usage = getattr(resp, "usage", None)
        pt = getattr(usage, "prompt_tokens", None)
        ct = getattr(usage, "completion_tokens", None)
        provider_cost = (getattr(resp, "_hidden_params", None) or {}).get("response_cost")
        return LlmReply(text=text, model=getattr(resp, "model", None) or model, prompt_tokens=pt,
                        completion_tokens=ct, cost_usd=self._cost(model, pt, ct, provider_cost),
                        provider_cost_usd=provider_cost)

    def _cost(self, model: str, pt: int | None, ct: int | None, provider_cost: float | None) -> float | None:
        card = self.price_cards.get(model)
        if card is not None and card[0] is not None and pt is not None:
            return ((pt or 0) * card[0] + (ct or 0) * (card[1] or 0.0)) / 1e6
        return float(provider_cost) if provider_cost is not None else None
