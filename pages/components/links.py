"""Links between pages: a decision's agent and skills open the graph node and the posterior cell (URL state)."""

from __future__ import annotations

import streamlit as st

from skillorchestra_core.display_text import md_line
from skillorchestra_core.routing.trace import RouteTrace, StepTrace
from skillorchestra_core.routing.what_if import StepAt


def _params(trace: RouteTrace, **extra) -> dict[str, str]:
    return {"handbook": trace.handbook, "version": str(trace.version), **extra}


def step_links(trace: RouteTrace):
    """A callable for `render_step(links=...)`: one row of links for the step's chosen agent and active skills."""

    def draw(step: StepTrace, at: StepAt) -> None:
        agent = at.chosen or step.chosen
        if not agent or trace.version is None:
            return
        with st.container(horizontal=True, gap="small"):
            st.page_link("pages/graph.py", label=f"{md_line(agent)} in the graph",
                         query_params=_params(trace, node=f"agent:{agent}"))
            for a in step.active_skills:
                st.page_link("pages/graph.py", label=f"{md_line(a.skill)} in the graph",
                             query_params=_params(trace, node=f"skill:{a.skill}"))
                st.page_link("pages/posteriors.py", label=f"{md_line(agent)} on {md_line(a.skill)}: evidence",
                             query_params=_params(trace, node=f"skill:{a.skill}", agent=agent))

    return draw
