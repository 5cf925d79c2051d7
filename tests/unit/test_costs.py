import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillorchestra_core.evidence import costs

ROOT = Path(__file__).resolve().parents[2]


def test_default_price_card_comes_from_litellms_bundled_map_without_importing_it():
    # A fresh interpreter: another test in this run may already have imported litellm into this one.
    code = ("import json, sys\n"
            "from skillorchestra_core.evidence import costs\n"
            "models = ('gpt-4o-mini', 'openai/gpt-4o-mini', 'no-such-model-xyz')\n"
            "cards = [costs.default_price_card(m) for m in models]\n"
            "print(json.dumps({'cards': cards, 'litellm': 'litellm' in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    card, prefixed, unknown = got["cards"]
    assert card is not None and card[0] > 0 and card[1] > card[0]
    assert prefixed == card  # provider prefix understood
    assert unknown is None
    assert got["litellm"] is False


def agents():
    return pd.DataFrame({"agent": ["rec", "tok", "imp", "card", "none"], "mode": ["m"] * 5,
                         "input_price_per_m": [1.0, 2.0, np.nan, 1.0, np.nan],
                         "output_price_per_m": [1.0, 4.0, np.nan, 3.0, np.nan],
                         "imported_cost_usd": [np.nan, np.nan, 0.5, np.nan, np.nan]})


def test_mode_cost_uses_recorded_cost_then_tokens_then_imported_then_price_card():
    traj = pd.DataFrame({"agent": ["rec", "rec", "tok"], "mode": ["m"] * 3, "cost_usd": [0.01, 0.03, np.nan],
                         "prompt_tokens": [10, 10, 1000], "completion_tokens": [10, 10, 500]})
    out = costs.mode_costs(traj, agents()).set_index("agent")
    assert out.loc["rec", "cost"] == pytest.approx(0.02) and out.loc["rec", "cost_source"] == "evidence"
    assert out.loc["tok", "cost"] == pytest.approx((1000 * 2 + 500 * 4) / 1e6)
    assert out.loc["tok", "cost_source"] == "tokens"
    assert out.loc["imp", "cost"] == 0.5 and out.loc["imp", "cost_source"] == "imported"
    expected = (costs.TYPICAL_PROMPT_TOKENS * 1 + costs.TYPICAL_COMPLETION_TOKENS * 3) / 1e6
    assert out.loc["card", "cost"] == pytest.approx(expected) and out.loc["card", "cost_source"] == "price_card"
    assert out.loc["none", "cost"] == 0.0 and out.loc["none", "cost_source"] == "none"
