"""The Posteriors page's forest plot as a Vega-Lite spec: the page's first view, so it uses the chart library
the browser loads fastest (Streamlit's Vega-Lite chunk draws in about a third of the time of its 4.7 MB Plotly
one). Names go in as data: Vega draws them as text, and its tooltips escape markup."""

from __future__ import annotations

from typing import Any

import pandas as pd

from skillorchestra_core.graph.posterior_figures import agent_colors
from skillorchestra_core.graph.posterior_views import MEAN, SCORES
from skillorchestra_core.graph.text import short

FOREST_FIELDS = ["label", "agent", "skill", "name", "x", "lo", "hi", "mean", "ci_low", "ci_high", "n", "empirical",
                 "marker", "basis"]


def forest_data(rows: pd.DataFrame) -> pd.DataFrame:
    """`forest_rows` with a unique row label per skill and the tooltip's fields as shown."""
    names = dict(zip(rows["skill"], rows["name"].map(lambda v: short(str(v), 48))))
    clash = pd.Series(list(names.values())).duplicated(keep=False).to_numpy()
    label = {k: (f"{v} ({k})" if dup else v) for (k, v), dup in zip(names.items(), clash)}
    emp = rows["empirical_rate"].astype(float)
    return rows.assign(
        label=rows["skill"].map(label),
        empirical=[("unseen" if u else f"{e:.3f}") for e, u in zip(emp, rows["unseen"])],
        marker=rows["unseen"].map({True: "no evidence", False: "evidence"}),
    )[FOREST_FIELDS].reset_index(drop=True)


def forest_spec(rows: pd.DataFrame, agents: list[str], level: float, score: str = MEAN) -> dict[str, Any]:
    """One row per skill (in `rows` order), one point per agent side by side, with its credible interval as a
    line in mean mode; a cross marks a cell without evidence in empirical mode (the reference code's 0)."""
    labels = list(dict.fromkeys(forest_data(rows)["label"])) if len(rows) else []
    colors = agent_colors(agents)
    what = f"posterior mean with {level:.0%} credible interval" if score == MEAN else SCORES[score]
    x = {"field": "x", "type": "quantitative", "title": what, "scale": {"domain": [0, 1]}}
    tooltip = [{"field": "agent"}, {"field": "name", "title": "skill"}, {"field": "skill", "title": "key"},
               {"field": "mean", "format": ".3f"}, {"field": "ci_low", "format": ".3f"},
               {"field": "ci_high", "format": ".3f"}, {"field": "n", "format": ".1f"}, {"field": "empirical"},
               {"field": "basis"}]
    point = {"mark": {"type": "point", "filled": True, "size": 55},
             "encoding": {"x": x, "shape": {"field": "marker", "type": "nominal", "legend": None,
                                            "scale": {"domain": ["evidence", "no evidence"],
                                                      "range": ["circle", "cross" if score != MEAN else "circle"]}}}}
    layers = [point]
    if score == MEAN:
        layers.insert(0, {"mark": {"type": "rule", "strokeWidth": 1.5},
                          "encoding": {"x": {**x, "field": "lo"}, "x2": {"field": "hi"}}})
    return {
        "height": {"step": max(18, 8 * len(agents)), "for": "position"},  # one band per skill
        "encoding": {
            "y": {"field": "label", "type": "nominal", "sort": labels, "title": None, "axis": {"labelLimit": 360}},
            "yOffset": {"field": "agent", "type": "nominal", "sort": agents},
            "color": {"field": "agent", "type": "nominal", "title": None,
                      "scale": {"domain": agents, "range": [colors[a] for a in agents]},
                      "legend": {"orient": "top", "labelLimit": 240}},
            "tooltip": tooltip,
        },
        "layer": layers,
    }
