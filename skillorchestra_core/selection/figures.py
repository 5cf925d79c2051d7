"""The Pareto figure: accuracy vs mean cost per query, frontier highlighted, dominated runs greyed, baselines, the
objective's selection and bootstrap bands. Labels reach Plotly HTML-escaped."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from skillorchestra_core.graph.text import esc
from skillorchestra_core.selection.runs import RunRecord
from skillorchestra_core.selection.view import ParetoView

MICRO = 1e6  # axis in micro-dollars per query: real costs are fractions of a cent

HOVER = ("%{customdata[1]}<br>accuracy %{y:.3f} [%{customdata[4]:.3f}, %{customdata[5]:.3f}]<br>"
         "cost %{x:.2f} u$/query (x%{customdata[3]:.2f} best single)<br>%{customdata[2]}<extra></extra>")


def _custom(view: ParetoView, idx: list[int]) -> list[list]:
    out = []
    for i in idx:
        r = view.runs[i]
        lo = float(view.bands.acc_low[i]) if view.bands is not None else np.nan
        hi = float(view.bands.acc_high[i]) if view.bands is not None else np.nan
        settings = (f"router {esc(r.router)} · v{r.version} {esc(r.candidate)} · {r.n_skills} skills · "
                    f"λ={r.lam:g} · {r.kind}")
        out.append([r.id, esc(r.label), settings, r.normalised_cost or 0.0, lo, hi])
    return out


def _scatter(view: ParetoView, idx: list[int], name: str, **style) -> go.Scatter:
    runs = [view.runs[i] for i in idx]
    return go.Scatter(x=[r.cost * MICRO for r in runs], y=[r.accuracy for r in runs], name=name,
                      customdata=_custom(view, idx), hovertemplate=HOVER, **style)


def pareto_figure(view: ParetoView) -> go.Figure:
    fig = go.Figure()
    runs = view.runs
    ok = [i for i, r in enumerate(runs) if r.accuracy is not None and r.mean_cost_usd is not None]
    front = sorted((i for i in ok if view.on_frontier[i]), key=lambda i: (runs[i].mean_cost_usd, runs[i].accuracy))
    dominated = [i for i in ok if not view.on_frontier[i] and not runs[i].baseline]
    base = [i for i in ok if runs[i].baseline and not view.on_frontier[i]]
    if view.bands is not None and front:
        x = [runs[i].cost * MICRO for i in front]
        fig.add_trace(go.Scatter(x=x + x[::-1], y=[view.bands.acc_high[i] for i in front] +
                                 [view.bands.acc_low[i] for i in front][::-1], fill="toself", mode="lines",
                                 line={"width": 0}, fillcolor="rgba(31,119,180,0.15)", hoverinfo="skip",
                                 name="bootstrap band (95%)"))
    fig.add_trace(_scatter(view, dominated, "dominated runs", mode="markers",
                           marker={"color": "#c7c7c7", "size": 7}))
    fig.add_trace(_scatter(view, base, "baselines", mode="markers+text", text=[esc(runs[i].router) for i in base],
                           textposition="top center", marker={"color": "#ff7f0e", "size": 9, "symbol": "diamond"}))
    fig.add_trace(_scatter(view, front, "frontier", mode="lines+markers",
                           line={"color": "#1f77b4", "width": 2, "shape": "hv"},
                           marker={"color": "#1f77b4", "size": 10}))
    if view.selected is not None:
        fig.add_trace(_scatter(view, [view.selected], f"selected at λ={view.objective_lambda:g}", mode="markers",
                               marker={"color": "#d62728", "size": 18, "symbol": "star"}))
    fig.update_layout(xaxis_title="mean cost per query (micro-USD)", yaxis_title=f"accuracy ({esc(view.split)})",
                      legend={"orientation": "h", "y": -0.2}, margin={"t": 30}, height=520,
                      title=f"{esc(view.handbook)}: {len(runs)} runs on {esc(view.split)}")
    return fig


def run_of_point(view: ParetoView, point: dict) -> RunRecord | None:
    """The run behind a selected point (its customdata carries the run id)."""
    data = point.get("customdata") or []
    rid = data[0] if data else None
    return next((r for r in view.runs if r.id == rid), None)
