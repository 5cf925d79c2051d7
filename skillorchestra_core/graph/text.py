"""Escaped labels and tooltips for graph renderers: whatever a skill or agent is called, it shows as text."""

from __future__ import annotations

import networkx as nx

from skillorchestra_core import display_text
from skillorchestra_core.graph.build import AGENT, COMPETENCE, MODE, SKILL


def esc(text: object) -> str:
    """HTML-escape any value (quotes too), for Plotly text, DOT labels and HTML."""
    return display_text.html_escape(text)


def short(text: object, limit: int = 40) -> str:
    raw = "" if text is None else str(text)
    return raw if len(raw) <= limit else raw[: limit - 1] + "…"


def fmt_interval(d: dict) -> str:
    return f"{d['mean']:.2f} [{d['ci_low']:.2f}, {d['ci_high']:.2f}]"


def node_label(d: dict) -> str:
    """Raw (unescaped) display label; collapsed skills show how many descendants they hide."""
    label = short(d.get("label", ""))
    hidden = d.get("hidden_children") or 0
    return f"{label} (+{hidden})" if hidden else label


def node_tooltip_lines(g: nx.DiGraph, node: str) -> list[str]:
    """Raw tooltip lines; renderers escape them."""
    d = g.nodes[node]
    kind = d["kind"]
    if kind == MODE:
        return [f"mode {d['label']}", f"{d.get('n_skills', 0)} skills", short(d.get("description", ""), 120)]
    if kind == SKILL:
        lines = [f"skill {d['key']} ({d['mode']})", f"name: {short(d['label'], 80)}",
                 f"evidence queries: {d.get('n_queries', 0)}"]
        if d.get("hidden_children"):
            lines.append(f"{d['hidden_children']} sub-skills collapsed")
        if d.get("description"):
            lines.append(short(d["description"], 120))
        best = sorted(((v, e) for _, v, e in g.out_edges(node, data=True) if e.get("kind") == COMPETENCE),
                      key=lambda ve: -ve[1]["mean"])[:3]
        lines += [f"{g.nodes[v]['label']}: {fmt_interval(e)} n={e['n']:.0f}" for v, e in best]
        return [ln for ln in lines if ln]
    if kind == AGENT:
        lines = [f"agent {d['label']}", f"model: {d.get('model', '')}", f"modes: {', '.join(d.get('modes', ()))}"]
        n_edges = sum(1 for _, _, e in g.in_edges(node, data=True) if e.get("kind") == COMPETENCE)
        return lines + [f"{n_edges} skills shown"]
    return [str(node)]


def edge_tooltip(g: nx.DiGraph, u: str, v: str) -> str:
    """Raw tooltip of a competence edge."""
    e = g.edges[u, v]
    emp = "unseen" if e.get("empirical_rate") is None else f"{e['empirical_rate']:.2f}"
    return (f"{g.nodes[v]['label']} on {g.nodes[u]['label']}: mean {fmt_interval(e)}, n={e['n']:.1f}, "
            f"empirical {emp}, basis {e.get('basis', '')}")


# Row names of a node's and an edge's tooltip table (raw text: the Vega-Lite tooltip escapes it). "title" is the
# table's heading; never use "image", which the tooltip would load as an image URL.
NODE_TIP_FIELDS = ("title", "node", "facts", "about", "best agents")
EDGE_TIP_FIELDS = ("title", "posterior mean", "n", "empirical", "basis")


def node_tooltip_fields(g: nx.DiGraph, node: str) -> dict[str, str]:
    """One raw value per NODE_TIP_FIELDS ("–" where a kind has nothing to say): one set of rows for every kind,
    because a chart layer has one tooltip definition."""
    d = g.nodes[node]
    kind = d["kind"]
    out = {"title": f"{kind} {short(d.get('label', ''), 80)}", "node": str(node)}
    if kind == MODE:
        out["facts"] = f"{d.get('n_skills', 0)} skills"
    elif kind == SKILL:
        hidden = d.get("hidden_children") or 0
        out["facts"] = f"mode {d['mode']} · {d.get('n_queries', 0)} evidence queries" + (
            f" · {hidden} sub-skills collapsed" if hidden else "")
        best = sorted(((v, e) for _, v, e in g.out_edges(node, data=True) if e.get("kind") == COMPETENCE),
                      key=lambda ve: -ve[1]["mean"])[:3]
        out["best agents"] = "; ".join(f"{g.nodes[v]['label']}: {fmt_interval(e)} n={e['n']:.0f}" for v, e in best)
    elif kind == AGENT:
        n_edges = sum(1 for _, _, e in g.in_edges(node, data=True) if e.get("kind") == COMPETENCE)
        out["facts"] = (f"model {d.get('model', '') or '(none)'} · modes {', '.join(d.get('modes', ()))} · "
                        f"{n_edges} skills shown")
    out["about"] = short(d.get("description", ""), 160)
    return {k: (out.get(k) or "–") for k in NODE_TIP_FIELDS}


def edge_tooltip_fields(g: nx.DiGraph, u: str, v: str) -> dict[str, str]:
    """One raw value per EDGE_TIP_FIELDS for the competence edge u -> v."""
    e = g.edges[u, v]
    return {"title": f"{g.nodes[v]['label']} on {g.nodes[u]['label']}", "posterior mean": fmt_interval(e),
            "n": f"{e['n']:.1f}", "empirical": "unseen" if e.get("empirical_rate") is None else
            f"{e['empirical_rate']:.2f}", "basis": str(e.get("basis", "") or "–")}


KIND_STYLE = {
    MODE: {"color": "#3b6ea5", "symbol": "square", "size": 22},
    SKILL: {"color": "#e8a33d", "symbol": "circle", "size": 13},
    AGENT: {"color": "#4c9a6a", "symbol": "diamond", "size": 17},
}

# Competence edges: a continuous colour scale of the posterior mean (red = weak, blue = strong; readable on a light
# and a dark background). The Vega-Lite view interpolates it continuously; DOT and pyvis edges take the colour of
# their bin (10 bins of width 0.1).
MEAN_COLORSCALE = [[0.0, "#d62728"], [0.5, "#f28e2b"], [1.0, "#1f6fb4"]]  # no near-white stop
EDGE_BIN_COUNT = 10


def mean_color(mean: float) -> str:
    """The colour of `mean` (clipped to [0, 1]) on MEAN_COLORSCALE, as "rgb(r, g, b)"."""
    from plotly.colors import sample_colorscale  # noqa: PLC0415

    return sample_colorscale(MEAN_COLORSCALE, [min(max(float(mean), 0.0), 1.0)])[0]


def _bins() -> list[tuple[float, float, str, float]]:
    out = []
    for i in range(EDGE_BIN_COUNT):
        lo, hi = i / EDGE_BIN_COUNT, (i + 1) / EDGE_BIN_COUNT
        out.append((lo, hi + (1e-4 if i == EDGE_BIN_COUNT - 1 else 0.0), mean_color((lo + hi) / 2),
                    1.0 + 2.4 * (lo + hi) / 2))
    return out


MEAN_BINS = _bins()


def mean_bin(mean: float) -> tuple[float, float, str, float]:
    """(low, high, colour, width) of the bin holding `mean`."""
    i = min(max(int(float(mean) * EDGE_BIN_COUNT), 0), EDGE_BIN_COUNT - 1)
    return MEAN_BINS[i]


def md_escape(text: object) -> str:
    """Markdown that renders as the plain text of `text` (see display_text.md_escape)."""
    return display_text.md_escape(text)
