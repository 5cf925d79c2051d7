"""Secrets out of error text: providers and HTTP libraries often echo the API key or the Authorization header in
their error messages, and those messages are stored (llm_call.error, the decision trace), printed (`route --json`)
and logged. Every such message passes through `redact` first."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable

MASK = "[redacted]"
# Environment variables that hold credentials: their values are removed wherever they appear.
_SECRET_ENV = re.compile(r"(?i)(api_?key|token|secret|password|passwd|credentials?)$")
_MIN_SECRET = 6  # shorter values would blank out ordinary words
_NOT_MASKED = r"(?!\[redacted\])"
# Each pattern: (what stays)(the secret).
_PATTERNS = [
    # "api_key=...", "api-key: ...", '"apiKey": "..."', "x-api-key: ...", "password=...", "access_token=..."
    re.compile(r"(?i)(\b(?:x-)?api[_-]?key|\baccess[_-]?token|\bauth[_-]?token|\bclient[_-]?secret|\bsecret"
               r"|\bpassword)([\"']?\s*[:=]\s*[\"']?)" + _NOT_MASKED + r"([^\s\"',;&}\]]+)"),
    # "Authorization: Basic <base64>" / "Authorization: Bearer <token>", and a bare "Bearer <token>"
    re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|bearer|token)\s+)?)()" + _NOT_MASKED
               + r"(?!(?:basic|bearer|token)\b)([^\s\"',;]+)"),
    re.compile(r"(?i)(\bbearer)(\s+)" + _NOT_MASKED + r"([A-Za-z0-9._~+/=\-]{8,})"),
    # Provider key shapes: OpenAI / Anthropic (sk-, sk-proj-, sk-ant-), Google (AIza), Groq (gsk_), xAI (xai-),
    # Hugging Face (hf_), AWS access key ids, GitHub and Slack tokens.
    re.compile(r"()()\b((?:sk|rk)-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|gsk_[A-Za-z0-9]{16,}|"
               r"xai-[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|"
               r"xox[abpr]-[A-Za-z0-9\-]{10,})"),
]


def configured_secrets() -> list[str]:
    """The values of credential-holding environment variables (OPENAI_API_KEY, SKILLORCHESTRA_LLM_API_KEY, ...)."""
    return [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v.strip()) >= _MIN_SECRET]


def redact(text: object, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every known secret value (`secrets`, then the configured key variables) and every key-shaped
    token replaced by [redacted]. Longest values go first, so a key that contains another is removed whole."""
    out = "" if text is None else str(text)
    known = {s.strip() for s in (*secrets, *configured_secrets()) if s and len(s.strip()) >= _MIN_SECRET}
    for value in sorted(known, key=len, reverse=True):
        out = out.replace(value, MASK)
    for pattern in _PATTERNS:
        out = pattern.sub(lambda m: m.group(1) + m.group(2) + MASK, out)
    return out


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's final message (arguments merged) before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            import traceback  # noqa: PLC0415

            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip())
            record.exc_info = None
        return True


# The loggers of the LLM stack, which can print request headers or provider replies at debug level.
PROVIDER_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "httpcore", "openai")


def install_log_redaction(names: Iterable[str] = PROVIDER_LOGGERS) -> None:
    """Put one RedactingFilter on each named logger (idempotent)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
