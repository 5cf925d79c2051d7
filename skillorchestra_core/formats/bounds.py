"""Limits on the numbers an import may bring in.

Every value read from a file lands in sums, logs and Beta posteriors; one absurd value (a cost of 1e308, an alpha
of Infinity, a negative average cost) would break routing and exports of the whole handbook for good. The limits
are far beyond any real use and far below where float arithmetic loses its footing:

- a cost (per call, or an average per call) is finite and within [0, MAX_COST_USD] USD;
- a price is finite and within [0, MAX_PRICE_PER_M] USD per million tokens;
- a token count is a whole number within [0, MAX_TOKENS] (2**53: every such count is exact as a float);
- a latency is finite and within [0, MAX_LATENCY_S] seconds;
- alpha and beta of an imported Beta count are finite, > 0 and at most MAX_BETA_COUNT; attempt and success totals
  are within [0, MAX_BETA_COUNT];
- a score or a confidence is within [0, 1].

Each checker returns the value (as float or int) or raises `ValueError` with a reason meant for the user.
"""

from __future__ import annotations

import math
from typing import Any

MAX_COST_USD = 1e6
MAX_PRICE_PER_M = 1e6
MAX_TOKENS = 2**53
MAX_LATENCY_S = 1e7
MAX_BETA_COUNT = 1e12


def number(value: Any, name: str) -> float:
    """A finite float from a number or a numeric string (never a bool)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        out = float(value)  # float() itself ignores surrounding whitespace
    except OverflowError:  # an int too large for a float
        raise ValueError(f"{name} must be a finite number, got {_short(value)}") from None
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {_short(value)}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be a finite number, got {_short(value)}")
    return out


def within(value: Any, name: str, low: float, high: float, *, low_open: bool = False) -> float:
    out = number(value, name)
    if low == 0.0 and out < 0:
        raise ValueError(f"{name} must not be negative, got {out:g}")
    if out < low or (low_open and out == low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}, got {out:g}")
    if out > high:
        raise ValueError(f"{name} {out:g} is above the limit of {high:g}")
    return out


def cost(value: Any, name: str = "cost_usd") -> float:
    return within(value, name, 0.0, MAX_COST_USD)


def price(value: Any, name: str = "price") -> float:
    return within(value, name, 0.0, MAX_PRICE_PER_M)


def latency(value: Any, name: str = "latency_s") -> float:
    return within(value, name, 0.0, MAX_LATENCY_S)


def unit(value: Any, name: str = "score") -> float:
    out = number(value, name)
    if not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} {out:g} is outside [0, 1]")
    return out


def beta_count(value: Any, name: str) -> float:
    """alpha or beta of a Beta count: finite, > 0, bounded."""
    return within(value, name, 0.0, MAX_BETA_COUNT, low_open=True)


def total(value: Any, name: str) -> float:
    """An attempts or successes total: finite, >= 0, bounded."""
    return within(value, name, 0.0, MAX_BETA_COUNT)


def tokens(value: Any, name: str) -> int:
    """A token count: a whole number within [0, MAX_TOKENS]."""
    if value.__class__ is int:  # exact, whatever its size: no float round trip
        out = value
    elif value.__class__ is str and value.strip().isascii() and value.strip().isdigit():
        text = value.strip()
        if len(text) > 20:
            raise ValueError(f"{name} {text[:12]}... is above the limit of {MAX_TOKENS}")
        out = int(text)
    else:
        as_float = number(value, name)
        if not as_float.is_integer():
            raise ValueError(f"{name} must be a whole number, got {_short(value)}")
        if abs(as_float) > MAX_TOKENS:
            raise ValueError(f"{name} {as_float:g} is above the limit of {MAX_TOKENS}")
        out = int(as_float)
    if out < 0:
        raise ValueError(f"{name} must not be negative, got {out}")
    if out > MAX_TOKENS:
        raise ValueError(f"{name} {_short(out)} is above the limit of {MAX_TOKENS}")
    return out


def cost_stat(key: str, value: Any) -> float:
    """One cost_stats entry: costs within the cost limit, token averages and counts within the token limit."""
    name = f"cost_stats.{key}"
    if key.endswith("_usd"):
        return cost(value, name)
    return within(value, name, 0.0, float(MAX_TOKENS))


def _short(value: Any) -> str:
    if isinstance(value, int) and value.bit_length() > 200:  # repr of a huge int is slow, or refused past 4300 digits
        return f"a {value.bit_length()}-bit number"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
