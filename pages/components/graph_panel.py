"""The node panel: a skill (description, indicators, examples, provenance, agents ranked with intervals), an agent
(price card, cost per call by mode, skills ranked) or a mode. Every name goes through md_escape or a dataframe."""

from __future__ import annotations

import streamlit as st

from pages.components.graph_controls import expand_skill, focus_subtree
from skillorchestra_core.graph.build import split_id
from skillorchestra_core.graph.panel import (
    COMPACT_SKILL_COLUMNS,
    AgentPanel,
    ModePanel,
    SkillPanel,
    node_panel,
    price_lines,
    ranking_lines,
)
from skillorchestra_core.graph.service import VersionData
from skillorchestra_core.graph.text import md_escape

NUM = st.column_config.NumberColumn
INTERVAL_COLUMNS = {"mean": NUM("mean", format="%.3f"), "ci_low": NUM("ci low", format="%.3f"),
                    "ci_high": NUM("ci high", format="%.3f"), "n": NUM("n", format="%.1f"),
                    "empirical_rate": NUM("empirical", format="%.3f"), "n_imported": NUM("imported n", format="%.1f")}


def _posteriors_link(data: VersionData, node: str) -> None:
    """Links out of the panel: the Posteriors page on this node, and the decisions that used the skill or agent."""
    where = {"handbook": data.loaded.handbook_name, "version": str(data.loaded.number)}
    kind, ident = split_id(node)
    with st.container(horizontal=True, gap="small"):
        st.page_link("pages/posteriors.py", label="Compare on the Posteriors page →",
                     query_params={**where, "node": node})
        if kind in ("skill", "agent"):
            st.page_link("pages/decisions.py", label=f"Decisions that used this {kind} →",
                         query_params={"handbook": where["handbook"], kind: ident})


def _skill(data: VersionData, p: SkillPanel, hidden: int) -> None:
    hb = data.loaded.handbook_name
    st.subheader(f"Skill · {md_escape(p.name)}")
    st.caption(f"{md_escape(p.key)} · mode {md_escape(p.mode)} · parent {md_escape(p.parent or '(top level)')} "
               f"· {p.n_queries} evidence queries")
    if p.description:
        st.markdown(md_escape(p.description))
    if p.indicators:
        st.markdown("**Indicators**\n\n" + "\n".join(f"- {md_escape(i)}" for i in p.indicators))
    st.markdown(f"**Agents ranked by posterior mean** ({data.level:.0%} credible interval)")
    st.markdown(_ranking(ranking_lines(p.agents)))
    cols = st.columns(2)
    if p.children:
        cols[0].button(f"Expand {len(p.children)} sub-skills", key="graph:expand", disabled=not hidden,
                       on_click=expand_skill, args=(hb, p.key))
        cols[1].button("Show only this subtree", key="graph:focus", on_click=focus_subtree, args=(hb, p.key))
    if p.examples:
        with st.expander(f"Examples ({len(p.examples)})"):
            for ex in p.examples:
                st.text(ex)
    if p.provenance:
        with st.expander("Provenance"):
            st.json(p.provenance)


def _agent(p: AgentPanel) -> None:
    st.subheader(f"Agent · {md_escape(p.name)}")
    st.caption(("model " + ", ".join(md_escape(m) for m in p.models)) if p.models else "no model string")
    if p.tools:
        st.caption("tools: " + ", ".join(md_escape(t) for t in p.tools))
    st.markdown("**Price card and cost per call** (USD; prices per 1M tokens)")
    st.markdown(md_escape_lines(price_lines(p.price_card, p.costs)))
    st.markdown("**Skills ranked by posterior mean**")
    if len(p.skills) <= 30:
        st.markdown(_ranking(ranking_lines(p.skills, "skill")))
    else:
        st.dataframe(p.skills[COMPACT_SKILL_COLUMNS], hide_index=True, width="stretch", column_config=INTERVAL_COLUMNS,
                     key="graph:panel:skills", height=420)


def md_escape_lines(lines: list[str]) -> str:
    return "\n".join(f"- {md_escape(line)}" for line in lines)


def _ranking(lines: list[tuple[str, str]]) -> str:
    return "\n".join(f"{i}. **{md_escape(name)}** {md_escape(figures)}" for i, (name, figures) in
                     enumerate(lines, 1))


def _mode(p: ModePanel) -> None:
    st.subheader(f"Mode · {md_escape(p.name)}")
    if p.description:
        st.markdown(md_escape(p.description))
    st.caption(f"{p.n_skills} skills · {len(p.agents)} agents: " + ", ".join(md_escape(a) for a in p.agents))
    if p.top_skills:
        st.markdown("**Skills with the most evidence**\n\n" + "\n".join(f"- {md_escape(k)}" for k in p.top_skills))
    if p.insights:
        with st.expander("Insights"):
            st.json(p.insights)


def render_node_panel(data: VersionData, node: str | None, hidden_children: int = 0) -> None:
    panel = node_panel(data, node)
    if panel is None or node is None:
        if node:
            st.caption(f"{md_escape(node)} is not part of {md_escape(data.label)}.")
        st.info("Click a node in the graph (or pick a search hit) to open its panel.")
        return
    if isinstance(panel, SkillPanel):
        _skill(data, panel, hidden_children)
    elif isinstance(panel, AgentPanel):
        _agent(panel)
    else:
        _mode(panel)
    _posteriors_link(data, node)


LEGEND = (
    "**Legend** · ■ blue square: mode · ● orange circle: skill (size: evidence queries; `(+N)`: N sub-skills "
    "collapsed) · ◆ green diamond: agent · grey lines: the skill tree · coloured lines: an agent's posterior mean "
    "on the skill, on the legend's colour scale (red: weak, orange: middling, blue: strong; thicker is higher); hover "
    "an edge for the interval and n. Selected node: pink ring; search hits: dark ring."
)


def render_legend(hidden_note: str = "") -> None:
    st.caption(LEGEND)
    if hidden_note:
        st.caption(md_escape(hidden_note))
    else:
        st.caption("Every agent's competence edge on every shown skill is drawn (thin them with the best-k control).")
