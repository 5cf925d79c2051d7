"""DOT (graphviz) of a graph view, for `st.graphviz_chart` or `dot -Tsvg`: a left-to-right hierarchy.

Every label and tooltip is HTML-escaped (graphviz decodes character entities in quoted strings, so `&lt;` shows as
`<`) and then DOT-quoted, so a name can neither break the DOT syntax nor inject markup into the SVG.
"""

from __future__ import annotations

import networkx as nx

from skillorchestra_core.graph.build import COMPETENCE, MODE, SKILL, TREE
from skillorchestra_core.graph.text import KIND_STYLE, edge_tooltip, esc, mean_bin, node_label, node_tooltip_lines

SHAPES = {MODE: "box", SKILL: "ellipse", "agent": "diamond"}


def quote(text: object) -> str:
    """A DOT double-quoted string of HTML-escaped text."""
    s = esc(text).replace("\\", "\\\\").replace("\n", " ").replace("\r", " ")
    return f'"{s}"'


INKS = {"light": "#31333f", "dark": "#fafafa"}


def dot_source(g: nx.DiGraph, selected: str | None = None, edge_labels: bool = True, theme: str = "light") -> str:
    """DOT with a transparent background and theme-coloured edge labels (node labels sit on white fills)."""
    ink = INKS.get(theme, INKS["light"])
    lines = ["digraph handbook {", "  rankdir=LR;",
             '  graph [fontname=Helvetica, ranksep=1.2, nodesep=0.15, bgcolor="transparent"];',
             '  node [fontname=Helvetica, fontsize=10, style=filled, fillcolor="#ffffff", fontcolor="#31333f"];',
             f'  edge [fontname=Helvetica, fontsize=8, fontcolor="{ink}"];']
    ids = {node: f"n{i}" for i, node in enumerate(sorted(g.nodes))}
    for node in sorted(g.nodes):
        d = g.nodes[node]
        color = KIND_STYLE[d["kind"]]["color"]
        pen = "3" if node == selected or d.get("match") else "1"
        lines.append(f"  {ids[node]} [label={quote(node_label(d))}, "
                     f"tooltip={quote(' | '.join(node_tooltip_lines(g, node)))}, shape={SHAPES[d['kind']]}, "
                     f'color="{color}", penwidth={pen}];')
    for u, v, d in sorted(g.edges(data=True), key=lambda e: (e[0], e[1])):
        if d["kind"] == TREE:
            lines.append(f'  {ids[u]} -> {ids[v]} [color="#b9b9b9", arrowhead=none];')
        elif d["kind"] == COMPETENCE:
            _, _, color, width = mean_bin(d["mean"])
            mean = f"{d['mean']:.2f}"
            label = f", label={quote(mean)}" if edge_labels else ""
            lines.append(f'  {ids[u]} -> {ids[v]} [color="{color}", penwidth={width:.1f}, '
                         f"tooltip={quote(edge_tooltip(g, u, v))}{label}];")
    lines.append("}")
    return "\n".join(lines)
