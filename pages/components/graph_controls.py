"""Graph page widgets: mode filter, search, view switch and the finer filters, turned into a GraphFilter."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import streamlit as st

from skillorchestra_core.graph.build import AGENT, MODE, SKILL
from skillorchestra_core.graph.filters import GraphFilter, default_depth, default_top_k

VIEWS = ("Clickable", "Explore (physics)", "Hierarchy (DOT)")


@dataclass(frozen=True)
class GraphControls:
    filter: GraphFilter
    view: str


def expanded_key(handbook: str) -> str:
    return f"graph:expanded:{handbook}"


def root_key(handbook: str) -> str:
    return f"graph:root:{handbook}"


def expand_skill(handbook: str, key: str) -> None:
    """Callback: show the children of a collapsed skill."""
    current = list(st.session_state.get(expanded_key(handbook), []))
    if key not in current:
        st.session_state[expanded_key(handbook)] = current + [key]


def focus_subtree(handbook: str, key: str | None) -> None:
    """Callback: draw only this skill's subtree (None: everything)."""
    st.session_state[root_key(handbook)] = key or ""


def graph_controls(g: nx.DiGraph, handbook: str) -> GraphControls:
    modes = sorted(d["label"] for _, d in g.nodes(data=True) if d["kind"] == MODE)
    agents = sorted(d["label"] for _, d in g.nodes(data=True) if d["kind"] == AGENT)
    skills = {d["key"]: d for _, d in g.nodes(data=True) if d["kind"] == SKILL}
    auto_depth = default_depth(g)
    view = st.segmented_control("View", VIEWS, default=VIEWS[0], key="graph:view") or VIEWS[0]
    c1, c2, c3 = st.columns([2, 2, 2])
    chosen_modes = c1.multiselect("Modes", modes, key=f"graph:modes:{handbook}", placeholder="All modes")
    search = c2.text_input("Search skills and agents", key=f"graph:q:{handbook}",
                           placeholder="name, key or description")
    top_k = c3.number_input("Thin edges: best k agents per skill (0 = all)", min_value=0, max_value=50,
                            value=default_top_k(g) or 0, key=f"graph:top_k:{handbook}",
                            help="Keep only each skill's k best agents by posterior mean; the note below the "
                                 "graph says how many edges this hides.")
    in_scope = sorted(k for k, d in skills.items() if not chosen_modes or d["mode"] in chosen_modes)
    st.session_state.setdefault(root_key(handbook), "")
    if st.session_state[root_key(handbook)] not in [""] + in_scope:
        st.session_state[root_key(handbook)] = ""
    with st.expander("More filters", expanded=auto_depth is not None):
        f1, f2, f3, f5, f6 = st.columns([3, 3, 2, 2, 2])
        root = f1.selectbox("Skill subtree", [""] + in_scope, key=root_key(handbook),
                            format_func=lambda k: "Whole handbook" if not k else f"{skills[k]['label']} ({k})")
        chosen_agents = f2.multiselect("Agents", agents, key=f"graph:agents:{handbook}", placeholder="All agents")
        min_n = f3.number_input("Minimum evidence n", min_value=0.0, value=0.0, step=1.0,
                                key=f"graph:min_n:{handbook}")
        depth_options: list[str | int] = ["all", 0, 1, 2, 3, 4, 5]
        depth = f5.selectbox("Skill levels shown", depth_options,
                             index=depth_options.index(auto_depth) if auto_depth is not None else 0,
                             key=f"graph:depth:{handbook}",
                             format_func=lambda d: "All" if d == "all" else f"0 … {d}")
        edges_from = f6.radio("Agent edges from", ["leaves", "all"], key=f"graph:edges:{handbook}",
                              format_func={"leaves": "shown leaves", "all": "every skill"}.get,
                              help="A parent's posterior summarises its subtree; 'shown leaves' avoids doubled lines.")
    flt = GraphFilter(
        modes=tuple(chosen_modes), skill_root=root or None, agents=tuple(chosen_agents), min_evidence=float(min_n),
        top_k=int(top_k) or None, depth=None if depth == "all" else int(depth),
        expanded=tuple(st.session_state.get(expanded_key(handbook), [])), search=search or "", edges_from=edges_from,
    )
    return GraphControls(flt, view)
