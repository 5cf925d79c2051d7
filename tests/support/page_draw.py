"""When a page counts as fully drawn in chromium, and a trivial Streamlit page to compare with (the draw benchmark
and the demo e2e time pages the same way)."""

from __future__ import annotations

import time
from pathlib import Path

BUDGET_S = 1.5  # every page drawn within this much of the trivial page
FRESH_REPEATS = 3  # fresh-browser visits per page (median): one visit swings by a second on a busy machine
TRIVIAL = 'import streamlit as st\n\nst.title("Trivial")\nst.write("A trivial page, for the baseline.")\n'
# The script run is over, no skeleton is left, every Plotly chart has drawn its SVG, every dataframe its canvas and
# every Vega-Lite chart its marks.
DRAWN = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  for (const c of document.querySelectorAll('[data-testid="stPlotlyChart"]')) if (!c.querySelector('.main-svg'))
    return false;
  for (const d of document.querySelectorAll('[data-testid="stDataFrame"]')) if (!d.querySelector('canvas'))
    return false;
  for (const v of document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
    if (!v.querySelector('svg.marks .mark-symbol, canvas')) return false;
  return !!document.querySelector('[data-testid="stMain"] h1, [data-testid="stMain"] h2');
}"""


def write_trivial(folder: Path) -> Path:
    path = folder / "trivial.py"
    path.write_text(TRIVIAL)
    return path


def wait_drawn(page, since: float, timeout: float = 60_000) -> float:
    """Wait until `page` is fully drawn; seconds since `since` (a time.perf_counter() taken before the action)."""
    page.wait_for_function(DRAWN, timeout=timeout, polling=25)
    return time.perf_counter() - since


def visit(page, url: str) -> float:
    """Open `url` in `page`: seconds until it is fully drawn."""
    t0 = time.perf_counter()
    page.goto(url)
    return wait_drawn(page, t0)
