"""The Graph page's clickable view as a Vega-Lite spec (Streamlit's Vega-Lite chunk draws in a fraction of the time
of its 4.7 MB Plotly script, which alone put the page over its draw budget).

Layers, bottom to top: "tree" (mode/skill hierarchy rules), "competence" (skill -> agent rules, coloured on one
continuous posterior-mean scale whose gradient legend is the chart's legend), "edge_info" (faint points at 70% of
each competence edge carrying its tooltip), "halo_left"/"halo_right" (each label drawn thick in the theme's background
colour, so edges behind a label never make it unreadable), "labels_left"/"labels_right", "ring" (the selected node),
then "nodes" (modes, skills, agents; the point selection NODE_PARAM on field "id").

Escaping: every name goes in as data. Vega draws labels as SVG text and its tooltip handler escapes values and row
names; nothing from the data reaches an expression, a field name, a URL or the "image" tooltip row.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import pandas as pd

from skillorchestra_core.graph.build import AGENT, COMPETENCE, MODE, SKILL, TREE
from skillorchestra_core.graph.layout import Positions, layered_layout
from skillorchestra_core.graph.text import (
    EDGE_TIP_FIELDS,
    KIND_STYLE,
    MEAN_COLORSCALE,
    NODE_TIP_FIELDS,
    edge_tooltip_fields,
    node_label,
    node_tooltip_fields,
)

NODE_PARAM = "node_pick"  # the selection parameter: st.vega_lite_chart(..., selection_mode=NODE_PARAM)
NODE_LAYER = "nodes"  # Vega names its marks "<layer>_marks" (the SVG class of the node symbols)
MAX_EDGE_HOVERS = 800  # beyond this many competence edges, no edge tooltips (and no hover points)
MAX_LABEL_BACKGROUNDS = 300  # beyond this many nodes, labels without their background halo
MAX_SVG_MARKS = 6000  # beyond this many marks, draw on a canvas (SVG slows down; clicks still work)
SELECTED_RING = "#c2185b"
THEMES = {"light": {"bg": "#ffffff", "ink": "#31333f", "ring": "#111111", "tree": "#b9b9b9"},
          "dark": {"bg": "#0e1117", "ink": "#fafafa", "ring": "#fafafa", "tree": "#5c5f66"}}
SHAPES = {"square": "square", "circle": "circle", "diamond": "diamond"}
NODE_COLUMNS = ["id", "kind", "label", "x", "y", "shape", "fill", "area", "stroke", "stroke_w", "ring_area",
                "selected", "side", "aria", *NODE_TIP_FIELDS]
EDGE_COLUMNS = ["x", "y", "x2", "y2", "mean", "mx", "my", *EDGE_TIP_FIELDS]


def _diameter(kind: str, d: dict) -> float:
    if kind == SKILL:  # skill size: evidence queries
        return 10 + min(d.get("n_queries", 0), 400) ** 0.5 / 2
    return float(KIND_STYLE[kind]["size"])  # type: ignore[arg-type]  # the style table mixes str and int values


def _nodes(g: nx.DiGraph, pos: Positions, selected: str | None, colours: dict) -> pd.DataFrame:
    rows = []
    for kind in (MODE, SKILL, AGENT):  # agents drawn last: on top where they crowd
        for n, d in g.nodes(data=True):
            if d["kind"] != kind:
                continue
            size = _diameter(kind, d)
            match = bool(d.get("match"))
            label = node_label(d)
            rows.append({
                "id": n, "kind": kind, "label": label, "x": pos[n][0], "y": pos[n][1],
                "shape": SHAPES[str(KIND_STYLE[kind]["symbol"])], "fill": KIND_STYLE[kind]["color"],
                "area": size * size, "stroke": colours["ring"] if match else colours["bg"],
                "stroke_w": 3.0 if match else 0.8, "ring_area": (size + 10) ** 2, "selected": n == selected,
                # Labels: modes and skills to the left (only the thin tree line arrives there; competence edges
                # leave to the right), agents to the right, past their edges' ends.
                "side": "right" if kind == AGENT else "left", "aria": f"{kind} {label} ({n})",
                **node_tooltip_fields(g, n),
            })
    return pd.DataFrame(rows, columns=NODE_COLUMNS)


def _edges(g: nx.DiGraph, pos: Positions) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """(tree rules, competence rules weakest first so strong edges draw on top, whether edges carry tooltips)."""
    tree, comp = [], []
    n_comp = sum(1 for _, _, d in g.edges(data=True) if d["kind"] == COMPETENCE)
    tips = n_comp <= MAX_EDGE_HOVERS
    for u, v, d in g.edges(data=True):
        (x0, y0), (x1, y1) = pos[u], pos[v]
        if d["kind"] == TREE:
            tree.append({"x": x0, "y": y0, "x2": x1, "y2": y1})
        elif d["kind"] == COMPETENCE:
            row = {"x": x0, "y": y0, "x2": x1, "y2": y1, "mean": min(max(float(d["mean"]), 0.0), 1.0),
                   "mx": x0 + (x1 - x0) * 0.7, "my": y0 + (y1 - y0) * 0.7}
            comp.append({**row, **(edge_tooltip_fields(g, u, v) if tips else {})})
    comp_df = pd.DataFrame(comp, columns=EDGE_COLUMNS if tips else EDGE_COLUMNS[:7])
    return (pd.DataFrame(tree, columns=["x", "y", "x2", "y2"]),
            comp_df.sort_values("mean", kind="stable").reset_index(drop=True), tips)


def _xy(x_domain: list[float], y_domain: list[float]) -> dict[str, Any]:
    return {"x": {"field": "x", "type": "quantitative", "axis": None,
                  "scale": {"domain": x_domain, "zero": False, "nice": False}},
            "y": {"field": "y", "type": "quantitative", "axis": None,
                  "scale": {"domain": y_domain, "zero": False, "nice": False}}}


def _labels(side: str, colours: dict, halo: bool, xy: dict[str, Any]) -> dict[str, Any]:
    mark: dict[str, Any] = {"type": "text", "align": "left" if side == "right" else "right",
                            "dx": 12 if side == "right" else -13, "fontSize": 11, "tooltip": None, "aria": False,
                            "fill": colours["bg"] if halo else colours["ink"]}
    if halo:
        mark.update(stroke=colours["bg"], strokeWidth=4, strokeJoin="round", strokeOpacity=0.9)
    return {"name": f"{'halo' if halo else 'labels'}_{side}", "data": {"name": "nodes"}, "mark": mark,
            "transform": [{"filter": f"datum.side === '{side}'"}], "encoding": {**xy, "text": {"field": "label"}}}


def _tooltip(fields: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"field": f, "type": "nominal", "title": f} for f in fields]


def vega_spec(g: nx.DiGraph, selected: str | None = None, pos: Positions | None = None,
              title: str | None = None, theme: str = "light") -> dict[str, Any]:
    """The spec (its data in "datasets", as DataFrames) for `st.vega_lite_chart(spec, on_select="rerun",
    selection_mode=NODE_PARAM)`; `theme` is the Streamlit theme type ("light" or "dark")."""
    # Columns 2 units apart leave room for a skill's label between its node and its parent's column.
    pos = pos or {n: (2.0 * x, y) for n, (x, y) in layered_layout(g).items()}
    colours = THEMES.get(theme, THEMES["light"])
    nodes = _nodes(g, pos, selected if selected in g else None, colours)
    tree, comp, edge_tips = _edges(g, pos)
    xs = [p[0] for p in pos.values()] or [0.0]
    ys = [p[1] for p in pos.values()] or [0.0]
    xy = _xy([min(xs) - 1.6, max(xs) + 2.6], [min(ys) - 0.6, max(ys) + 0.6])
    rule_xy = {**xy, "x2": {"field": "x2"}, "y2": {"field": "y2"}}
    lo, mid, hi = (c for _, c in MEAN_COLORSCALE)
    colour = {"field": "mean", "type": "quantitative", "title": "posterior mean",
              "scale": {"domain": [0, 0.5, 1], "range": [lo, mid, hi], "interpolate": "rgb"},
              "legend": {"orient": "top", "direction": "horizontal", "gradientLength": 180, "format": ".2~f",
                         "values": [0, 0.25, 0.5, 0.75, 1]}}
    layers: list[dict[str, Any]] = [
        {"name": "tree", "data": {"name": "tree"}, "encoding": rule_xy,
         "mark": {"type": "rule", "color": colours["tree"], "strokeWidth": 1, "tooltip": None, "aria": False},
         # Pan by dragging, zoom with shift + wheel (a plain wheel still scrolls the page).
         "params": [{"name": "zoom", "select": {"type": "interval", "zoom": "wheel![event.shiftKey]"},
                     "bind": "scales"}]},
        {"name": "competence", "data": {"name": "competence"}, "mark": {"type": "rule", "aria": False},
         "encoding": {**rule_xy, "color": colour,
                      "strokeWidth": {"field": "mean", "type": "quantitative", "legend": None,
                                      "scale": {"domain": [0, 1], "range": [1.0, 3.4]}},
                      **({"tooltip": _tooltip(EDGE_TIP_FIELDS)} if edge_tips else {})}},
    ]
    if edge_tips:
        layers.append({"name": "edge_info", "data": {"name": "competence"},
                       "mark": {"type": "point", "filled": True, "size": 40, "opacity": 0.04, "aria": False,
                                "color": colours["ink"]},
                       "encoding": {"x": {**xy["x"], "field": "mx"}, "y": {**xy["y"], "field": "my"},
                                    "tooltip": _tooltip(EDGE_TIP_FIELDS)}})
    halo = len(nodes) <= MAX_LABEL_BACKGROUNDS
    layers += [_labels(side, colours, True, xy) for side in ("left", "right") if halo]
    layers += [_labels(side, colours, False, xy) for side in ("left", "right")]
    layers.append({"name": "ring", "data": {"name": "nodes"}, "transform": [{"filter": "datum.selected"}],
                   "mark": {"type": "point", "shape": "circle", "filled": False, "stroke": SELECTED_RING,
                            "strokeWidth": 3, "tooltip": None, "aria": False},
                   "encoding": {**xy, "size": {"field": "ring_area", "type": "quantitative", "scale": None}}})
    layers.append({
        "name": NODE_LAYER, "data": {"name": "nodes"},
        "mark": {"type": "point", "filled": True, "opacity": 1, "cursor": "pointer"},
        "params": [{"name": NODE_PARAM, "select": {"type": "point", "fields": ["id"], "on": "click"}}],
        "encoding": {**xy,
                     "shape": {"field": "shape", "type": "nominal", "scale": None},
                     "fill": {"field": "fill", "type": "nominal", "scale": None},
                     "size": {"field": "area", "type": "quantitative", "scale": None},
                     "stroke": {"field": "stroke", "type": "nominal", "scale": None},
                     "strokeWidth": {"field": "stroke_w", "type": "quantitative", "scale": None},
                     "description": {"field": "aria"},  # each symbol's aria-label: kind, name and id
                     "tooltip": _tooltip(NODE_TIP_FIELDS)},
    })
    rows = int((nodes["kind"] == SKILL).sum())
    marks = len(tree) + len(comp) * (2 if edge_tips else 1) + len(nodes) * (5 if halo else 3)
    spec: dict[str, Any] = {
        "height": int(min(max(480, 34 * rows + 140), 4000)),
        "datasets": {"nodes": nodes, "tree": tree, "competence": comp},
        "layer": layers,
        "config": {"view": {"stroke": None}},
        "usermeta": {"embedOptions": {"renderer": "svg" if marks <= MAX_SVG_MARKS else "canvas"}},
    }
    if title:
        spec["title"] = title  # drawn as text: no escaping
    return spec
