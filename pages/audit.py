"""Audit log: every decision and version change, who made it and when, with what it was before and after."""

import pandas as pd
import streamlit as st

from pages.components.context import open_session
from pages.components.review_widgets import table
from pages.components.shell import ensure_app_shell
from skillorchestra_core.refinement.history import audit_rows

ensure_app_shell()
st.title("Audit log")
st.caption("Newest first. Review decisions (refinement.*), versions, restores and member changes.")
ALL = "(all)"
with open_session() as s:
    rows = audit_rows(s)
if not rows:
    st.info("Nothing recorded yet.")
    st.stop()
frame = pd.DataFrame([{"id": r.id, "at": r.at, "who": r.actor, "action": r.action, "handbook": r.handbook or "",
                       "what": r.details.get("candidate") or r.details.get("message") or r.details.get("name") or "",
                       "note": r.details.get("reason") or r.details.get("note") or ""} for r in rows])
c1, c2, c3 = st.columns(3)
action = c1.selectbox("Action", [ALL, *sorted(frame["action"].unique())], key="audit:action")
actor = c2.selectbox("Who", [ALL, *sorted(frame["who"].unique())], key="audit:who")
handbook = c3.selectbox("Handbook", [ALL, *sorted(h for h in frame["handbook"].unique() if h)], key="audit:hb")
for col, value in (("action", action), ("who", actor), ("handbook", handbook)):
    if value != ALL:
        frame = frame[frame[col] == value]
table(frame.to_dict("records"), key="audit:table")
if frame.empty:
    st.stop()
chosen = st.selectbox("Details of", frame["id"].tolist(), key="audit:open",
                      format_func=lambda i: f"#{i} " + " · ".join(frame.set_index("id").loc[i, ["action", "who"]]))
details = next(r.details for r in rows if r.id == chosen)
b1, b2 = st.columns(2)
b1.markdown("**Before**")
b1.json(details.get("before", {}))
b2.markdown("**After**")
b2.json(details.get("after", {}))
with st.expander("Full record"):
    st.json(details)
