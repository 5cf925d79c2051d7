"""JSON parsing that answers hostile input with one clear reason instead of a traceback.

`json.loads` alone raises RecursionError on deep nesting (the parser's limit, about 1,000 levels less the caller's
stack), a bare ValueError on integers of more than 4,300 digits (Python's int-to-string limit), and accepts lone
surrogate escapes ("\\ud800") whose strings then cannot be stored or hashed as UTF-8. `loads` turns all of these into
`JsonProblem` (a ValueError) carrying the reason and, where it can be found, the line.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_INT_DIGITS = 4300  # Python's default int_max_str_digits; larger integers are never meaningful here
MAX_DEPTH = 500  # deeper documents are refused even when the parser's stack would allow them

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_LONG_INT = re.compile(r"\d{%d,}" % (MAX_INT_DIGITS + 1))
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class JsonProblem(ValueError):
    """Why a text is not acceptable JSON; `line` is 1-based, or 0 when unknown."""

    def __init__(self, reason: str, line: int = 0, column: int = 0):
        super().__init__(reason)
        self.reason, self.line, self.column = reason, line, column


def loads(text: str) -> Any:
    """Parse `text`; raise JsonProblem on invalid JSON, too deep nesting, too long integers, lone surrogates."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"invalid JSON at column {exc.colno}: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise JsonProblem(f"JSON nested deeper than {MAX_DEPTH} levels", _deep_line(text)) from None
    except ValueError as exc:  # int_max_str_digits: the only other ValueError the decoder raises
        match = _LONG_INT.search(text)
        line = text.count("\n", 0, match.start()) + 1 if match else 0
        raise JsonProblem(f"a number with more than {MAX_INT_DIGITS} digits" if match else str(exc), line) from None
    if isinstance(value, (dict, list)) and ("\\u" in text or text.count("[") + text.count("{") > MAX_DEPTH):
        _check(value, text)  # skipped for most JSON Lines records: no escapes, too few brackets to nest deep
    return value


def _check(value: Any, text: str) -> None:
    """Depth and (only when the text has \\u escapes, the one way JSON can make them) lone surrogates."""
    escapes = "\\u" in text
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise JsonProblem(f"JSON nested deeper than {MAX_DEPTH} levels", _deep_line(text))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in items:
            if escapes and ((key.__class__ is str and _SURROGATE.search(key))
                            or (item.__class__ is str and _SURROGATE.search(item))):
                raise JsonProblem("a lone surrogate escape (\\ud800-\\udfff) in a string: not valid Unicode",
                                  _escape_line(text))
            if isinstance(item, (dict, list)):
                stack.append((item, depth + 1))


def _deep_line(text: str) -> int:
    depth = 0
    for match in _TOKENS.finditer(text):
        ch = match.group()
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH or depth >= sys.getrecursionlimit():
                return text.count("\n", 0, match.start()) + 1
        elif ch in "]}":
            depth -= 1
    return 0


def _escape_line(text: str) -> int:
    match = _SURROGATE_ESCAPE.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 0
