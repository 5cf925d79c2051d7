"""Decisions: the stored routing traces of the sidebar's handbook, filterable and paged by key (Newer / Older); one
opens as the step view (one step drawn at a time, its candidate tables derived only when drawn) with "why not
agent B?"."""

import streamlit as st

from pages.components.context import current_selection, open_session
from pages.components.decision_filters import decision_filter, page_of, pager, pick_step
from pages.components.feedback import feedback_buttons
from pages.components.links import step_links
from pages.components.shell import ensure_app_shell
from pages.components.trace_view import download_trace, md, render_trace
from skillorchestra_core.routing.explain import why_not
from skillorchestra_core.routing.store import has_traces, list_traces, load_trace, trace_exists
from skillorchestra_core.routing.views import decisions_table, why_not_markdown

ensure_app_shell()
st.title("Decisions")
sel = current_selection()
if sel.handbook is None:
    st.info("Pick a handbook in the sidebar (or create the demo with `skillorchestra demo`).")
    st.stop()
st.caption(md(f"Routed queries of {sel.handbook} (pick the handbook in the sidebar), newest first: playground, "
              "CLI, API with a database sink."))
flt = decision_filter(sel)
with open_session() as s:  # keyset pages on indexed columns: any page of a million decisions is one index probe
    table = list_traces(s, page_of(flt))
    ids_shown = table["id"].tolist()
    newer = bool(ids_shown) and has_traces(s, flt, after=max(ids_shown))
    older = bool(ids_shown) and has_traces(s, flt, before=min(ids_shown))
wanted = st.query_params.get("trace")
if wanted and wanted.isdigit() and int(wanted) not in set(table["id"]):
    with open_session() as s:
        if not trace_exists(s, int(wanted)):
            st.warning(md(f"No stored decision #{wanted} (the link is stale): showing the list instead."))
            wanted = None
if table.empty:
    st.info("No stored decision matches. Route a query on the Playground page or with `skillorchestra route`.")
    if not (wanted and wanted.isdigit()):
        st.stop()
else:
    st.dataframe(decisions_table(table), hide_index=True, width="stretch")
    pager(flt, ids_shown, newer, older)

ids = table["id"].tolist()
if wanted and wanted.isdigit() and int(wanted) not in ids:
    ids = [int(wanted)] + ids  # a deep link to a decision outside this page or filter
labels = dict(zip(table["id"], [f"#{i} · {q[:80]} -> {a}" for i, q, a in
                                zip(table["id"], table["query"], table["chosen"])]))
default = ids.index(int(wanted)) if wanted and wanted.isdigit() and int(wanted) in ids else 0
trace_id = st.selectbox("Open decision", ids, index=default, format_func=lambda i: labels.get(i, f"#{i}"),
                        key="dec:open")
st.query_params["trace"] = str(trace_id)
with open_session() as s:
    trace = load_trace(s, trace_id)

lam = st.slider("What-if lambda", 0.0, max(2.0, trace.lam * 2), value=float(trace.lam), step=0.005,
                key=f"dec:lam:{trace_id}", help="Recomputes each step's choice from the stored utilities.")
row = table[table["id"] == trace_id]
if not row.empty:
    st.caption(md(f"Routed by {row['actor'].iloc[0]} · {row['created'].iloc[0]:%Y-%m-%d %H:%M} UTC"))
shown = pick_step(trace)
view = render_trace(trace, lam=lam, key="dec", links=step_links(trace), steps=[shown])
download_trace(trace, key="dec:download")
feedback_buttons(trace_id, key="dec:fb")

st.subheader("Why not another agent?")
step = trace.steps[shown]
at = view.steps[shown]
others = [a for a in at.order if a != at.chosen]
if not others:
    st.caption("This step had a single candidate.")
else:
    rival = st.selectbox("Agent", others, key=f"dec:why:agent:{trace_id}:{step.index}")
    st.markdown(why_not_markdown(why_not(step, rival, lam).lines, md))
