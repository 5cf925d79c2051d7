"""Version history: every version of the handbook, the diff of any two, and restoring an older one as a new one."""

import pandas as pd
import streamlit as st

from pages.components.context import open_session
from pages.components.review_widgets import review_page_header, run_action, table
from pages.components.shell import ensure_app_shell
from skillorchestra_core.display_text import md_line
from skillorchestra_core.refinement import views
from skillorchestra_core.refinement.diff import diff_versions
from skillorchestra_core.refinement.history import restore_version, version_rows
from skillorchestra_core.settings import get_settings

ensure_app_shell()
sel, who = review_page_header("Version history")

with open_session() as s:
    rows = version_rows(s, sel.handbook)
frame = pd.DataFrame([vars(r) for r in rows]).sort_values("number", ascending=False)
frame["content_hash"] = frame["content_hash"].str[:12]
table(frame.to_dict("records"), key="hist:table")


@st.cache_data(show_spinner="Comparing versions...", max_entries=32)
def _diff(db_url: str, handbook: str, v1: int, v2: int):
    with open_session() as s:
        return diff_versions(s, handbook, v1, v2)


numbers = frame["number"].tolist()
c1, c2 = st.columns(2)
v2 = c1.selectbox("Newer", numbers, index=0, key=f"hist:v2:{sel.handbook}", format_func=lambda n: f"v{n}")
v1 = c2.selectbox("Older", numbers, index=min(1, len(numbers) - 1), key=f"hist:v1:{sel.handbook}",
                  format_func=lambda n: f"v{n}")
if v1 == v2:
    st.caption("Pick two different versions to compare.")
else:
    d = _diff(get_settings().database_url, sel.handbook, int(v1), int(v2))
    st.subheader(f"{md_line(d.before)} → {md_line(d.after)}")
    for col, (label, value) in zip(st.columns(5), views.diff_summary(d).items()):
        col.metric(label, value)
    table(views.diff_skill_rows(d), key="hist:skills")
    if d.posteriors:
        st.caption("Posterior means that moved:")
        table(d.posteriors, key="hist:posteriors")
    st.caption(f"Routing choices that change on {len(d.routing)} of {d.val_queries} validation queries "
               f"(lambda {d.lam}, mode {md_line(d.mode or '-')}):")
    table(d.routing, key="hist:routing")

st.subheader("Restore")
older = numbers[1:]
if not older:
    st.caption("Only one version: nothing to restore.")
else:
    r1, r2 = st.columns([1, 3])
    target = r1.selectbox("Version", older, key=f"hist:restore:{sel.handbook}", format_func=lambda n: f"v{n}")
    r2.button(f"Restore v{target} as a new version", key="hist:restore_btn", on_click=run_action,
              args=(lambda s: f"restored v{target} as v{restore_version(s, sel.handbook, int(target), who)}",))
