"""Posteriors page widgets: agents, skills, credible level, prior and score toggles, and the evidence pager."""

from __future__ import annotations

import html
from dataclasses import dataclass

import streamlit as st

from pages.components.graph_data import current_node, set_node
from skillorchestra_core.graph.build import split_id
from skillorchestra_core.graph.posterior_views import (
    EMPIRICAL,
    MEAN,
    SCORES,
    agent_names,
    default_agents,
    default_skills,
    skill_names,
)
from skillorchestra_core.graph.service import CREDIBLE_LEVELS, VersionData
from skillorchestra_core.learning.competence import PriorConfig

PRIORS = {"hierarchical": "hierarchical (agent's pooled rate in the mode)", "flat": "flat Beta(1, 1)"}


@dataclass(frozen=True)
class PosteriorControls:
    agents: list[str]
    skills: list[str]
    level: float
    prior: PriorConfig
    score: str


def top_controls(default_prior: PriorConfig) -> tuple[float, PriorConfig, str]:
    c1, c2, c3 = st.columns([4, 3, 3])  # five levels fit at 1280 px with the sidebar open (else 99% scrolls away)
    level = c1.segmented_control("Credible level", CREDIBLE_LEVELS, default=0.95, key="post:level",
                                 persist_state="session", format_func=lambda x: f"{x:.0%}") or 0.95
    kind = c2.radio("Prior", list(PRIORS), format_func=PRIORS.get, key="post:prior", horizontal=True,
                    persist_state="session",
                    index=list(PRIORS).index(default_prior.kind))
    score = c3.radio("Score", [MEAN, EMPIRICAL], format_func=SCORES.get, key="post:score", horizontal=True,
                     persist_state="session")
    return float(level), PriorConfig(kind, default_prior.strength), score


def _node_default(kind: str) -> str | None:
    node = current_node()
    if not node:
        return None
    k, ident = split_id(node)
    return ident if k == kind else None


def selection_controls(data: VersionData) -> tuple[list[str], list[str]]:
    hb = data.loaded.handbook_name
    agents = agent_names(data)
    names = skill_names(data)
    wanted = [a for a in [_node_default("agent"), st.query_params.get("agent")] if a in agents]
    picked_agents = st.multiselect("Agents", agents, key=f"post:agents:{hb}", persist_state="session",
                                   default=list(dict.fromkeys(wanted + default_agents(data)))[:4])
    focus = _node_default("skill")
    skills = default_skills(data, picked_agents)
    if focus in names and focus not in skills:
        skills = sorted(skills + [focus])
    key = f"post:skills:{hb}"
    count = len(st.session_state.get(key, skills))
    with st.expander(f"Skills in the forest plot and heatmap ({count} chosen; default: most evidence)"):
        picked_skills = st.multiselect("Skills", sorted(names), default=skills, key=key, persist_state="session",
                                       format_func=lambda k: f"{names[k]} ({k})")
    return picked_agents, picked_skills


HEATMAP_KEY = "post:heatmap"


def default_focus(data: VersionData, skills: list[str]) -> str | None:
    """The skill the density and evidence views start on: the URL's skill node, else the first chosen skill."""
    names = skill_names(data)
    chosen = st.session_state.get(f"post:density:{data.loaded.handbook_name}")
    if chosen in names:
        return chosen
    focus = _node_default("skill")
    if focus in names:
        return focus
    return skills[0] if skills else (sorted(names)[0] if names else None)


def open_cell_from_heatmap(data: VersionData, key: str) -> None:
    """A new click on a heatmap cell selects that (agent, skill) in the evidence pickers and opens the tab."""
    event = st.session_state.get(key) or {}
    points = (event.get("selection") or {}).get("points") or []
    seen_key = f"{key}:seen"
    cells = []
    for p in points:
        cd = p.get("customdata")
        agent = p.get("y")
        if isinstance(cd, (list, tuple)) and len(cd) >= 3 and isinstance(agent, str):
            cells.append((html.unescape(agent), html.unescape(str(cd[2]))))
    if not cells or tuple(cells) == st.session_state.get(seen_key):
        return
    st.session_state[seen_key] = tuple(cells)
    hb = data.loaded.handbook_name
    agent, skill = cells[0]
    if agent in agent_names(data) and skill in skill_names(data):
        st.session_state[f"post:ev_agent:{hb}"] = agent
        st.session_state[f"post:ev_skill:{hb}"] = skill
        st.session_state["post:tab"] = "Evidence"


def density_skill(data: VersionData, skills: list[str]) -> str | None:
    names = skill_names(data)
    options = sorted(names)
    if not options:
        return None
    default = default_focus(data, skills)
    key = f"post:density:{data.loaded.handbook_name}"
    return st.selectbox("Skill", options, index=options.index(default) if default in options else 0, key=key,
                        format_func=lambda k: f"{names[k]} ({k})", on_change=_remember_skill, args=(key,))


def _remember_skill(key: str) -> None:
    if st.session_state.get(key):
        set_node(f"skill:{st.session_state[key]}")


def evidence_cell(data: VersionData, agents: list[str], skill: str | None) -> tuple[str | None, str | None, int]:
    names = skill_names(data)
    all_agents = agent_names(data)
    if not all_agents or not names:
        return None, None, 1
    hb = data.loaded.handbook_name
    c1, c2, c3 = st.columns([2, 3, 1])
    wanted = st.query_params.get("agent")
    first = wanted if wanted in all_agents else (agents[0] if agents else all_agents[0])
    agent = c1.selectbox("Agent", all_agents, key=f"post:ev_agent:{hb}", index=all_agents.index(first),
                         persist_state="session")
    options = sorted(names)
    ev_skill = c2.selectbox("Skill ", options, key=f"post:ev_skill:{hb}",
                            index=options.index(skill) if skill in names else 0,
                            format_func=lambda k: f"{names[k]} ({k})")
    page = c3.number_input("Page", min_value=1, value=1, step=1, key=f"post:ev_page:{hb}")
    return agent, ev_skill, int(page)
