"""Posteriors page blocks: the unseen-cell explanation, the density summary and the paged evidence table."""

from __future__ import annotations

import math

import streamlit as st

from pages.components.context import open_session
from skillorchestra_core.graph.posterior_figures import density_figure
from skillorchestra_core.graph.posterior_views import EMPIRICAL, density_curves, evidence_page, unseen_summary
from skillorchestra_core.graph.service import VersionData
from skillorchestra_core.graph.text import md_escape

NUM = st.column_config.NumberColumn


def render_unseen_note(data: VersionData, agents: list[str], skills: list[str], score: str) -> None:
    u = unseen_summary(data, skills, agents)
    if not u.total:
        return
    prior = ("the agent's pooled rate in the mode (hierarchical prior)" if data.prior.kind == "hierarchical"
             else "0.5 (flat prior)")
    if u.cells:
        msg = (f"{u.cells} of {u.total} agent-skill cells shown have no evidence. The reference code scores them "
               f"**0** (empirical rate), which reads as 'always fails'; the posterior gives them "
               f"{u.mean_posterior:.2f} on average, i.e. {prior}, with a wide interval.")
    else:
        msg = (f"All {u.total} agent-skill cells shown have evidence. With little evidence the empirical rate "
               f"jumps to 0 or 1; the posterior mean shrinks it towards {prior}.")
    (st.warning if score == EMPIRICAL and u.cells else st.info)(msg)


def render_density(data: VersionData, skill: str | None, agents: list[str]) -> None:
    if not skill or not agents:
        st.info("Pick at least one agent and a skill.")
        return
    curves = density_curves(data, skill, agents)
    if curves.empty:
        st.info("None of the chosen agents works in this skill's mode.")
        return
    comp = data.competence
    summary = comp[(comp["skill"] == skill) & comp["agent"].isin(agents)][
        ["agent", "mean", "ci_low", "ci_high", "n", "empirical_rate", "alpha", "beta", "basis"]]
    name = data.loaded.content.skills[skill].name or skill
    st.plotly_chart(density_figure(curves, summary, name, data.level), key="post:density_chart")
    st.dataframe(summary.sort_values("mean", ascending=False), hide_index=True, width="stretch",
                 key="post:density_table",
                 column_config={c: NUM(format="%.3f") for c in ("mean", "ci_low", "ci_high", "empirical_rate")})


def render_evidence(data: VersionData, agent: str | None, skill: str | None, page: int, page_size: int = 20) -> None:
    if not agent or not skill:
        return
    with open_session() as s:
        ev = evidence_page(s, data, agent, skill, page, page_size)
    row = data.competence[(data.competence["agent"] == agent) & (data.competence["skill"] == skill)]
    if row.empty:
        st.info(f"{md_escape(agent)} does not work in the mode of {md_escape(skill)}.")
        return
    r = row.iloc[0]
    emp = "unseen" if math.isnan(r["empirical_rate"]) else f"{r['empirical_rate']:.3f}"
    st.markdown(
        f"**{md_escape(agent)}** on **{md_escape(skill)}**: S = {ev.successes:.2f}, F = {ev.failures:.2f} "
        f"from {ev.total} trajectories (weights: the query's attribution to the skill or its sub-skills); "
        f"prior Beta({r['a0']:.2f}, {r['b0']:.2f}); imported n = {r['n_imported']:.1f}; posterior "
        f"Beta({r['alpha']:.2f}, {r['beta']:.2f}), mean {r['mean']:.3f} "
        f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}], empirical rate {emp}.")
    if not ev.total:
        st.info("No evidence behind this cell: the posterior is the prior (plus imported counts, if any).")
        return
    if ev.by_source:  # live feedback shows apart from imported evidence
        st.caption("By evidence source: " + "; ".join(f"{md_escape(k)} S = {v['S']:.2f}, F = {v['F']:.2f} "
                                                      f"({v['n']} trajectories)" for k, v in ev.by_source.items()))
    st.caption(f"Page {ev.page} of {ev.pages} · {page_size} per page")
    st.dataframe(ev.rows, hide_index=True, width="stretch", key="post:evidence_table",
                 column_config={"weight": NUM(format="%.3f"), "S": NUM(format="%.3f"), "F": NUM(format="%.3f"),
                                "cost_usd": NUM("cost (USD)", format="%.6f")})
