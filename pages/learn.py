"""Learn: discover skills from a handbook's train traces, attribute queries, profile agents, as a new version."""

import streamlit as st

from pages.components.context import current_selection
from pages.components.shell import ensure_app_shell
from skillorchestra_core.display_text import md_code, md_escape, md_line
from skillorchestra_core.errors import StudioError
from skillorchestra_core.learning import runs, views
from skillorchestra_core.learning.pipeline import LearnOptions
from skillorchestra_core.settings import get_settings

ensure_app_shell()
st.title("Learn")
st.caption("Contrast the agents that succeeded with those that failed on each train query, name the skills that "
           "separate them, attribute every train query, and profile the agents: the result is a new version. "
           "Validation and test queries are never read for learning.")
sel = current_selection()
if sel.handbook is None:
    st.info("No handbook yet. Run `skillorchestra demo` or import outcomes.")
    st.stop()
st.markdown(f"Learning from the **latest version** of {md_code(sel.handbook)} (pick another handbook in the sidebar).")
c1, c2, c3 = st.columns(3)
method = c1.radio("Method", ["Offline", "LLM"], horizontal=True, key="learn:method")
model = c2.text_input("LLM model (litellm)", value=get_settings().llm_model, key="learn:model",
                      disabled=method == "Offline")
max_q = c3.number_input("Max train queries per mode (0: all)", min_value=0, value=0, step=50, key="learn:max")
ignore = st.checkbox("Offline: cluster query text even where queries carry task labels", key="learn:ignore")
if st.button("Start learning", type="primary", key="learn:start"):
    options = LearnOptions(llm=model if method == "LLM" else None, max_queries=int(max_q) or None,
                           task_labels=not ignore, author=st.session_state.get("ctx:reviewer", "reviewer"))
    try:
        st.session_state["learn:run"] = runs.start_run(None, sel.handbook, options, actor=options.author)
    except StudioError as exc:
        st.error(md_escape(exc))


@st.fragment(run_every=1.0)
def show_run() -> None:
    run_id = st.session_state.get("learn:run")
    if run_id is None:
        return
    run = runs.get_run(None, run_id)
    st.subheader(f"Run {run.id} · {md_line(run.handbook_name)} v{run.parent_version} · {run.method} · {run.status}")
    for stage, done in views.stage_progress(run):
        st.progress(min(max(done, 0.0), 1.0), text=f"{md_line(stage)}: {done:.0%}")
    if run.status in ("queued", "running"):
        st.text(run.detail)
        if st.button("Cancel", key=f"learn:cancel:{run.id}"):
            runs.request_cancel(None, run_id)
        return
    if run.error:
        st.error(md_escape(run.error))
    if run.status in runs.RETRYABLE and st.button(f"Retry from v{run.parent_version}", key=f"learn:retry:{run.id}"):
        st.session_state["learn:run"] = runs.retry_run(None, run_id, st.session_state.get("ctx:reviewer"))
    if run.status == "done":
        show_report(run)


def show_report(run) -> None:
    r = run.report
    st.success(f"{md_line(run.handbook_name)} v{run.version} " + ("created" if r.get("created") else "unchanged"))
    st.markdown("**Discovered skills, with provenance**")
    st.dataframe(views.skills_table(r), hide_index=True, width="stretch")
    st.dataframe(views.attributed_table(r), hide_index=True)
    for mode, lines in (r.get("insights") or {}).items():
        st.markdown(f"**Insights · {md_line(mode)}**")
        for line in lines:
            st.text(line)
    for note in r.get("notes") or []:
        st.caption(md_escape(note))
    st.markdown(f"**Posterior changes vs v{run.parent_version}** (largest first; new skills have no parent value)")
    st.dataframe(views.diff_table(r), hide_index=True, width="stretch")


show_run()
st.subheader("Recent runs")
st.dataframe(views.runs_table(runs.list_runs(None, sel.handbook)), hide_index=True, width="stretch")
