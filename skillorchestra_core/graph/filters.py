"""Views of the full graph: by mode, skill subtree, agent, minimum evidence, top-k agents per skill, search, and
collapsed subtrees, so a 1,000-skill handbook shows a readable slice instead of a hairball."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from skillorchestra_core.graph.build import (
    AGENT,
    MODE,
    SKILL,
    TREE,
    ancestors,
    competence_frame,
    edge_records,
    mode_id,
    skill_id,
    skill_subtree,
)

# Above this many skills the default view collapses to the top levels.
AUTO_COLLAPSE_SKILLS = 120


@dataclass(frozen=True)
class GraphFilter:
    modes: tuple[str, ...] = ()  # empty: every mode
    skill_root: str | None = None  # a skill key: show only its subtree (and the path to it)
    agents: tuple[str, ...] = ()  # empty: every agent
    min_evidence: float = 0.0  # hide competence edges with less evidence weight n
    top_k: int | None = None  # keep the k agents with the highest posterior mean per skill
    depth: int | None = None  # deepest skill level shown below the root (0: top level only); None: all
    expanded: tuple[str, ...] = ()  # skill keys whose children are shown beyond `depth`
    search: str = ""  # case-insensitive text in a skill's key, name or description, or an agent's name
    edges_from: str = "leaves"  # "leaves": competence edges only from shown skills with no shown child; "all"
    max_skills: int = 400


# Above this many competence edges the default view keeps the best agents per skill (and says so).
AUTO_THIN_EDGES = 1500


@dataclass
class GraphView:
    graph: nx.DiGraph
    total_skills: int
    shown_skills: int
    truncated: bool
    matches: list[str] = field(default_factory=list)
    edges_shown: int = 0
    edges_hidden_top_k: int = 0  # competence edges of the shown skills left out by top-k
    edges_hidden_min_n: int = 0  # ... left out by the minimum evidence
    agents_without_edges: list[str] = field(default_factory=list)  # agents drawn with no competence edge

    def hidden_note(self, f: "GraphFilter") -> str:
        """What the edge filters hide, in one sentence ("" when nothing is hidden)."""
        parts = []
        if self.edges_hidden_top_k:
            parts.append(f"{self.edges_hidden_top_k} below the top {f.top_k} agents per skill")
        if self.edges_hidden_min_n:
            parts.append(f"{self.edges_hidden_min_n} with evidence n < {f.min_evidence:g}")
        if not parts:
            return ""
        total = self.edges_shown + self.edges_hidden_top_k + self.edges_hidden_min_n
        note = f"Hiding {total - self.edges_shown} of {total} competence edges: " + "; ".join(parts) + "."
        if self.agents_without_edges:
            note += " No edge drawn for " + ", ".join(self.agents_without_edges) + "."
        return note


def default_depth(g: nx.DiGraph, budget: int = AUTO_COLLAPSE_SKILLS) -> int | None:
    """Small handbooks show whole; big ones collapse to the deepest level that keeps at most `budget` skills."""
    depths = sorted(d["depth"] for _, d in g.nodes(data=True) if d["kind"] == SKILL)
    if len(depths) <= budget:
        return None
    level = 0
    while sum(1 for x in depths if x <= level + 1) <= budget:
        level += 1
    return level


def _matches(g: nx.DiGraph, text: str) -> list[str]:
    q = text.strip().lower()
    if not q:
        return []
    out = []
    for node, d in g.nodes(data=True):
        hay = [d.get("label", "")]
        if d["kind"] == SKILL:
            hay += [d.get("key", ""), d.get("description", "")]
        if d["kind"] != MODE and any(q in str(h).lower() for h in hay):
            out.append(node)
    return sorted(out)


def _candidate_skills(g: nx.DiGraph, f: GraphFilter) -> tuple[set[str], set[str], int]:
    """(skills in scope, nodes forced visible as context, base depth of the scope)."""
    skills = {n for n, d in g.nodes(data=True) if d["kind"] == SKILL and (not f.modes or d["mode"] in f.modes)}
    context: set[str] = set()
    base = 0
    if f.skill_root and skill_id(f.skill_root) in g:
        root = skill_id(f.skill_root)
        skills &= skill_subtree(g, root)
        context |= {a for a in ancestors(g, root) if g.nodes[a]["kind"] == SKILL} | {root}
        base = g.nodes[root]["depth"]
    return skills, context, base


def _visible_skills(g: nx.DiGraph, skills: set[str], forced: set[str], base: int, f: GraphFilter) -> set[str]:
    if f.depth is None:
        return set(skills) | forced
    expanded = {skill_id(k) for k in f.expanded}
    visible = set(forced)
    for node in sorted(skills, key=lambda n: (g.nodes[n]["depth"], n)):
        d = g.nodes[node]
        parent = d["parent"]
        if d["depth"] - base <= f.depth or (parent in visible and parent in expanded):
            visible.add(node)
    return visible


def default_top_k(g: nx.DiGraph) -> int | None:
    """Every agent's edges by default; a graph with more than AUTO_THIN_EDGES competence edges starts thinned."""
    return 3 if len(competence_frame(g)) > AUTO_THIN_EDGES else None


def _chosen_edges(g: nx.DiGraph, skills: set[str], agents: set[str], f: GraphFilter):
    """(edges to draw, hidden by min n, hidden by top-k). A parent's posterior summarises its subtree, so by
    default only the shown leaves (skills whose children are all hidden) get edges: no doubled lines. Chosen on
    the competence frame in whole columns (the full graph may hold 100k posteriors)."""
    if f.edges_from == "leaves":
        skills = {n for n in skills
                  if not any(d["kind"] == TREE and v in skills for _, v, d in g.out_edges(n, data=True))}
    frame = competence_frame(g)
    rows = frame[frame["s_id"].isin(skills) & frame["a_id"].isin(agents)]
    kept = rows[rows["n"] >= f.min_evidence]
    by_n = len(rows) - len(kept)
    kept = kept.sort_values(["s_id", "mean", "n", "a_id"], ascending=[True, False, False, True], kind="stable")
    by_k = 0
    if f.top_k:
        best = kept.groupby("s_id", sort=False).head(f.top_k)
        by_k, kept = len(kept) - len(best), best
    return list(edge_records(kept)), by_n, by_k


def apply_filter(g: nx.DiGraph, f: GraphFilter = GraphFilter()) -> GraphView:
    """The sub-graph to draw. Skill nodes get `hidden_children` (descendants collapsed away) and every node
    `match` (the search hits it)."""
    scope, context, base = _candidate_skills(g, f)
    matches = _matches(g, f.search)
    forced = set(context)
    if f.search.strip():
        hits = {m for m in matches if m in scope}
        scope = hits | {a for m in hits for a in ancestors(g, m) if g.nodes[a]["kind"] == SKILL} | context
        forced |= scope
    visible = _visible_skills(g, scope, forced, base, f)
    ordered = sorted(visible, key=lambda n: (g.nodes[n]["depth"], n))
    truncated = len(ordered) > f.max_skills
    visible = set(ordered[: f.max_skills])
    modes_shown = {g.nodes[n]["mode"] for n in visible} | set(f.modes)
    agents = {n for n, d in g.nodes(data=True) if d["kind"] == AGENT
              and (not f.agents or d["label"] in f.agents) and (not f.modes or set(d["modes"]) & set(f.modes))}
    edges, hidden_n, hidden_k = _chosen_edges(g, visible, agents, f)
    shown_agents = agents  # every agent in scope, also one no top-k edge reaches (that is informative too)

    view = nx.DiGraph()
    hit = set(matches)
    for m in sorted(modes_shown):
        if mode_id(m) in g:
            view.add_node(mode_id(m), **g.nodes[mode_id(m)], match=False)
    collapsed = scope - visible if f.depth is not None or truncated else set()
    for node in sorted(visible):
        hidden = len(skill_subtree(g, node) & collapsed) if collapsed else 0
        view.add_node(node, **g.nodes[node], hidden_children=hidden, match=node in hit)
    for node in sorted(shown_agents):
        view.add_node(node, **g.nodes[node], match=node in hit)
    for u, v, d in g.edges(data=True):
        if d["kind"] == TREE and u in view and v in view:
            view.add_edge(u, v, **d)
    for u, v, d in edges:
        view.add_edge(u, v, **d)
    total = sum(1 for _, d in g.nodes(data=True) if d["kind"] == SKILL and (not f.modes or d["mode"] in f.modes))
    bare = sorted(g.nodes[a]["label"] for a in shown_agents if not any(v == a for _, v, _ in edges))
    return GraphView(view, total, len(visible), truncated, [m for m in matches if m in view], len(edges),
                     hidden_k, hidden_n, bare)
