"""Scoring a live answer against the query's ground truth (exact match after normalising).

The normaliser, applied to the answer and to every ground truth:
1. take the text after the last "answer:" / "final answer:" / "the answer is" marker when there is one;
2. lower-case; turn punctuation into spaces (a decimal point or sign inside a number is kept); collapse whitespace;
   drop the articles a / an / the.
The answer scores 1 when its normalised text equals a normalised ground truth, or when both are numbers (commas,
currency signs and % removed) within 1e-6 relative (1e-9 absolute); else 0. A ground truth that is a JSON list of
strings offers each element. Unlike the reference code, no substring containment: "1" does not match "1945".
"""

from __future__ import annotations

import json
import re

_MARKER = re.compile(r"(?:final answer|the answer is|answer)\s*[:\-]?\s*", re.IGNORECASE)
_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?$")
_ARTICLES = {"a", "an", "the"}


def _tail(text: str) -> str:
    marks = list(_MARKER.finditer(text))
    return text[marks[-1].end():] if marks else text


def normalise(text: str) -> str:
    t = _tail(text or "").strip().lower()
    t = re.sub(r"(?<=\d),(?=\d{3})", "", t)  # thousands separators
    t = re.sub(r"[$€£%]", " ", t)
    t = re.sub(r"(?<!\d)[.](?!\d)|[^\w\s.+-]|[+-](?!\d)", " ", t)
    t = re.sub(r"[.](?=\s|$)", " ", t)
    words = [w for w in t.split() if w not in _ARTICLES]
    return " ".join(words)


def _number(text: str) -> float | None:
    return float(text) if _NUMBER.match(text) else None


def truths(ground_truth: str | None) -> list[str]:
    if ground_truth is None or not str(ground_truth).strip():
        return []
    g = str(ground_truth).strip()
    if g.startswith("["):
        try:
            items = json.loads(g)
            if isinstance(items, list):
                return [str(x) for x in items]
        except ValueError:
            pass
    return [g]


def score_answer(answer: str, ground_truth: str | None) -> float | None:
    """1.0 / 0.0, or None when the query has no ground truth (such a query is not scored)."""
    options = truths(ground_truth)
    if not options:
        return None
    a = normalise(answer)
    na = _number(a)
    for g in options:
        ng = normalise(g)
        if a == ng:
            return 1.0
        gv = _number(ng)
        if na is not None and gv is not None and abs(na - gv) <= max(1e-9, 1e-6 * abs(gv)):
            return 1.0
    return 0.0
