"""Decisions page widgets: filters (on the sidebar's handbook; no second handbook picker), the pager and the step
picker (one step drawn at a time keeps the page light)."""

from __future__ import annotations

import math

import streamlit as st

from app_pages.components.context import Selection, open_session
from skillorchestra_core.routing.store import TraceFilter, trace_facets
from skillorchestra_core.routing.trace import RouteTrace

ALL = "(all)"
PAGE_SIZE = 25


def decision_filter(sel: Selection) -> TraceFilter:
    with open_session() as s:
        facets = trace_facets(s, sel.handbook)
    c1, c2, c3, c4 = st.columns([2, 2, 2, 3])
    only_version = c1.toggle(f"Only v{sel.version}", key="dec:only_version", persist_state="session")
    agent = c2.selectbox("Chosen agent", [ALL] + facets["agent"], key="dec:agent", persist_state="session")
    cause = c3.selectbox("Cause", [ALL] + facets["cause"], key="dec:cause", persist_state="session")
    text = c4.text_input("Query contains", key="dec:text", persist_state="session")
    skill, used = st.query_params.get("skill"), st.query_params.get("agent")
    if skill or used:
        st.caption("Linked from the graph: decisions that " + (f"activated skill {skill}" if skill else "")
                   + (" and " if skill and used else "") + (f"chose agent {used}" if used else "") + ".")
    return TraceFilter(handbook=sel.handbook, version=sel.version if only_version else None,
                       agent=None if agent == ALL else agent, cause=None if cause == ALL else cause,
                       text=text or None, skill=skill, used_agent=used, limit=PAGE_SIZE)


def page_picker(flt: TraceFilter, total: int) -> TraceFilter:
    pages = max(1, math.ceil(total / flt.limit))
    if pages == 1:
        return flt
    c1, c2 = st.columns([1, 5])
    page = c1.number_input("Page", min_value=1, max_value=pages, value=1, step=1, key="dec:page")
    c2.caption(f"{total} decisions, {flt.limit} per page, {pages} pages")
    return TraceFilter(**{**vars(flt), "offset": (int(page) - 1) * flt.limit})


def pick_step(trace: RouteTrace) -> int:
    """The step to draw (a multi-step trace draws one at a time)."""
    if len(trace.steps) <= 1:
        return 0
    labels = {s.index: f"Step {s.index + 1} · {s.mode} -> {s.chosen}" for s in trace.steps}
    return st.segmented_control("Step", list(labels), format_func=lambda i: labels[i], default=0,
                                key=f"dec:step:{trace.id}") or 0
