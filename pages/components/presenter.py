"""Presenter mode: hide the app chrome (sidebar, toolbar, header) so the query, the steps and the choice fill a
projector. Only static CSS of our own is injected; no data ever goes into this HTML."""

from __future__ import annotations

import time

import streamlit as st

from pages.components.trace_view import md
from skillorchestra_core.routing.trace import RouteTrace
from skillorchestra_core.routing.what_if import trace_at

_HIDE_CHROME = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stHeader"],
[data-testid="stToolbar"], [data-testid="stDecoration"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding-top: 1.5rem; max-width: 100%; }
.st-key-presenter-stage p, .st-key-presenter-stage li { font-size: 1.6rem; line-height: 1.35; }
</style>"""


def presenter_toggle() -> bool:
    return st.toggle("Presenter mode", key="present", bind="query-params", persist_state="session",
                     help="Hides the sidebar and toolbar and shows the query, the steps and the choice large.")


def hide_chrome() -> None:
    st.html(_HIDE_CHROME)


def stage(trace: RouteTrace, lam: float) -> None:
    """The result large: the query, then each step's mode and agent at `lam`."""
    view = trace_at(trace, lam)
    with st.container(key="presenter-stage"):
        st.markdown("## " + md(trace.query), anchors=False)
        lines = [f"{i + 1}. **{md(s.mode)}** → **{md(at.chosen or '-')}**"
                 + (f" (instead of {md(s.chosen)})" if at.changed else "")
                 for i, (s, at) in enumerate(zip(trace.steps, view.steps))]
        st.markdown("\n".join(lines))


def sweep(trace: RouteTrace, placeholder, top: float = 2.0, frames: int = 40, pause: float = 0.08) -> None:
    """Animate the choice as lambda sweeps from 0 to `top` (drawn into `placeholder`, one frame per lambda)."""
    for i in range(frames + 1):
        lam = top * i / frames
        view = trace_at(trace, lam)
        with placeholder.container():
            st.markdown(f"### lambda = {lam:.3f} → {md(view.chosen_agent or '-')}", anchors=False)
        time.sleep(pause)
