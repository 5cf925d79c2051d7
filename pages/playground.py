"""Playground: route a query step by step and see why each agent was chosen; move lambda to watch the choice."""

import time

import streamlit as st

from pages.components.context import current_selection, ensure_app_shell, open_session
from pages.components.trace_view import download_trace, render_header, render_step, render_trace
from skillorchestra_core.handbook.store import list_versions
from skillorchestra_core.routing.engine import EXECUTIONS, RouteOptions
from skillorchestra_core.routing.service import evidence_queries, finish_route, router_choices, start_route
from skillorchestra_core.routing.store import load_trace
from skillorchestra_core.routing.utility import COST_UNIT_HELP

ensure_app_shell()  # a cold deep link runs this file alone: hand over to app.py first

st.title("Playground")
st.caption("Type a question, route it with a handbook version, and see every step: mode, active skills, candidates, "
           "choice, execution. Move lambda to see where the choice changes.")
sel = current_selection()
if sel.handbook is None:
    st.info("Pick a handbook in the sidebar (or create the demo with `skillorchestra demo`).")
    st.stop()

st.caption(f"Handbook {sel.handbook} v{sel.version} (pick another in the sidebar).")
with open_session() as s:
    examples = evidence_queries(s, sel.handbook)
    versions = [v.number for v in list_versions(s, sel.handbook)][::-1]
routers = router_choices()


def _use_example() -> None:
    pick = st.session_state.get("pg:example")
    if pick:
        st.session_state["pg:query"] = pick


st.selectbox("Pick a question from the evidence (optional)", [""] + examples, key="pg:example",
             on_change=_use_example, format_func=lambda q: q[:140] if q else "(type your own below)")
query = st.text_area("Query", key="pg:query", height=80, placeholder="e.g. Which river is longer, ...?")
c1, c2, c3, c4 = st.columns([2, 3, 2, 2])
router = c1.selectbox("Router", list(routers), format_func=routers.get, key="pg:router")
lam = c2.slider("Lambda (cost weight)", 0.0, 2.0, value=0.1, step=0.005, key="pg:lambda",
                help="Moving it after routing shows the choice at the new lambda without routing again.")
execute = c3.radio("Execution", EXECUTIONS, key="pg:execute", horizontal=True)
cost_unit = c4.radio("Cost unit", ["normalised", "max", "usd"], key="pg:cost_unit", horizontal=True,
                     help=COST_UNIT_HELP)
c5, c6, c7 = st.columns([2, 3, 2])
compare = c5.radio("Compare with", ["nothing", "another router", "another version"], key="pg:compare",
                   horizontal=True)
other_router, other_version = router, sel.version
if compare == "another router":
    other_router = c6.selectbox("Second router", list(routers), index=1, format_func=routers.get, key="pg:router2")
elif compare == "another version":
    other_version = c6.selectbox("Second version", versions, format_func=lambda n: f"v{n}", key="pg:version2")
animate = c7.toggle("Pause between steps", value=True, key="pg:animate")

if st.button("Route", type="primary", key="pg:route") and not query.strip():
    st.warning("Type a query (or pick one from the evidence) first.")
elif st.session_state.get("pg:route"):
    runs = [(router, sel.version)] + ([(other_router, other_version)] if compare != "nothing" else [])
    live = st.empty()  # the steps stream in here, then the stored traces replace them below
    ids = []
    with live.container():
        for (r, v), col in zip(runs, st.columns(len(runs))):
            with col, open_session() as s:
                try:
                    run = start_route(s, sel.handbook, v, query, RouteOptions(
                        router=r, lam=lam, cost_unit=cost_unit, execute=execute))
                    st.markdown(f"**Routing with {routers[r]} · v{v} ...**")
                    for step in run.steps():
                        render_step(step, lam, key=f"live:{r}:{v}:{step.index}", compact=True)
                        if animate:
                            time.sleep(0.35)
                    trace = finish_route(s, run, actor=st.session_state.get("ctx:reviewer", "playground"))
                    s.commit()
                    ids.append(trace.id)
                except ValueError as exc:
                    st.error(str(exc))
    if ids:
        live.empty()
        st.session_state["pg:trace_ids"] = ids

ids = st.session_state.get("pg:trace_ids") or []
if ids:
    with open_session() as s:
        traces = [load_trace(s, i) for i in ids]
    st.divider()
    if len(traces) == 1:
        render_trace(traces[0], lam=lam, key="pg")
        download_trace(traces[0], key="pg:download")
    else:
        for trace, col in zip(traces, st.columns(len(traces))):
            with col:
                st.markdown(f"**{routers.get(trace.router, trace.router)} · v{trace.version}**")
                render_header(trace, lam)
                for step in trace.steps:
                    render_step(step, lam, key=f"cmp:{trace.id}:{step.index}", compact=True)
                download_trace(trace, key=f"pg:download:{trace.id}")
    st.caption("Every routed query is stored: find it again on the Decisions page.")
