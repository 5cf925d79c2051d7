"""Price cards and the per-(agent, mode) cost estimate C(A, mode) from evidence."""

from __future__ import annotations

import importlib.util
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

# Used when a trajectory has neither a recorded cost nor token counts, only to estimate from the price card.
TYPICAL_PROMPT_TOKENS = 400
TYPICAL_COMPLETION_TOKENS = 200


def _set_litellm_offline_flags() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


@lru_cache(maxsize=1)
def litellm_price_map() -> dict[str, dict]:
    """litellm's bundled offline price map, read from its package data without importing litellm (which costs
    seconds and reaches for the network); falls back to importing it with the offline flags set."""
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            path = Path(folder) / "model_prices_and_context_window_backup.json"
            if path.exists():
                return json.loads(path.read_text())
    _set_litellm_offline_flags()
    try:
        import litellm  # noqa: PLC0415  (lazy on purpose)
    except ImportError:
        return {}
    return dict(litellm.model_cost)


def default_price_card(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for a litellm model string, or None when litellm does not know it."""
    if not model:
        return None
    prices = litellm_price_map()
    for name in (model, model.split("/", 1)[-1]):
        entry = prices.get(name)
        if entry and entry.get("input_cost_per_token") is not None:
            return (float(entry["input_cost_per_token"]) * 1e6, float(entry.get("output_cost_per_token") or 0) * 1e6)
    return None


def call_cost(prompt_tokens, completion_tokens, input_price_per_m, output_price_per_m):
    """Vectorised USD cost of calls from tokens and a price card (NaN where a price is unknown)."""
    pt = np.asarray(prompt_tokens, float)
    ct = np.asarray(completion_tokens, float)
    pin = np.asarray(input_price_per_m, float)
    pout = np.asarray(output_price_per_m, float)
    return (pt * pin + ct * pout) / 1e6


def trajectory_costs(trajectories: pd.DataFrame, agents: pd.DataFrame) -> np.ndarray:
    """Each trajectory's cost: the recorded cost, else its tokens priced with the agent's card (NaN if neither).

    `trajectories`: agent, mode, cost_usd, prompt_tokens, completion_tokens; `agents`: agent, mode and prices."""
    cards = agents.set_index(["agent", "mode"])[["input_price_per_m", "output_price_per_m"]]
    t = trajectories[["agent", "mode"]].join(cards, on=["agent", "mode"])
    from_tokens = call_cost(trajectories["prompt_tokens"], trajectories["completion_tokens"],
                            t["input_price_per_m"], t["output_price_per_m"])
    recorded = trajectories["cost_usd"].to_numpy(float)
    return np.where(np.isnan(recorded), from_tokens, recorded)


def mode_costs(trajectories: pd.DataFrame, agents: pd.DataFrame) -> pd.DataFrame:
    """Mean cost per call for each (agent, mode).

    `trajectories`: agent, mode, cost_usd, prompt_tokens, completion_tokens (NaN where unknown).
    `agents`: agent, mode, input_price_per_m, output_price_per_m, imported_cost_usd (optional).
    Returns agent, mode, cost, n_cost, cost_source in {evidence, tokens, imported, price_card, none}.
    A trajectory's cost is its recorded cost, else tokens x price card.
    """
    return costs_from_stats(cost_stats(trajectories, agents), agents)


def cost_stats(trajectories: pd.DataFrame, agents: pd.DataFrame) -> pd.DataFrame:
    """Per (agent, mode) of the trajectories: mean known cost `cost`, how many are known `n_cost` and the share
    recorded rather than priced from tokens `recorded` (what `costs_from_stats` needs, small enough to store)."""
    if not len(trajectories):
        return pd.DataFrame({"agent": pd.Series(dtype=object), "mode": pd.Series(dtype=object),
                             "cost": pd.Series(dtype=float), "n_cost": pd.Series(dtype=float),
                             "recorded": pd.Series(dtype=float)})
    t = trajectories.assign(_cost=trajectory_costs(trajectories, agents),
                            _recorded=~np.isnan(trajectories["cost_usd"].to_numpy(float)))
    return t.groupby(["agent", "mode"], as_index=False).agg(cost=("_cost", "mean"), n_cost=("_cost", "count"),
                                                           recorded=("_recorded", "mean"))


def costs_from_stats(stats: pd.DataFrame, agents: pd.DataFrame) -> pd.DataFrame:
    """`mode_costs` from `cost_stats`: evidence first, then an imported profile's cost, then the price card."""
    out = agents[["agent", "mode"]].merge(stats[["agent", "mode", "cost", "n_cost", "recorded"]],
                                          on=["agent", "mode"], how="left")
    out["cost_source"] = np.where(out["recorded"] >= 0.5, "evidence", "tokens")
    missing = out["cost"].isna()
    imported = agents.get("imported_cost_usd", pd.Series(np.nan, index=agents.index)).to_numpy(float)
    card = call_cost(TYPICAL_PROMPT_TOKENS, TYPICAL_COMPLETION_TOKENS, agents["input_price_per_m"].fillna(np.nan),
                     agents["output_price_per_m"].fillna(np.nan))
    use_imported = missing.to_numpy() & ~np.isnan(imported)
    use_card = missing.to_numpy() & ~use_imported & ~np.isnan(card)
    out.loc[use_imported, "cost"] = imported[use_imported]
    out.loc[use_imported, "cost_source"] = "imported"
    out.loc[use_card, "cost"] = card[use_card]
    out.loc[use_card, "cost_source"] = "price_card"
    none = out["cost"].isna()
    out.loc[none, "cost_source"] = "none"
    out["cost"] = out["cost"].astype(float).fillna(0.0)
    out["n_cost"] = out["n_cost"].fillna(0).astype(int)
    return out.drop(columns=["recorded"]).reset_index(drop=True)
