"""Playground: route a query step by step and see why each agent was chosen; move lambda to watch the choice."""

import time

import streamlit as st

from pages.components.context import current_selection, open_session
from pages.components.feedback import feedback_buttons
from pages.components.links import step_links
from pages.components.playground_inputs import (
    Request,
    lambda_slider,
    query_input,
    remember_inputs,
    restore_inputs,
    settings_inputs,
)
from pages.components.presenter import hide_chrome, presenter_toggle, stage, sweep
from pages.components.shell import ensure_app_shell
from pages.components.trace_view import download_trace, md, render_header, render_step, render_trace
from skillorchestra_core.errors import ReadOnlyDatabase
from skillorchestra_core.handbook.store import list_versions
from skillorchestra_core.routing.compare import executions, route_all
from skillorchestra_core.routing.engine import RouteOptions
from skillorchestra_core.routing.service import evidence_queries, router_choices
from skillorchestra_core.routing.trace import RouteTrace
from skillorchestra_core.settings import get_settings

ensure_app_shell()
sel = current_selection()
big = presenter_toggle()
if big:
    hide_chrome()
else:
    st.title("Playground")
    st.caption("Type a question, route it with a handbook version, and see every step: mode, active skills, "
               "candidates, choice, execution. Move lambda to see where the choice changes.")
if sel.handbook is None or sel.version is None:
    st.info("Pick a handbook in the sidebar (or create the demo with `skillorchestra demo`).")
    st.stop()

with open_session() as s:
    examples = evidence_queries(s, sel.handbook)
    versions = [v.number for v in list_versions(s, sel.handbook)][::-1]
routers = router_choices()
restore_inputs()
query = query_input(examples, big)
with st.expander("Routing settings", expanded=not big):
    st.caption(md(f"Handbook {sel.handbook} v{sel.version} (pick another in the sidebar)."))
    router, execute, cost_unit, runs = settings_inputs(routers, versions, sel.version,
                                                       executions(get_settings().llm_backend))
lam = lambda_slider()
remember_inputs()
request = Request(sel.handbook, sel.version, query, router, cost_unit, execute, tuple(runs))
clicked = st.button("Route", type="primary", key="pg:route", shortcut="Ctrl+Enter", help="Ctrl+Enter")
result = st.session_state.get("pg:result")
# A link opened in a new session shows its result at once; later typing waits for Route.
from_link = "pg:visited" not in st.session_state and result is None and bool(query.strip()) and "q" in st.query_params
st.session_state["pg:visited"] = True


def _route(store: bool) -> None:
    """Route every run, then keep the traces in the session. A routing the presenter started shows its steps as
    they are decided, paced; a link's result is drawn once, when it is complete (nothing drawn twice)."""
    live, failure, read_only = st.empty(), None, None
    pause = store and st.session_state.get("pg:animate", True)
    with live.container():
        cols = st.columns(len(request.runs)) if pause else []

        def show(i: int, step) -> None:
            with cols[i]:
                render_step(step, lam, key=f"live:{i}:{step.index}", compact=True)
            time.sleep(0.35)

        options = RouteOptions(lam=lam, cost_unit=cost_unit, execute=execute)
        actor = st.session_state.get("ctx:reviewer") or "playground"
        try:
            with open_session() as s:
                traces = route_all(s, request.handbook, query, list(request.runs), options, store=store,
                                   on_step=show if pause else None, actor=actor)
        except ValueError as exc:
            failure = str(exc)
        except ReadOnlyDatabase as exc:  # routing only reads: show the result, say it was not logged
            read_only, store = str(exc).splitlines()[0], False
            with open_session() as s:
                traces = route_all(s, request.handbook, query, list(request.runs), options, store=False,
                                   actor=actor)
    live.empty()
    if failure is not None:
        st.error(md(f"Not routed (nothing stored): {failure}"))
        return
    if read_only is not None:
        st.error(md(f"Routed but not logged: {read_only}"))
    st.session_state["pg:result"] = {"key": request.key(), "traces": [t.to_json() for t in traces],
                                     "stored": store, "read_only": read_only is not None}


if clicked and not query.strip():
    st.warning("Type a query (or pick one from the evidence) first.")
elif clicked or from_link:
    _route(store=clicked)

result = st.session_state.get("pg:result")
if result:
    traces = [RouteTrace.from_json(t) for t in result["traces"]]
    if tuple(result["key"]) != request.key():
        st.info("The result below is for earlier inputs: press Route (Ctrl+Enter) to route these.")
    if big:
        stage(traces[0], lam)
        render_header(traces[0], lam, big=True)
        frame = st.empty()
        if st.button("Sweep lambda 0 → 2", key="pg:sweep"):
            sweep(traces[0], frame)
    elif len(traces) == 1:
        st.divider()
        render_trace(traces[0], lam=lam, key="pg", links=step_links(traces[0]))
        download_trace(traces[0], key="pg:download")
        if result.get("stored") and traces[0].id is not None:
            feedback_buttons(traces[0].id, key="pg:fb")
    else:
        st.divider()
        for i, (trace, col) in enumerate(zip(traces, st.columns(len(traces)))):
            with col:
                st.markdown(md(f"{routers.get(trace.router, trace.router)} · v{trace.version}"))
                render_header(trace, lam)
                for step in trace.steps:
                    render_step(step, lam, key=f"cmp:{i}:{step.index}", compact=True, routed_lam=trace.lam)
                download_trace(trace, key=f"pg:download:{i}")
    if not big:
        who = st.session_state.get("ctx:reviewer") or "playground"
        if result.get("stored"):
            st.caption(md(f"Stored as {who} (the sidebar's Reviewer): find it again on the Decisions page."))
        elif result.get("read_only"):
            st.caption("Not logged: the database is read-only (the Decisions page will not list it).")
        else:
            st.caption("Opened from a link: not stored (press Route to store it).")
        st.caption("Link to this result: the page URL (handbook, version, query, router, lambda) reproduces it.")
