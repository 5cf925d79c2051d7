"""pyvis HTML of a graph view: the "explore" view with physics, fully offline.

vis-network comes either from the app's static folder (`/app/static/vis-network.min.js`, served by Streamlit with
`server.enableStaticServing`; about 20 KB of HTML per render) or in-line (about 700 KB, works anywhere). Every CDN tag
pyvis writes is removed. Labels are drawn on a canvas and tooltips set with `innerText` by vis-network, and pyvis
embeds the data with Jinja's `tojson` (which escapes `<`, `>`, `&`, `'`), so markup in a name stays text. The one
pyvis path that puts tooltips into `innerHTML` (any tooltip containing "href") gets HTML-escaped tooltips instead.
"""

from __future__ import annotations

import json
import re
from typing import Literal

import networkx as nx
from pyvis.network import Network

from skillorchestra_core.graph.build import AGENT, COMPETENCE, MODE, SKILL, TREE
from skillorchestra_core.graph.layout import layered_layout
from skillorchestra_core.graph.text import KIND_STYLE, edge_tooltip, esc, mean_bin, node_label, node_tooltip_lines

CDN_TAG = re.compile(
    r"<(link|script)\b[^>]*(?:cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com|unpkg\.com)[^>]*>(\s*</script>)?", re.S)
REMOTE_REF = re.compile(r"""(?:src|href)\s*=\s*["']https?://""", re.I)
STATIC_PREFIX = "/app/static"
SHAPES = {MODE: "box", SKILL: "dot", AGENT: "diamond"}
OPTIONS = {
    "physics": {"enabled": True, "solver": "forceAtlas2Based",
                "forceAtlas2Based": {"gravitationalConstant": -60, "centralGravity": 0.015, "springLength": 110,
                                     "springConstant": 0.06, "avoidOverlap": 0.4},
                "stabilization": {"enabled": True, "iterations": 300, "fit": True}},
    "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False, "multiselect": False},
    "edges": {"smooth": False, "arrows": {"to": {"enabled": False}}},
    "nodes": {"font": {"size": 14, "face": "sans-serif"}},
}


BACKGROUNDS = {"light": ("#ffffff", "#31333f"), "dark": ("#0e1117", "#fafafa")}  # (canvas, label ink)


def _network(g: nx.DiGraph, height: str, theme: str = "light") -> Network:
    bg, ink = BACKGROUNDS.get(theme, BACKGROUNDS["light"])
    net = Network(height=height, width="100%", directed=False, cdn_resources="remote", bgcolor=bg, font_color=ink)
    pos = layered_layout(g)
    tooltips = {n: "\n".join(node_tooltip_lines(g, n)) for n in g.nodes}
    edge_tips = {(u, v): edge_tooltip(g, u, v) for u, v, d in g.edges(data=True) if d["kind"] == COMPETENCE}
    # pyvis switches to an innerHTML popup when any tooltip contains "href": then every tooltip must be escaped.
    as_html = any("href" in t for t in list(tooltips.values()) + list(edge_tips.values()))

    def tip(text: str) -> str:
        return esc(text).replace("\n", "<br>") if as_html else text

    for node, d in g.nodes(data=True):
        style = KIND_STYLE[d["kind"]]
        x, y = pos.get(node, (0.0, 0.0))
        net.add_node(node, label=node_label(d), title=tip(tooltips[node]), shape=SHAPES[d["kind"]],
                     color=style["color"], size=style["size"], x=x * 260, y=-y * 45,
                     borderWidth=3 if d.get("match") else 1)
    for u, v, d in g.edges(data=True):
        if d["kind"] == TREE:
            net.add_edge(u, v, color="#b9b9b9", width=1)
        else:
            _, _, color, width = mean_bin(d["mean"])
            net.add_edge(u, v, color=color, width=width, title=tip(edge_tips[(u, v)]))
    net.set_options(json.dumps(OPTIONS))
    return net


def pyvis_html(g: nx.DiGraph, height: str = "640px", assets: Literal["static", "inline"] = "static",
               static_prefix: str = STATIC_PREFIX, theme: str = "light") -> str:
    """Self-contained HTML for `st.iframe`. With assets="static" the page loads vis-network from the app."""
    if assets not in ("static", "inline"):
        raise ValueError(f"assets must be 'static' or 'inline', got {assets!r}")
    net = _network(g, height, theme)
    if assets == "inline":
        net.cdn_resources = "in_line"
    html = CDN_TAG.sub("", net.generate_html())
    if assets == "static":
        tags = (f'<link rel="stylesheet" href="{esc(static_prefix)}/vis-network.css">'
                f'<script src="{esc(static_prefix)}/vis-network.min.js"></script>')
        html = html.replace("<head>", "<head>" + tags, 1)
    if REMOTE_REF.search(html):
        raise RuntimeError("pyvis output still references a remote resource")
    return html
