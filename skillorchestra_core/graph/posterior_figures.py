"""Plotly figures of the Posteriors page: overlaid Beta densities, agent x skill heatmap (the forest plot is
Vega-Lite: posterior_vega).

Names reach Plotly only HTML-escaped (tick labels, legends, hovers), so markup in a skill name shows as text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from skillorchestra_core.graph.posterior_views import MEAN, SCORES
from skillorchestra_core.graph.text import esc, short

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22"]


def agent_colors(agents: list[str]) -> dict[str, str]:
    return {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(agents)}


def density_figure(curves: pd.DataFrame, summary: pd.DataFrame, skill_label: str, level: float) -> go.Figure:
    """Overlaid Beta posterior densities of one skill; `summary`: agent, mean, ci_low, ci_high, n."""
    agents = list(dict.fromkeys(curves["agent"]))
    colors = agent_colors(agents)
    fig = go.Figure()
    stats = summary.set_index("agent")
    for agent in agents:
        c = curves[curves["agent"] == agent]
        s = stats.loc[agent]
        label = esc(f"{agent}: {s['mean']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}] n={s['n']:.0f}")
        fig.add_trace(go.Scatter(x=c["x"].tolist(), y=c["pdf"].tolist(), mode="lines", name=label,
                                 line={"color": colors[agent], "width": 2}, fill="tozeroy",
                                 hovertemplate=f"{esc(agent)}<br>p=%{{x:.3f}}<br>density=%{{y:.2f}}<extra></extra>"))
        fig.add_vline(x=float(s["mean"]), line={"color": colors[agent], "dash": "dot", "width": 1})
    fig.update_layout(
        height=380, margin={"l": 10, "r": 10, "t": 40, "b": 40}, hovermode="closest",
        title={"text": esc(f"Beta posteriors on {skill_label} (dotted: means; legend: {level:.0%} intervals)"),
               "font": {"size": 14}},
        xaxis={"range": [0, 1], "title": {"text": "competence p"}}, yaxis={"title": {"text": "density"}},
        legend={"orientation": "v"},
    )
    return fig


def _cell_targets(z: pd.DataFrame, custom: np.ndarray, hover: str) -> go.Scatter:
    """Invisible points on the cells with a value: a heatmap cell itself cannot be selected in Streamlit, a
    scatter point can, so a click on a cell selects its point (customdata: n, skill label, skill key)."""
    values = z.to_numpy(dtype=float)
    rows, cols = np.nonzero(~np.isnan(values))
    agents = [esc(a) for a in z.index]
    return go.Scatter(
        x=cols.tolist(), y=[agents[i] for i in rows], mode="markers", name="cells", showlegend=False,
        marker={"size": 26, "symbol": "square", "color": "rgba(0,0,0,0)"},
        customdata=[list(custom[i, j][:3]) + [float(values[i, j])] for i, j in zip(rows, cols)],
        hovertemplate=hover.replace("%{z:.3f}", "%{customdata[3]:.3f}"))


def heatmap_figure(z: pd.DataFrame, n: pd.DataFrame, names: dict[str, str], score: str = MEAN) -> go.Figure:
    """Agents x skills of the score; hover shows the skill, the value and the evidence n."""
    skills = list(z.columns)
    labels = [esc(short(names.get(k, k), 32)) for k in skills]
    keys = [esc(k) for k in skills]
    nz = n.to_numpy(dtype=float)
    custom = np.empty(nz.shape + (3,), dtype=object)
    for i in range(nz.shape[0]):
        for j in range(nz.shape[1]):
            custom[i, j] = [0.0 if np.isnan(nz[i, j]) else float(nz[i, j]), labels[j], keys[j]]
    show_text = z.size <= 400
    hover = ("agent %{y}<br>skill %{customdata[1]} (%{customdata[2]})<br>" + esc(SCORES[score])
             + " %{z:.3f}<br>n=%{customdata[0]:.1f}<extra></extra>")
    fig = go.Figure(go.Heatmap(
        z=z.to_numpy(dtype=float).tolist(), x=list(range(len(skills))), y=[esc(a) for a in z.index],
        customdata=custom.tolist(), zmin=0, zmax=1, colorscale="RdYlBu", colorbar={"title": {"text": "score"}},
        text=np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.2f}")(z.to_numpy(dtype=float)).tolist()
        if show_text and z.size else None,
        texttemplate="%{text}" if show_text else None, hovertemplate=hover,
    ))
    fig.add_trace(_cell_targets(z, custom, hover))
    fig.update_layout(
        height=int(min(max(300, 34 * len(z.index) + 160), 1600)), margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"tickmode": "array", "tickvals": list(range(len(skills))), "ticktext": labels, "tickangle": -45,
               "automargin": True},
        yaxis={"automargin": True, "autorange": "reversed"},
    )
    return fig
