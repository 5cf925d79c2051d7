"""LLM layer: one protocol, three backends (litellm, offline stand-ins, a fake for tests), structured output with one
re-ask, and a log of every call. Nothing here imports litellm at import time."""

from __future__ import annotations

from skillorchestra_core.llm.base import (
    BaseLlmClient,
    CallLog,
    LlmCallRecord,
    LlmClient,
    LlmError,
    LlmReply,
    LlmUnavailable,
    Message,
)
from skillorchestra_core.llm.fake import FakeLlm
from skillorchestra_core.llm.litellm_client import LiteLlmClient, set_offline_flags
from skillorchestra_core.llm.offline import OfflineLlm, register_offline_handler
from skillorchestra_core.llm.structured import Structured, ask_structured, extract_json, parse_reply

set_offline_flags()

__all__ = [
    "BaseLlmClient", "CallLog", "FakeLlm", "LiteLlmClient", "LlmCallRecord", "LlmClient", "LlmError", "LlmReply",
    "LlmUnavailable", "Message", "OfflineLlm", "Structured", "ask_structured", "client_from_settings",
    "extract_json", "parse_reply", "register_offline_handler",
]


def client_from_settings(settings=None, price_cards=None) -> BaseLlmClient:
    """The client the settings ask for: `OfflineLlm` (default) or `LiteLlmClient(settings.llm_model, ...)`."""
    from skillorchestra_core.settings import get_settings

    settings = settings or get_settings()
    if settings.llm_backend == "litellm":
        return LiteLlmClient(settings.llm_model, api_base=settings.llm_api_base, api_key=settings.llm_api_key,
                             timeout_s=settings.llm_timeout_s, retries=settings.llm_retries, price_cards=price_cards)
    return OfflineLlm()
