"""Decisions: every stored routing trace, filterable, each openable as the step view, with "why not agent B?"."""

import streamlit as st

from pages.components.context import ensure_app_shell, open_session
from pages.components.feedback import feedback_buttons
from pages.components.trace_view import download_trace, md, render_trace
from skillorchestra_core.routing.explain import why_not
from skillorchestra_core.routing.store import TraceFilter, list_traces, load_trace, trace_facets

ensure_app_shell()  # a cold deep link runs this file alone: hand over to app.py first

st.title("Decisions")
st.caption("Every routed query (playground, CLI, API with a database sink), newest first.")

with open_session() as s:
    facets = trace_facets(s)
ALL = "(all)"
c1, c2, c3, c4, c5 = st.columns(5)
handbook = c1.selectbox("Handbook", [ALL] + facets["handbook"], key="dec:handbook")
if handbook != ALL:
    with open_session() as s:
        facets = {**facets, **{k: v for k, v in trace_facets(s, handbook).items() if k != "handbook"}}
version = c2.selectbox("Version", [ALL] + facets["version"], key="dec:version")
agent = c3.selectbox("Chosen agent", [ALL] + facets["agent"], key="dec:agent")
cause = c4.selectbox("Cause", [ALL] + facets["cause"], key="dec:cause")
dates = c5.date_input("Date range", value=(), key="dec:dates")
text = st.text_input("Query contains", key="dec:text")
since, until = (tuple(dates) + (None, None))[:2] if isinstance(dates, (tuple, list)) else (dates, dates)
flt = TraceFilter(handbook=None if handbook == ALL else handbook, version=None if version == ALL else version,
                  agent=None if agent == ALL else agent, cause=None if cause == ALL else cause, since=since,
                  until=until, text=text or None)
with open_session() as s:
    table = list_traces(s, flt)
if table.empty:
    st.info("No stored decision matches. Route a query on the Playground page or with `skillorchestra route`.")
    st.stop()
st.dataframe(table, hide_index=True, width="stretch")

ids = table["id"].tolist()
wanted = st.query_params.get("trace")
default = ids.index(int(wanted)) if wanted and wanted.isdigit() and int(wanted) in ids else 0
labels = dict(zip(ids, [f"#{i} · {q[:80]} -> {a}" for i, q, a in zip(ids, table["query"], table["chosen"])]))
trace_id = st.selectbox("Open decision", ids, index=default, format_func=labels.get, key="dec:open")
st.query_params["trace"] = str(trace_id)
with open_session() as s:
    trace = load_trace(s, trace_id)

lam = st.slider("What-if lambda", 0.0, max(2.0, trace.lam * 2), value=float(trace.lam), step=0.005,
                key=f"dec:lam:{trace_id}", help="Recomputes each step's choice from the stored utilities.")
render_trace(trace, lam=lam, key="dec")
download_trace(trace, key="dec:download")
feedback_buttons(trace_id, key="dec:fb")

st.subheader("Why not another agent?")
steps = {f"step {st_.index + 1} ({st_.mode})": st_ for st_ in trace.steps}
c1, c2 = st.columns(2)
step = steps[c1.selectbox("Step", list(steps), key=f"dec:why:step:{trace_id}")]
others = [c.agent for c in step.candidates if c.agent != step.chosen]
if not others:
    st.caption("This step had a single candidate.")
else:
    rival = c2.selectbox("Agent", others, key=f"dec:why:agent:{trace_id}:{step.index}")
    answer = why_not(step, rival, lam)
    st.markdown("\n".join(f"- {md(line.strip())}" for line in answer.lines))
