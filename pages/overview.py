"""Overview: the handbooks of the open database with their versions, agents, skills and evidence."""

import pandas as pd
import streamlit as st

from pages.components.cached import overview, summaries
from pages.components.context import current_selection
from pages.components.shell import ensure_app_shell
from skillorchestra_core.display_text import md_code, md_line

ensure_app_shell()
st.title("SkillOrchestra Studio")
st.caption("Curate the routing knowledge of a compound AI system: modes, skills, agent competence and cost.")

handbooks = summaries()
if not handbooks:
    st.warning("The database has no handbook yet. Run `skillorchestra demo` or `skillorchestra import ...`.")
    st.stop()

st.subheader("Handbooks")
table = pd.DataFrame([vars(h) for h in handbooks])
table["synthetic"] = table["synthetic"].map({True: "synthetic demo", False: ""})
st.dataframe(table, hide_index=True, width="stretch")

sel = current_selection()
if sel.handbook and sel.version is not None:
    ov = overview(sel.handbook, sel.version)  # cached per version: no outcome is re-read per visit
    st.subheader(md_line(ov.label))
    if ov.synthetic:
        st.info("Synthetic demo data made by `skillorchestra demo` from a fixed seed: not real model outcomes.")
    cols = st.columns(len(ov.counts))
    for col, (label, value) in zip(cols, ov.counts.items()):
        col.metric(md_line(label), value)
    st.caption(f"Content hash {md_code(ov.content_hash[:12])} · author {md_line(ov.author)} · {md_line(ov.message)}")
    left, right = st.columns(2)
    left.markdown("**Modes and skills**")
    left.dataframe(ov.skills, hide_index=True, width="stretch")
    right.markdown("**Agents** (cost per call from evidence or price card)")
    right.dataframe(ov.agents, hide_index=True, width="stretch")
    st.markdown("**Versions**")
    st.dataframe(ov.versions, hide_index=True, width="stretch")
