"""Tables and charts of a trace for the pages (plain pandas and plotly; no streamlit here)."""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from skillorchestra_core.routing.explain import (  # noqa: F401  (interval_label is re-exported)
    choice_at,
    interval_label,
    lambda_sensitive,
    path_segments,
)
from skillorchestra_core.routing.trace import RouteTrace, StepTrace
from skillorchestra_core.routing.what_if import step_at


def _safe(text: str) -> str:
    """Plotly renders a subset of HTML in labels: escape names that come from data."""
    return html.escape(str(text), quote=False)


def steps_frame(trace: RouteTrace) -> pd.DataFrame:
    rows = []
    for s in trace.steps:
        ex = s.execution
        rows.append({"step": s.index + 1, "mode": s.mode, "skills": ", ".join(a.skill for a in s.active_skills),
                     "chosen": s.chosen, "runner-up": s.runner_up or "",
                     "margin": None if s.margin is None else round(s.margin, 4),
                     "lambda interval": interval_label(s), "cause": s.cause,
                     "execution": f"{ex.mode}: {ex.status}" if ex else "",
                     "score": ex.score if ex else None,
                     "cost (USD)": (ex.cost_usd if ex and ex.cost_usd is not None else
                                    (ex.estimated_cost_usd if ex else None))})
    return pd.DataFrame(rows)


def skills_frame(step: StepTrace) -> pd.DataFrame:
    return pd.DataFrame([{"skill": a.skill, "name": a.name, "weight": round(a.weight, 4),
                          "probability": a.probability, "similarity": a.similarity,
                          "source": step.activation_source + (f" ({a.source})" if a.source else "")}
                         for a in step.active_skills],
                        columns=["skill", "name", "weight", "probability", "similarity", "source"])


def candidates_frame(step: StepTrace, lam: float | None = None, routed_lam: float | None = None) -> pd.DataFrame:
    """One row per candidate, best first; with `lam` the utility, penalty, order and choice are those at that lambda
    (the same `step_at` view the headline shows)."""
    at = step_at(step, 0.0, 0.0) if lam is None else step_at(step, lam, routed_lam)
    by_agent = {c.agent: c for c in step.candidates}
    rows = []
    for agent in at.order:
        c = by_agent[agent]
        pen = c.penalty if lam is None else lam * c.cost_norm
        role = "chosen" if agent == at.chosen else ("runner-up" if agent == at.runner_up else "")
        rows.append({"": role, "agent": agent, "utility": round(c.mean - pen, 4), "mean": round(c.mean, 4),
                     "interval": f"[{c.ci_low:.3f}, {c.ci_high:.3f}]", "cost (USD)": c.cost,
                     "cost (norm.)": round(c.cost_norm, 4), "penalty": round(pen, 4),
                     "router score": None if c.score is None or not math.isfinite(c.score) else round(c.score, 4),
                     "model": c.model})
    return pd.DataFrame(rows)


def contributions_frame(step: StepTrace) -> pd.DataFrame:
    rows = [{"agent": c.agent, "skill": t.skill, "weight": round(t.weight, 4), "mean": round(t.mean, 4),
             "interval": f"[{t.ci_low:.3f}, {t.ci_high:.3f}]", "evidence n": round(t.n, 2),
             "empirical rate": None if t.empirical_rate is None else round(t.empirical_rate, 4),
             "contribution": round(t.contribution, 4)} for c in step.candidates for t in c.contributions]
    return pd.DataFrame(rows, columns=["agent", "skill", "weight", "mean", "interval", "evidence n",
                                       "empirical rate", "contribution"])


def utility_figure(step: StepTrace, lam: float, routed_lam: float | None = None) -> go.Figure:
    """Stacked competence contributions (one colour per skill) minus the cost penalty, with the utility marked."""
    cands = sorted(step.candidates, key=lambda c: -(c.mean - lam * c.cost_norm))
    agents = [_safe(c.agent) for c in cands]
    fig = go.Figure()
    if cands and cands[0].contributions:
        for j, skill in enumerate(t.skill for t in cands[0].contributions):
            fig.add_bar(name=_safe(skill), x=agents, y=[c.contributions[j].contribution for c in cands])
    else:
        fig.add_bar(name="general competence", x=agents, y=[c.mean for c in cands])
    fig.add_bar(name=f"cost penalty (lambda = {lam:g})", x=agents, y=[-lam * c.cost_norm for c in cands],
                marker_color="#c0392b")
    chosen = step_at(step, lam, routed_lam).chosen
    fig.add_scatter(name="utility", x=agents, y=[c.mean - lam * c.cost_norm for c in cands], mode="markers",
                    marker={"symbol": ["star" if c.agent == chosen else "diamond" for c in cands], "size": 14,
                            "color": "#f39c12", "line": {"width": 1, "color": "#7f7f7f"}})
    fig.update_layout(barmode="relative", height=360, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=f"Step {step.index + 1} ({_safe(step.mode)}): utility = competence - penalty",
                      legend={"orientation": "h", "y": -0.2})
    return fig


def lambda_figure(step: StepTrace, lam: float, lam_max: float | None = None) -> go.Figure:
    """Each candidate's utility as a line in lambda; the winner's envelope is thick; the current lambda is marked."""
    segs = path_segments(step)
    finite = [s.high for s in segs if s.high is not None]
    top = lam_max or max([1.0, lam * 1.5] + [h * 1.25 for h in finite])
    xs = np.linspace(0.0, top, 120)
    fig = go.Figure()
    for c in step.candidates:
        fig.add_scatter(x=xs, y=c.mean - xs * c.cost_norm, mode="lines", name=_safe(c.agent),
                        line={"width": 1, "dash": "dot"})
    for s in segs:
        hi = min(s.high if s.high is not None else top, top)
        if s.low >= top:
            continue
        seg_x = np.linspace(s.low, hi, 30)
        c = step.candidate(s.agent)
        fig.add_scatter(x=seg_x, y=c.mean - seg_x * c.cost_norm, mode="lines", line={"width": 4},
                        name=f"chosen: {_safe(s.agent)}", showlegend=True)
    fig.add_vline(x=lam, line_dash="dash", line_color="#555")
    for s in segs[1:]:
        fig.add_vline(x=s.low, line_color="#bbb")
    fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 30, "b": 10}, xaxis_title="lambda",
                      yaxis_title="utility", title="Which agent wins at each lambda",
                      legend={"orientation": "h", "y": -0.3})
    return fig


def segments_frame(step: StepTrace) -> pd.DataFrame:
    return pd.DataFrame([{"from lambda": f"{s.low:.6g}", "to lambda": "+inf" if s.high is None else f"{s.high:.6g}",
                          "chosen": s.agent} for s in path_segments(step)])


DECISION_COLUMNS = ["id", "chosen", "cause", "query", "router", "version", "lambda", "margin", "steps", "execution",
                    "cost_usd", "actor", "created", "handbook"]


def decisions_table(table: pd.DataFrame) -> pd.DataFrame:
    """The decisions list as shown: who was chosen and why first, then the query and the settings."""
    return table[[c for c in DECISION_COLUMNS if c in table.columns]]


def why_not_markdown(lines: list[str], escape) -> str:
    """`why_not` lines as a Markdown list; an indented line is a sub-point of the line before it."""
    out: list[str] = []
    for line in lines:
        indent = "    " if line.startswith("  ") and out else ""
        out.append(f"{indent}- {escape(line.strip())}")
    return "\n".join(out)
