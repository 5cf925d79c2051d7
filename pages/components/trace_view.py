"""The shared step view of a decision trace (Playground and Decisions pages): mode -> skills -> candidates ->
choice -> execution, per step. Every figure of a step comes from one `step_at` view at the lambda the slider shows,
so the headline, the table order, the chart and the note always name the same winner."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from skillorchestra_core.display_text import md_escape, md_line
from skillorchestra_core.routing.trace import RouteTrace, StepTrace
from skillorchestra_core.routing.views import (
    candidates_frame,
    contributions_frame,
    lambda_figure,
    segments_frame,
    utility_figure,
)
from skillorchestra_core.routing.what_if import StepAt, TraceAt, step_at, trace_at

DETAILS = ("Utility chart", "Lambda path", "Per-skill contributions", "All columns")  # drawn on demand
# The interactive grid for "All columns": role and agent first, wide enough for "runner-up" and long agent names.
CANDIDATE_COLUMNS = {"": st.column_config.TextColumn("role", width=90, pinned=True),
                     "agent": st.column_config.TextColumn("agent", width="medium", pinned=True)}
# The candidates as a static table: the columns that explain the choice (the model and normalised cost are in "All
# columns"). A static table draws without loading the data grid's scripts: 0.45 s less for a fresh browser.
TABLE_COLUMNS = ["", "agent", "utility", "mean", "interval", "cost (USD)", "penalty", "router score"]
# Side by side, a column is ~370 px at 1280: the columns that decide (in the router's order; the headline names the
# roles).
COMPACT_COLUMNS = ["agent", "utility", "mean", "cost (USD)"]
_TEXT = ("", "agent", "interval", "model")  # the other columns are numbers (or missing)
_NOWRAP = ["", "agent", "interval"]


def static_table(frame: pd.DataFrame) -> None:
    """A small table drawn as plain HTML. st.table renders every cell as Markdown, so text is escaped here; numbers
    stay numbers (right-aligned), shown as the headline shows them (costs to the micro-dollar); names and intervals
    do not wrap."""
    text = [c for c in frame.columns if c in _TEXT]
    cells = frame.assign(**{c: frame[c].map(md_line) if c in text else frame[c].astype(float) for c in frame})
    digits = {c: "{:.6f}" if c == "cost (USD)" else "{:.4f}" for c in frame.columns if c not in text}
    style = cells.style.format(digits, na_rep="–").set_properties(  # an en dash: no Markdown list marker
        subset=[c for c in _NOWRAP if c in text], **{"white-space": "nowrap"})
    st.table(style, hide_index=True, border="horizontal")


def md(text) -> str:
    """Data as literal text for st.markdown and friends (no markup, no link, no image)."""
    return md_escape(text)


def facts(items: list[tuple[str, str]], big: bool = False) -> None:
    """Label/value pairs that wrap onto more lines instead of truncating (st.metric cuts long agent names)."""
    with st.container(horizontal=True, gap="small"):
        for label, value in items:
            with st.container(border=True, width="content"):
                st.caption(label)
                st.markdown(("### " if big else "**") + md(value) + ("" if big else "**"), anchors=False)


def interval_text(at: StepAt) -> str:
    return at.interval.label() if at.interval is not None else "n/a"


def _margin(at: StepAt) -> str:
    return "-" if at.margin is None else f"{at.margin:.4f}"


def headline(trace: RouteTrace, view: TraceAt, big: bool = False) -> None:
    """The trace's answer at the shown lambda: who answers, who came second, by how much, and for which lambdas."""
    last = view.steps[-1] if view.steps else None
    items = [("Chosen agent", view.chosen_agent or "-"),
             ("Runner-up", (last.runner_up if last else None) or "-"),
             ("Margin", _margin(last) if last else "-"),
             ("Lambda interval", interval_text(last) if last else "n/a")]
    if not big:
        items += [("Steps", str(len(trace.steps))),
                  ("Cost (USD)", "-" if trace.total_cost_usd is None else f"{trace.total_cost_usd:.6f}"),
                  ("Outcome", "-" if trace.outcome is None else f"{trace.outcome:g}")]
    facts(items, big=big)


def render_header(trace: RouteTrace, lam: float, big: bool = False) -> TraceAt:
    view = trace_at(trace, lam)
    headline(trace, view, big=big)
    ident = f"trace #{trace.id} · " if trace.id else ""
    st.caption(md(f"{ident}{trace.handbook} v{trace.version} (hash {trace.content_hash[:12]}) · router {trace.router}"
                  f" · routed at lambda {trace.lam:g} ({trace.cost_unit}) · {trace.execution} · LLM "
                  f"{trace.llm_backend}"))
    if abs(lam - trace.lam) > 1e-12:
        if view.changed:
            st.warning(md(f"What-if lambda = {lam:g} (routed at {trace.lam:g}): the choice changes in "
                          f"{len(view.changed)} step(s): " + "; ".join(
                              f"step {i + 1}: {trace.steps[i].chosen} -> {view.steps[i].chosen}"
                              for i in view.changed)))
        else:
            st.info(md(f"What-if lambda = {lam:g}: every step keeps its agent (routed at lambda = {trace.lam:g})."))
    return view


def _skills_text(step: StepTrace) -> str:
    if not step.active_skills:
        return "No skill active: the agents' general competence in the mode is used."
    parts = [f"{a.skill} (w {a.weight:.2f}" + (f", sim {a.similarity:.2f})" if a.similarity is not None else ")")
             for a in step.active_skills]
    return "Active skills (" + step.activation_source + "): " + ", ".join(parts)


def render_step(step: StepTrace, lam: float, key: str, compact: bool = False, routed_lam: float | None = None,
                links=None) -> None:
    at = step_at(step, lam, routed_lam)
    with st.container(border=True):
        st.markdown(f"#### Step {step.index + 1} · mode {md(step.mode)}", anchors=False)
        st.caption(md(f"Why this mode: {step.mode_reason} ({step.mode_source})"))
        st.markdown(md(_skills_text(step)))
        if step.activation_note:
            st.caption(md(step.activation_note))
        _choice(step, at)
        if links is not None:
            links(step, at)
        table = candidates_frame(step, lam, routed_lam)
        static_table(table[COMPACT_COLUMNS if compact else TABLE_COLUMNS])
        shown = st.segmented_control("Detail", DETAILS, key=f"{key}:detail", default=None,
                                     label_visibility="collapsed")  # charts and the grid on demand: a light draw
        if shown == DETAILS[0]:
            st.plotly_chart(utility_figure(step, lam, routed_lam), key=f"{key}:utility", width="stretch")
        elif shown == DETAILS[1]:
            st.plotly_chart(lambda_figure(step, lam), key=f"{key}:lambda", width="stretch")
            st.dataframe(segments_frame(step), hide_index=True)
        elif shown == DETAILS[2]:
            st.dataframe(contributions_frame(step), hide_index=True, width="stretch")
        elif shown == DETAILS[3]:
            st.dataframe(table, hide_index=True, width="stretch", column_config=CANDIDATE_COLUMNS)
        _execution(step)


def _choice(step: StepTrace, at: StepAt) -> None:
    facts([("Chosen", at.chosen or "-"), ("Runner-up", at.runner_up or "-"), ("Margin", _margin(at)),
           ("Lambda interval", interval_text(at))])
    iv = at.interval
    detail = f"Cause: {step.cause}."
    if at.recomputed:
        detail += f" At lambda {at.lam:g} (what-if)" + (f", {at.chosen} replaces {step.chosen}." if at.changed
                                                       else f", {at.chosen} stays.")
    if iv is not None and step.cause != "single_candidate":
        if iv.below:
            detail += f" Below {iv.low:.4g} {iv.below} would be chosen."
        if iv.above:
            detail += f" From {iv.high:.4g} on {iv.above} takes over."
    if step.lambda_note:
        detail += f" {step.lambda_note}."
    st.caption(md(detail))


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


def render_trace(trace: RouteTrace, lam: float | None = None, key: str = "trace", compact: bool = False,
                 links=None, steps: list[int] | None = None) -> TraceAt:
    """The whole trace: the headline at `lam`, the query, then the steps (all, or the indexes in `steps`)."""
    lam = trace.lam if lam is None else lam
    view = render_header(trace, lam)
    st.markdown("**Query**")
    st.text(trace.query)
    for step in trace.steps:
        if steps is None or step.index in steps:
            render_step(step, lam, key=f"{key}:{trace.id}:{step.index}", compact=compact, routed_lam=trace.lam,
                        links=links)
    return view


def download_trace(trace: RouteTrace, key: str) -> None:
    st.download_button("Export trace (JSON)", data=trace.to_json(), file_name=f"trace-{trace.id or 'draft'}.json",
                       mime="application/json", key=key)
