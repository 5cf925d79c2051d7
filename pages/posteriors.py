"""Posteriors: agent profiles as Beta posteriors with credible intervals; forest plot, densities, heatmap, evidence."""

import streamlit as st

from pages.components.graph_data import default_prior, selected_data
from pages.components.posterior_controls import (
    HEATMAP_KEY,
    default_focus,
    density_skill,
    evidence_cell,
    open_cell_from_heatmap,
    selection_controls,
    top_controls,
)
from pages.components.posterior_panels import render_density, render_evidence, render_unseen_note
from pages.components.shell import ensure_app_shell
from skillorchestra_core.graph.posterior_figures import heatmap_figure
from skillorchestra_core.graph.posterior_vega import forest_data, forest_spec
from skillorchestra_core.graph.posterior_views import forest_rows, heatmap_frames, skill_names
from skillorchestra_core.graph.text import md_escape

ensure_app_shell()
st.title("Posteriors")
st.caption("Competence of each agent on each skill: Beta(a0 + S, b0 + F) from weighted outcomes. Compare agents, "
           "see how wide the intervals are, and what a flat prior or the reference code's empirical rate would say.")
level, prior, score = top_controls(default_prior())
data = selected_data(prior, level)
if data is None:
    st.stop()
agents, skills = selection_controls(data)
st.caption(f"{md_escape(data.label)}: every posterior here is {data.learned_from} "
           "(val and test outcomes are kept for evaluation).")
render_unseen_note(data, agents, skills, score)

TABS = ["Forest plot", "Densities", "Heatmap", "Evidence"]
open_cell_from_heatmap(data, HEATMAP_KEY)  # a clicked heatmap cell opens its evidence
# Lazy tabs: only the open tab runs (a link naming an agent opens on its evidence).
forest_tab, density_tab, heatmap_tab, evidence_tab = st.tabs(
    TABS, key="post:tab", on_change="rerun", default="Evidence" if st.query_params.get("agent") else None)
focus = default_focus(data, skills)  # the URL's skill node, else the first chosen skill
if forest_tab.open:
    with forest_tab:
        if agents and skills:  # Vega-Lite, not Plotly: the first view draws without the 4.7 MB Plotly script
            rows = forest_rows(data, agents, skills, score)
            st.vega_lite_chart(forest_data(rows), forest_spec(rows, agents, level, score), key="post:forest",
                               width="stretch")
        else:
            st.info("Pick at least one agent and one skill.")
if density_tab.open:
    with density_tab:
        render_density(data, density_skill(data, skills), agents)
if heatmap_tab.open:
    with heatmap_tab:
        if agents and skills:
            z, n = heatmap_frames(data, agents, skills, score)
            st.caption("Click a cell to open its evidence.")
            st.plotly_chart(heatmap_figure(z, n, skill_names(data), score), key=HEATMAP_KEY, on_select="rerun",
                            selection_mode="points")
        else:
            st.info("Pick at least one agent and one skill.")
if evidence_tab.open:
    with evidence_tab:
        render_evidence(data, *evidence_cell(data, agents, focus))
