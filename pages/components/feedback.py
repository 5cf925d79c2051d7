"""Thumbs up/down on a stored decision: its outcome becomes feedback evidence and the handbook a new version."""

from __future__ import annotations

import streamlit as st

from skillorchestra_core.display_text import md_escape, md_line
from skillorchestra_core.errors import StudioError
from skillorchestra_core.learning.feedback import record_feedback


def feedback_buttons(trace_id: int | None, key: str) -> None:
    if trace_id is None:
        return
    c1, c2, c3 = st.columns([1, 1, 6])
    # Material icons come with Streamlit's own font: an emoji needs a font a projector's machine may lack.
    score = 1.0 if c1.button("Worked", icon=":material/thumb_up:", key=f"{key}:up:{trace_id}") else (
        0.0 if c2.button("Failed", icon=":material/thumb_down:", key=f"{key}:down:{trace_id}") else None)
    if score is None:
        return
    try:
        r = record_feedback(None, trace_id, score, author=st.session_state.get("ctx:reviewer", "reviewer"))
    except StudioError as exc:
        c3.error(md_escape(exc))
        return
    c3.success(f"Feedback {score:g} recorded as evidence: {md_line(r.handbook)} v{r.version}.")
