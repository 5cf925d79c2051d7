"""Decisions page widgets: filters (on the sidebar's handbook; no second handbook picker), the keyset pager and the step
picker (one step drawn at a time keeps the page light)."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from pages.components.context import Selection, open_session
from skillorchestra_core.display_text import md_line
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
        st.caption("Linked from the graph: decisions that " + (f"activated skill {md_line(skill)}" if skill else "")
                   + (" and " if skill and used else "") + (f"chose agent {md_line(used)}" if used else "") + ".")
    return TraceFilter(handbook=sel.handbook, version=sel.version if only_version else None,
                       agent=None if agent == ALL else agent, cause=None if cause == ALL else cause,
                       text=text or None, skill=skill, used_agent=used, limit=PAGE_SIZE)


def _cursor_key(flt: TraceFilter) -> str:
    return "dec:cursor:" + repr((flt.handbook, flt.version, flt.agent, flt.cause, flt.text, flt.skill,
                                 flt.used_agent))


def page_of(flt: TraceFilter) -> TraceFilter:
    """The filter at the page the Newer/Older buttons reached (by key: a new filter starts at the newest page)."""
    before, after = st.session_state.get(_cursor_key(flt), (None, None))
    return replace(flt, before=before, after=after)


def pager(flt: TraceFilter, ids: list[int], newer: bool, older: bool) -> None:
    """Newer / Older: the next page by key (the ids around the page shown), never by counting rows."""
    if not (newer or older):
        return
    key = _cursor_key(flt)

    def go(cursor):
        st.session_state[key] = cursor

    c1, c2, c3 = st.columns([1, 1, 4])
    c1.button("Newer", key="dec:newer", disabled=not newer, on_click=go, args=((None, max(ids) if ids else None),))
    c2.button("Older", key="dec:older", disabled=not older, on_click=go, args=((min(ids) if ids else None, None),))
    if ids:
        c3.caption(f"Decisions #{max(ids)} to #{min(ids)}, {flt.limit} per page, newest first")


def pick_step(trace: RouteTrace) -> int:
    """The step to draw (a multi-step trace draws one at a time)."""
    if len(trace.steps) <= 1:
        return 0
    labels = {s.index: f"Step {s.index + 1} · {md_line(s.mode)} → {md_line(s.chosen)}" for s in trace.steps}
    return st.segmented_control("Step", list(labels), format_func=lambda i: labels[i], default=0,
                                key=f"dec:step:{trace.id}") or 0
