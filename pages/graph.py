"""Graph: the mode-skill-agent graph of the picked version, filterable, with a panel for the clicked node."""

import streamlit as st

from pages.components.context import theme_type
from pages.components.graph_controls import VIEWS, graph_controls
from pages.components.graph_data import (
    filtered_view,
    graph_figure,
    node_from_chart,
    open_from_widget,
    selected_data,
    selected_graph,
)
from pages.components.graph_panel import render_legend, render_node_panel
from pages.components.shell import ensure_app_shell
from skillorchestra_core.graph.render_dot import dot_source
from skillorchestra_core.graph.render_vega import NODE_PARAM
from skillorchestra_core.graph.text import md_escape

ensure_app_shell()
CHART_KEY = "graph:chart"

st.title("Graph")
data = selected_data()
if data is None:
    st.stop()
g = selected_graph(data)
hb = data.loaded.handbook_name
controls = graph_controls(g, hb)
view = filtered_view(data, controls.filter)
node = node_from_chart(CHART_KEY)

st.caption(f"{md_escape(data.label)} · posteriors {data.learned_from} · "
           f"showing {view.shown_skills} of {view.total_skills} skills, "
           f"{sum(1 for _, d in view.graph.nodes(data=True) if d['kind'] == 'agent')} agents"
           + (" · truncated: narrow with filters" if view.truncated else ""))
if view.matches:
    st.selectbox("Search hits", [""] + view.matches, key=f"graph:hit:{hb}",
                 format_func=lambda n: "Open a hit…" if not n else f"{view.graph.nodes[n]['label']} ({n})",
                 on_change=open_from_widget, args=(f"graph:hit:{hb}",))

left, right = st.columns([3, 2], gap="medium")
with left:
    if controls.view == VIEWS[0]:
        # Vega-Lite, not Plotly: the page draws without the 4.7 MB Plotly script (its page-draw budget)
        st.vega_lite_chart(graph_figure(data, controls.filter, node, theme_type()), on_select="rerun",
                           selection_mode=NODE_PARAM, key=CHART_KEY, width="stretch")
    elif controls.view == VIEWS[1]:
        from skillorchestra_core.graph.render_pyvis import pyvis_html  # 0.5 s to import: only for this view

        st.iframe(pyvis_html(view.graph, height="620px", theme=theme_type()), height=640,
                  alt="Mode-skill-agent graph (physics)")
    else:
        st.graphviz_chart(dot_source(view.graph, selected=node, theme=theme_type()))
    render_legend(view.hidden_note(controls.filter))
with right:
    hidden = view.graph.nodes[node].get("hidden_children", 0) if node in view.graph else 0
    render_node_panel(data, node, hidden)
