"""The shared step view of a decision trace (Playground and Decisions pages): mode -> skills -> candidates ->
choice -> execution, per step, with the utility chart recomputed at the lambda the slider shows."""

from __future__ import annotations

import re

import streamlit as st

from skillorchestra_core.routing.explain import choice_at, lambda_sensitive
from skillorchestra_core.routing.trace import RouteTrace, StepTrace
from skillorchestra_core.routing.views import (
    candidates_frame,
    contributions_frame,
    interval_label,
    lambda_figure,
    segments_frame,
    skills_frame,
    steps_frame,
    utility_figure,
)

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]#|<>~$])")


def md(text) -> str:
    """Escape data for st.markdown (no raw HTML is ever enabled; this also keeps markdown syntax literal)."""
    out = _MD_SPECIAL.sub(r"\\\1", str(text))
    return "\\" + out if out[:1] in ("-", "+", "=") else out  # a leading list or heading marker


def render_header(trace: RouteTrace, lam: float) -> None:
    cols = st.columns(4)
    cols[0].metric("Chosen agent", trace.chosen_agent or "-")
    cols[1].metric("Steps", len(trace.steps))
    cols[2].metric("Cost (USD)", "-" if trace.total_cost_usd is None else f"{trace.total_cost_usd:.6f}")
    cols[3].metric("Outcome", "-" if trace.outcome is None else f"{trace.outcome:g}")
    ident = f"trace #{trace.id} · " if trace.id else ""
    st.caption(md(f"{ident}{trace.handbook} v{trace.version} (hash {trace.content_hash[:12]}) · router {trace.router}"
                  f" · lambda {trace.lam:g} ({trace.cost_unit}) · {trace.execution} · LLM {trace.llm_backend}"))
    if abs(lam - trace.lam) > 1e-12:
        changed = [s for s in trace.steps if lambda_sensitive(s) and choice_at(s, lam) != s.chosen]
        if changed:
            st.warning(md(f"At lambda = {lam:g} the choice changes in {len(changed)} step(s): " + "; ".join(
                f"step {s.index + 1}: {s.chosen} -> {choice_at(s, lam)}" for s in changed)))
        else:
            st.info(md(f"At lambda = {lam:g} every step keeps its agent (routed at lambda = {trace.lam:g})."))


def render_step(step: StepTrace, lam: float, key: str, compact: bool = False) -> None:
    with st.container(border=True):
        st.markdown(f"#### Step {step.index + 1} · mode {md(step.mode)}")
        st.caption(md(f"Why this mode: {step.mode_reason} ({step.mode_source})"))
        st.markdown("**Active skills** " + md(f"({step.activation_source})"))
        if step.activation_note:
            st.caption(md(step.activation_note))
        if step.active_skills:
            st.dataframe(skills_frame(step), hide_index=True, width="stretch")
        else:
            st.caption("No skill active: the agents' general competence in the mode is used.")
        st.markdown("**Candidates**")
        st.dataframe(candidates_frame(step, lam), hide_index=True, width="stretch")
        st.plotly_chart(utility_figure(step, lam), key=f"{key}:utility", width="stretch")
        _choice(step, lam)
        if not compact:
            with st.expander("Lambda path: who wins at each lambda"):
                st.plotly_chart(lambda_figure(step, lam), key=f"{key}:lambda", width="stretch")
                st.dataframe(segments_frame(step), hide_index=True)
            with st.expander("Per-skill contributions"):
                st.dataframe(contributions_frame(step), hide_index=True, width="stretch")
        _execution(step)


def _choice(step: StepTrace, lam: float) -> None:
    cols = st.columns(4)
    cols[0].metric("Chosen", step.chosen or "-")
    cols[1].metric("Runner-up", step.runner_up or "-")
    cols[2].metric("Margin", "-" if step.margin is None else f"{step.margin:.4f}")
    cols[3].metric("Lambda interval", interval_label(step) if step.lambda_interval else "n/a")
    iv = step.lambda_interval
    detail = f"Cause: {step.cause}."
    if iv is not None and step.cause != "single_candidate":
        if iv.below:
            detail += f" Below {iv.low:.4g} {iv.below} would be chosen."
        if iv.above:
            detail += f" From {iv.high:.4g} on {iv.above} takes over."
    if step.lambda_note:
        detail += f" {step.lambda_note}."
    st.caption(md(detail))
    if lambda_sensitive(step):
        now = choice_at(step, lam)
        if now != step.chosen:
            st.warning(md(f"At lambda = {lam:g}: {now} would be chosen instead of {step.chosen}."))


def _execution(step: StepTrace) -> None:
    ex = step.execution
    if ex is None:
        return
    parts = [f"Execution ({ex.mode}): {ex.status}"]
    if ex.score is not None:
        parts.append(f"score {ex.score:g}")
    if ex.cost_usd is not None:
        parts.append(f"cost ${ex.cost_usd:.6f}")
    elif ex.estimated_cost_usd is not None:
        parts.append(f"expected cost ${ex.estimated_cost_usd:.6f}")
    st.markdown("**" + md(", ".join(parts)) + "**")
    st.caption(md(ex.detail))
    if ex.output:
        st.text(ex.output[:2000])


def render_trace(trace: RouteTrace, lam: float | None = None, key: str = "trace", compact: bool = False) -> None:
    """The whole trace: header, a steps summary, then every step."""
    lam = trace.lam if lam is None else lam
    render_header(trace, lam)
    st.markdown("**Query**")
    st.text(trace.query)
    if len(trace.steps) > 1:
        st.dataframe(steps_frame(trace), hide_index=True, width="stretch")
    for step in trace.steps:
        render_step(step, lam, key=f"{key}:{trace.id}:{step.index}", compact=compact)


def download_trace(trace: RouteTrace, key: str) -> None:
    st.download_button("Export trace (JSON)", data=trace.to_json(), file_name=f"trace-{trace.id or 'draft'}.json",
                       mime="application/json", key=key)
