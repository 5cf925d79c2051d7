"""A deterministic layered layout: modes on the left, the skill tree in columns by depth, agents on the right.

Skills take one row each in tree order, so a subtree stays together; agents sit at the mean row of the skills they
serve (barycentre ordering), which keeps competence edges short. Pure and fast for a few hundred nodes.
"""

from __future__ import annotations

import networkx as nx

from skillorchestra_core.graph.build import AGENT, COMPETENCE, MODE, SKILL, TREE

Positions = dict[str, tuple[float, float]]


def _children(g: nx.DiGraph, node: str) -> list[str]:
    return sorted(v for _, v, d in g.out_edges(node, data=True) if d.get("kind") == TREE)


def _skill_rows(g: nx.DiGraph) -> list[str]:
    """Skills in depth-first tree order, mode by mode; orphans (parent not shown) at the end of their mode."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(node: str) -> None:
        if node in seen:
            return
        seen.add(node)
        if g.nodes[node]["kind"] == SKILL:
            order.append(node)
        for child in _children(g, node):
            visit(child)

    modes = sorted(n for n, d in g.nodes(data=True) if d["kind"] == MODE)
    for m in modes:
        visit(m)
    for n in sorted(n for n, d in g.nodes(data=True) if d["kind"] == SKILL):
        visit(n)
    return order


def layered_layout(g: nx.DiGraph, row_gap: float = 1.0) -> Positions:
    """x: 0 for modes, 1 + relative depth for skills, one column past the deepest skill for agents; y: rows."""
    pos: Positions = {}
    rows = _skill_rows(g)
    if rows:
        min_depth = min(g.nodes[n]["depth"] for n in rows)
        max_depth = max(g.nodes[n]["depth"] for n in rows) - min_depth
    else:
        min_depth, max_depth = 0, 0
    for i, node in enumerate(rows):
        pos[node] = (1.0 + g.nodes[node]["depth"] - min_depth, -i * row_gap)
    for m in (n for n, d in g.nodes(data=True) if d["kind"] == MODE):
        ys = [pos[v][1] for v in _children(g, m) if v in pos]
        pos[m] = (0.0, sum(ys) / len(ys) if ys else 0.0)
    _place_agents(g, pos, x=max_depth + 2.5 if rows else 1.0, span=max(len(rows) - 1, 0) * row_gap)
    _spread_modes(g, pos, row_gap)
    return pos


def _place_agents(g: nx.DiGraph, pos: Positions, x: float, span: float) -> None:
    agents = [n for n, d in g.nodes(data=True) if d["kind"] == AGENT]
    if not agents:
        return

    def barycentre(node: str) -> float:
        ys = [pos[u][1] for u, _, d in g.in_edges(node, data=True) if d.get("kind") == COMPETENCE and u in pos]
        return sum(ys) / len(ys) if ys else 0.0

    ordered = sorted(agents, key=lambda n: (-barycentre(n), n))
    if len(ordered) == 1:
        pos[ordered[0]] = (x, -span / 2)
        return
    step = span / (len(ordered) - 1) if span else 1.0
    for i, node in enumerate(ordered):
        pos[node] = (x, -i * step)


def _spread_modes(g: nx.DiGraph, pos: Positions, row_gap: float) -> None:
    """Keep mode nodes from sitting on top of each other."""
    modes = sorted((n for n, d in g.nodes(data=True) if d["kind"] == MODE), key=lambda n: -pos[n][1])
    last = None
    for m in modes:
        x, y = pos[m]
        if last is not None and last - y < row_gap:
            y = last - row_gap
            pos[m] = (x, y)
        last = y
