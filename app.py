"""SkillOrchestra Studio: Streamlit entry point. Navigation and sidebar chrome only; logic lives in
skillorchestra_core."""

import streamlit as st

from pages.components.context import sidebar_picker
from pages.components.shell import inside_shell
from skillorchestra_core.display_text import md_code
from skillorchestra_core.settings import get_settings


def main() -> None:
    """The chrome every page runs inside: page config, navigation, the sidebar; then the picked page."""
    st.set_page_config(page_title="SkillOrchestra Studio", page_icon="🎼", layout="wide")

    sections = {
        "Handbook": [
            st.Page("pages/overview.py", title="Overview", default=True),
            st.Page("pages/graph.py", title="Graph", url_path="graph"),
            st.Page("pages/posteriors.py", title="Posteriors", url_path="posteriors"),
            st.Page("pages/learn.py", title="Learn", url_path="learn"),
        ],
        "Review": [
            st.Page("pages/review.py", title="Review queue", url_path="review"),
            st.Page("pages/history.py", title="Version history", url_path="history"),
            st.Page("pages/audit.py", title="Audit log", url_path="audit"),
        ],
        "Routing": [
            st.Page("pages/playground.py", title="Playground", url_path="playground"),
            st.Page("pages/decisions.py", title="Decisions", url_path="decisions"),
            st.Page("pages/pareto.py", title="Pareto", url_path="pareto"),
        ],
    }

    nav = st.navigation(sections)
    sidebar_picker()
    settings = get_settings()
    if settings.llm_backend == "offline":
        st.sidebar.caption("Offline mode: deterministic LLM stand-in, no API key needed.")
    else:
        st.sidebar.caption(f"LLM: {md_code(settings.llm_model)} through litellm.")
    st.sidebar.text_input("Reviewer", key="ctx:reviewer", value=st.session_state.get("ctx:reviewer", "reviewer"))
    with inside_shell():
        nav.run()


if __name__ == "__main__":
    main()
