"""Plotly figure of a graph view: clickable nodes (their id in `customdata`), escaped labels and tooltips.

Traces (by name): "tree" (mode/skill hierarchy lines), one "mean a-b" trace per competence bin, "edge info"
(invisible midpoints carrying edge tooltips), then "modes", "skills", "agents" (the clickable nodes).
"""

from __future__ import annotations

import networkx as nx
import plotly.graph_objects as go

from skillorchestra_core.graph.build import AGENT, COMPETENCE, MODE, SKILL, TREE
from skillorchestra_core.graph.layout import Positions, layered_layout
from skillorchestra_core.graph.text import (
    KIND_STYLE,
    MEAN_BINS,
    edge_tooltip,
    esc,
    mean_bin,
    node_label,
    node_tooltip_html,
)

NODE_TRACES = {MODE: "modes", SKILL: "skills", AGENT: "agents"}
MAX_EDGE_HOVERS = 800


def _line_trace(xs: list, ys: list, name: str, color: str, width: float, legend: bool) -> go.Scatter:
    return go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip", showlegend=legend,
                      line={"color": color, "width": width})


def _edge_traces(g: nx.DiGraph, pos: Positions) -> list[go.Scatter]:
    tree_x, tree_y = [], []
    bins: dict[tuple, tuple[list, list]] = {}
    mid_x, mid_y, mid_text, mid_ids = [], [], [], []
    for u, v, d in g.edges(data=True):
        (x0, y0), (x1, y1) = pos[u], pos[v]
        if d["kind"] == TREE:
            tree_x += [x0, x1, None]
            tree_y += [y0, y1, None]
        elif d["kind"] == COMPETENCE:
            xs, ys = bins.setdefault(mean_bin(d["mean"]), ([], []))
            xs += [x0, x1, None]
            ys += [y0, y1, None]
            mid_x.append(x0 + (x1 - x0) * 0.7)
            mid_y.append(y0 + (y1 - y0) * 0.7)
            mid_text.append(esc(edge_tooltip(g, u, v)))
            mid_ids.append(u)
    traces = [_line_trace(tree_x, tree_y, "tree", "#b9b9b9", 1.0, legend=False)]
    for lo, hi, color, width in MEAN_BINS:
        xs, ys = bins.get((lo, hi, color, width), ([], []))
        traces.append(_line_trace(xs, ys, f"mean {lo:.1f}-{min(hi, 1.0):.1f}", color, width, legend=True))
    if len(mid_x) <= MAX_EDGE_HOVERS:
        traces.append(go.Scatter(x=mid_x, y=mid_y, mode="markers", name="edge info", showlegend=False,
                                 marker={"size": 6, "color": "rgba(0,0,0,0.04)"}, customdata=mid_ids,
                                 hovertext=mid_text, hoverinfo="text"))
    return traces


def _node_trace(g: nx.DiGraph, pos: Positions, kind: str, selected: str | None) -> go.Scatter:
    nodes = [n for n, d in g.nodes(data=True) if d["kind"] == kind]
    style = KIND_STYLE[kind]
    sizes, widths, colors = [], [], []
    for n in nodes:
        d = g.nodes[n]
        size = style["size"]
        if kind == SKILL:
            size = 10 + min(d.get("n_queries", 0), 400) ** 0.5 / 2
        sizes.append(size + (6 if n == selected else 0))
        widths.append(3 if n == selected or d.get("match") else 0.5)
        colors.append("#c2185b" if n == selected else ("#111111" if d.get("match") else "#ffffff"))
    position = {MODE: "middle left", SKILL: "top center", AGENT: "middle right"}[kind]
    return go.Scatter(
        x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers+text", name=NODE_TRACES[kind],
        text=[esc(node_label(g.nodes[n])) for n in nodes], textposition=position, textfont={"size": 11},
        customdata=nodes, hovertext=[node_tooltip_html(g, n) for n in nodes], hoverinfo="text",
        marker={"size": sizes, "color": style["color"], "symbol": style["symbol"],
                "line": {"width": widths, "color": colors}},
    )


def plotly_figure(g: nx.DiGraph, selected: str | None = None, pos: Positions | None = None,
                  title: str | None = None) -> go.Figure:
    """The figure for `st.plotly_chart(..., on_select="rerun", selection_mode="points")`."""
    pos = pos or layered_layout(g)
    traces = _edge_traces(g, pos) + [_node_trace(g, pos, kind, selected) for kind in (MODE, SKILL, AGENT)]
    fig = go.Figure(traces)
    rows = sum(1 for _, d in g.nodes(data=True) if d["kind"] == SKILL)
    xs = [p[0] for p in pos.values()] or [0.0]
    fig.update_layout(
        title=esc(title) if title else None, height=int(min(max(480, 34 * rows + 140), 4000)),
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10}, clickmode="event+select",
        dragmode="pan", hovermode="closest", plot_bgcolor="white",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0.0, "title": {"text": "posterior mean"}},
        xaxis={"visible": False, "range": [min(xs) - 1.2, max(xs) + 1.6]},
        yaxis={"visible": False},
    )
    return fig
