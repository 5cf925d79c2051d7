"""The mode-skill-agent graph of one handbook version as a networkx DiGraph.

Nodes (id -> attributes):
- ``mode:<name>``: kind="mode", label, description, n_skills
- ``skill:<key>``: kind="skill", label (the skill's name), key, mode, parent (node id or None), depth (0 = top level
  of its mode), description, n (evidence weight of the best-covered agent), n_queries
- ``agent:<name>``: kind="agent", label, modes (tuple), model

Edges: mode -> top-level skill and parent skill -> child skill (kind="tree"); skill -> agent (kind="competence") with
weight = posterior mean and mean, ci_low, ci_high, n, n_imported, empirical_rate, basis, mode. Labels are kept raw
here; every renderer escapes them for its medium.
"""

from __future__ import annotations

import networkx as nx
import pandas as pd

from skillorchestra_core.handbook.content import HandbookContent, SkillSpec

MODE, SKILL, AGENT = "mode", "skill", "agent"
TREE, COMPETENCE = "tree", "competence"


def mode_id(name: str) -> str:
    return f"mode:{name}"


def skill_id(key: str) -> str:
    return f"skill:{key}"


def agent_id(name: str) -> str:
    return f"agent:{name}"


def split_id(node: str) -> tuple[str, str]:
    """('skill', 'answer.math') from 'skill:answer.math'."""
    kind, _, rest = node.partition(":")
    return kind, rest


def skill_parents(skills: dict[str, SkillSpec]) -> dict[str, str | None]:
    """Parent key of every skill: its parent_key when that skill exists, else the longest dotted prefix that is a
    skill of the same mode, else None (a top-level skill of its mode)."""
    out: dict[str, str | None] = {}
    for key, spec in skills.items():
        parent = spec.parent_key if spec.parent_key in skills and spec.parent_key != key else None
        if parent is None:
            parts = key.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                prefix = ".".join(parts[:cut])
                if prefix in skills and skills[prefix].mode == spec.mode:
                    parent = prefix
                    break
        out[key] = parent
    return _break_cycles(out)


def _break_cycles(parents: dict[str, str | None]) -> dict[str, str | None]:
    for key in parents:
        seen, node = {key}, parents[key]
        while node is not None:
            if node in seen:
                parents[key] = None
                break
            seen.add(node)
            node = parents.get(node)
    return parents


def _depths(parents: dict[str, str | None]) -> dict[str, int]:
    depth: dict[str, int] = {}

    def walk(key: str) -> int:
        if key not in depth:
            parent = parents.get(key)
            depth[key] = 0 if parent is None else walk(parent) + 1
        return depth[key]

    for key in parents:
        walk(key)
    return depth


def build_graph(content: HandbookContent, competence: pd.DataFrame,
                queries_per_skill: dict[str, int] | None = None, with_edges: bool = True) -> nx.DiGraph:
    """The full graph of a version. `competence`: the table of `learning.profile.competence` for that version.

    The competence posteriors are also kept as one frame in ``g.graph["competence"]`` (see `competence_frame`),
    which the filters read; `with_edges=False` leaves the (skill, agent) edges out of the graph itself: a
    5,000-skill x 20-agent version has 100k of them, and building them as networkx edges took seconds."""
    g = nx.DiGraph()
    parents = skill_parents(content.skills)
    depths = _depths(parents)
    queries_per_skill = queries_per_skill or {}
    for mode in sorted(content.modes.values(), key=lambda m: m.name):
        n_skills = sum(1 for s in content.skills.values() if s.mode == mode.name)
        g.add_node(mode_id(mode.name), kind=MODE, label=mode.name, description=mode.description, n_skills=n_skills)
    for key in sorted(content.skills):
        spec = content.skills[key]
        if mode_id(spec.mode) not in g:
            g.add_node(mode_id(spec.mode), kind=MODE, label=spec.mode, description="", n_skills=0)
        parent = parents[key]
        g.add_node(skill_id(key), kind=SKILL, label=spec.name or key, key=key, mode=spec.mode,
                   parent=skill_id(parent) if parent else None, depth=depths[key], description=spec.description,
                   n=0.0, n_queries=int(queries_per_skill.get(key, 0)))
    for key in sorted(content.skills):
        parent = parents[key]
        source = skill_id(parent) if parent else mode_id(content.skills[key].mode)
        g.add_edge(source, skill_id(key), kind=TREE)
    agent_modes: dict[str, list[str]] = {}
    models: dict[str, str] = {}
    for (name, agent_mode), agent in sorted(content.agents.items()):
        agent_modes.setdefault(name, []).append(agent_mode)
        models.setdefault(name, agent.model)
    for name, modes in agent_modes.items():
        g.add_node(agent_id(name), kind=AGENT, label=name, modes=tuple(modes), model=models[name])
    frame = _competence_frame(g, competence)
    g.graph["competence"] = frame
    for node, n in frame.groupby("s_id")["n"].max().items():
        g.nodes[node]["n"] = max(g.nodes[node]["n"], float(n))
    if with_edges:
        g.add_edges_from((u, v, attrs) for u, v, attrs in edge_records(frame))
    return g


EDGE_COLUMNS = ["s_id", "a_id", "mean", "ci_low", "ci_high", "n", "n_imported", "empirical_rate", "basis", "mode"]


def _competence_frame(g: nx.DiGraph, competence: pd.DataFrame | None) -> pd.DataFrame:
    """One row per (skill node, agent node) of the graph with the edge attributes, in whole columns."""
    if competence is None or competence.empty:
        return pd.DataFrame(columns=EDGE_COLUMNS).astype({c: float for c in EDGE_COLUMNS[2:8]})
    comp = competence.assign(s_id=SKILL + ":" + competence["skill"].astype(str),
                             a_id=AGENT + ":" + competence["agent"].astype(str))
    nodes = set(g.nodes)
    comp = comp[comp["s_id"].isin(nodes) & comp["a_id"].isin(nodes)]
    out = comp[EDGE_COLUMNS].reset_index(drop=True)
    for col in EDGE_COLUMNS[2:8]:
        out[col] = out[col].astype(float)
    out["basis"] = out["basis"].astype(str)
    return out


def competence_frame(g: nx.DiGraph) -> pd.DataFrame:
    """The graph's competence rows (EDGE_COLUMNS): the frame `build_graph` kept, else read from its edges."""
    frame = g.graph.get("competence")
    if frame is not None:
        return frame
    rows = [(u, v, d["mean"], d["ci_low"], d["ci_high"], d["n"], d["n_imported"], d["empirical_rate"], d["basis"],
             d["mode"]) for u, v, d in g.edges(data=True) if d.get("kind") == COMPETENCE]
    return pd.DataFrame(rows, columns=EDGE_COLUMNS)


def edge_records(frame: pd.DataFrame):
    """(skill node, agent node, edge attributes) per competence row; a NaN empirical rate becomes None."""
    emp = [None if x != x else float(x) for x in frame["empirical_rate"].tolist()]
    rows = zip(frame["s_id"].tolist(), frame["a_id"].tolist(), frame["mean"].tolist(), frame["ci_low"].tolist(),
               frame["ci_high"].tolist(), frame["n"].tolist(), frame["n_imported"].tolist(), emp,
               frame["basis"].tolist(), frame["mode"].tolist())
    for u, v, m, lo, hi, n, ni, e, b, mode in rows:
        yield u, v, {"kind": COMPETENCE, "weight": m, "mean": m, "ci_low": lo, "ci_high": hi, "n": n,
                     "n_imported": ni, "empirical_rate": e, "basis": b, "mode": mode}


def competence_edges(g: nx.DiGraph, node: str) -> list[tuple[str, str, dict]]:
    """Competence edges touching a skill or an agent node (also when the graph was built without them)."""
    frame = competence_frame(g)
    column = "s_id" if g.nodes[node]["kind"] == SKILL else "a_id"
    return list(edge_records(frame[frame[column] == node]))


def skill_subtree(g: nx.DiGraph, node: str) -> set[str]:
    """A skill node and all its descendant skills."""
    out, stack = set(), [node]
    while stack:
        cur = stack.pop()
        if cur in out:
            continue
        out.add(cur)
        stack.extend(v for _, v, d in g.out_edges(cur, data=True) if d.get("kind") == TREE)
    return out


def ancestors(g: nx.DiGraph, node: str) -> list[str]:
    """Parent chain of a skill node up to (and including) its mode node."""
    out: list[str] = []
    cur = node
    while True:
        preds = [u for u, _, d in g.in_edges(cur, data=True) if d.get("kind") == TREE]
        if not preds or preds[0] in out:
            return out
        cur = preds[0]
        out.append(cur)
