"""Plotly figure of a graph view: clickable nodes (their id in `customdata`), escaped labels and tooltips.

Traces (by name): "tree" (mode/skill hierarchy lines), one "mean a-b" trace per competence bin (colours sampled
from one continuous scale), "edge info" (invisible midpoints carrying edge tooltips), "posterior mean" (the colour
bar: the legend of the scale), then "modes", "skills", "agents" (the clickable nodes). Labels are annotations on a
background of the theme's colour, so edges running behind them never make them unreadable.
"""

from __future__ import annotations

import networkx as nx
import plotly.graph_objects as go

from skillorchestra_core.graph.build import AGENT, COMPETENCE, MODE, SKILL, TREE
from skillorchestra_core.graph.layout import Positions, layered_layout
from skillorchestra_core.graph.text import (
    KIND_STYLE,
    MEAN_BINS,
    MEAN_COLORSCALE,
    edge_tooltip,
    esc,
    mean_bin,
    node_label,
    node_tooltip_html,
)

NODE_TRACES = {MODE: "modes", SKILL: "skills", AGENT: "agents"}
MAX_EDGE_HOVERS = 800
MAX_LABEL_ANNOTATIONS = 300  # beyond this, plain trace text (annotations get slow to draw)
THEMES = {"light": {"bg": "rgba(255,255,255,0.85)", "ink": "#31333f", "ring": "#111111", "tree": "#b9b9b9"},
          "dark": {"bg": "rgba(14,17,23,0.85)", "ink": "#fafafa", "ring": "#fafafa", "tree": "#5c5f66"}}


def _line_trace(xs: list, ys: list, name: str, color: str, width: float, legend: bool) -> go.Scatter:
    return go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip", showlegend=legend,
                      line={"color": color, "width": width})


def _edge_traces(g: nx.DiGraph, pos: Positions, tree_color: str) -> list[go.Scatter]:
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
    traces = [_line_trace(tree_x, tree_y, "tree", tree_color, 1.0, legend=False)]
    for lo, hi, color, width in MEAN_BINS:
        xs, ys = bins.get((lo, hi, color, width), ([], []))
        traces.append(_line_trace(xs, ys, f"mean {lo:.1f}-{min(hi, 1.0):.1f}", color, width, legend=False))
    if len(mid_x) <= MAX_EDGE_HOVERS:
        traces.append(go.Scatter(x=mid_x, y=mid_y, mode="markers", name="edge info", showlegend=False,
                                 marker={"size": 6, "color": "rgba(0,0,0,0.04)"}, customdata=mid_ids,
                                 hovertext=mid_text, hoverinfo="text"))
    return traces


def _colour_bar() -> go.Scatter:
    """An invisible point whose colour bar is the legend of the edge colour scale."""
    return go.Scatter(x=[None], y=[None], mode="markers", name="posterior mean", showlegend=False, hoverinfo="skip",
                      marker={"color": [0.0], "cmin": 0.0, "cmax": 1.0, "colorscale": MEAN_COLORSCALE,
                              "showscale": True, "colorbar": {"title": {"text": "posterior<br>mean"},
                                                              "thickness": 12, "len": 0.5, "y": 0.98,
                                                              "yanchor": "top", "tickvals": [0, 0.25, 0.5, 0.75, 1]}})


def _labels(g: nx.DiGraph, pos: Positions, colours: dict) -> list[dict]:
    """One annotation per node, on a background: modes and skills to the left of their node (where only the thin
    tree line arrives; competence edges leave to the right), agents to the right (past their edges' ends)."""
    place = {MODE: ("right", -12, 0), SKILL: ("right", -9, 0), AGENT: ("left", 12, 0)}
    out = []
    for n, d in g.nodes(data=True):
        anchor, dx, dy = place[d["kind"]]
        out.append({"x": pos[n][0], "y": pos[n][1], "text": esc(node_label(d)), "showarrow": False,
                    "xanchor": anchor, "xshift": dx, "yshift": dy, "bgcolor": colours["bg"], "borderpad": 1,
                    "font": {"size": 11, "color": colours["ink"]}})
    return out


def _node_trace(g: nx.DiGraph, pos: Positions, kind: str, selected: str | None, colours: dict,
                text_labels: bool) -> go.Scatter:
    nodes = [n for n, d in g.nodes(data=True) if d["kind"] == kind]
    style = KIND_STYLE[kind]
    sizes, widths, colors = [], [], []
    for n in nodes:
        d = g.nodes[n]
        size: float = style["size"]  # type: ignore[assignment]  # the style table mixes str and int values
        if kind == SKILL:
            size = 10 + min(d.get("n_queries", 0), 400) ** 0.5 / 2
        sizes.append(size + (6 if n == selected else 0))
        widths.append(3 if n == selected or d.get("match") else 0.5)
        colors.append("#c2185b" if n == selected else (colours["ring"] if d.get("match") else "#ffffff"))
    position = {MODE: "middle left", SKILL: "top center", AGENT: "middle right"}[kind]
    return go.Scatter(
        x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers+text" if text_labels else "markers",
        name=NODE_TRACES[kind],
        text=[esc(node_label(g.nodes[n])) for n in nodes], textposition=position, textfont={"size": 11},
        customdata=nodes, hovertext=[node_tooltip_html(g, n) for n in nodes], hoverinfo="text",
        marker={"size": sizes, "color": style["color"], "symbol": style["symbol"],
                "line": {"width": widths, "color": colors}},
    )


def plotly_figure(g: nx.DiGraph, selected: str | None = None, pos: Positions | None = None,
                  title: str | None = None, theme: str = "light") -> go.Figure:
    """The figure for `st.plotly_chart(..., on_select="rerun", selection_mode="points")`; `theme` is the
    Streamlit theme type ("light" or "dark"), for the label backgrounds and rings."""
    # Columns 2 units apart leave room for a skill's label between its node and its parent's column.
    pos = pos or {n: (2.0 * x, y) for n, (x, y) in layered_layout(g).items()}
    colours = THEMES.get(theme, THEMES["light"])
    text_labels = g.number_of_nodes() > MAX_LABEL_ANNOTATIONS
    traces = _edge_traces(g, pos, colours["tree"]) + [_colour_bar()] + [
        _node_trace(g, pos, kind, selected, colours, text_labels) for kind in (MODE, SKILL, AGENT)]
    fig = go.Figure(traces)
    if not text_labels:
        fig.update_layout(annotations=_labels(g, pos, colours))
    rows = sum(1 for _, d in g.nodes(data=True) if d["kind"] == SKILL)
    xs = [p[0] for p in pos.values()] or [0.0]
    fig.update_layout(
        title=esc(title) if title else None, height=int(min(max(480, 34 * rows + 140), 4000)),
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10}, clickmode="event+select",
        dragmode="pan", hovermode="closest", showlegend=False,
        xaxis={"visible": False, "range": [min(xs) - 1.6, max(xs) + 2.6]},
        yaxis={"visible": False},
    )
    return fig
