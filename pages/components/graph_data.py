"""Cached explorer data for the Graph and Posteriors pages, keyed by (database URL, handbook, version, prior, level).

Versions are immutable, so a cached entry never goes stale; the database URL is part of every key so tests and
deployments with different databases never share entries.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import streamlit as st

from pages.components.context import current_selection
from skillorchestra_core.db import session
from skillorchestra_core.gc_pause import gc_paused
from skillorchestra_core.graph.filters import GraphFilter, GraphView, apply_filter
from skillorchestra_core.graph.render_vega import NODE_PARAM, vega_spec
from skillorchestra_core.graph.service import VersionData, load_version_data, version_graph, with_level
from skillorchestra_core.learning.competence import PriorConfig
from skillorchestra_core.settings import get_settings


def db_url() -> str:
    return get_settings().database_url


def default_prior() -> PriorConfig:
    settings = get_settings()
    return PriorConfig(settings.prior, settings.prior_strength)


# Resources, not data: a version's frames are read-only and can hold 1M evidence rows, which st.cache_data would
# unpickle on every hit (3.4 s per Graph visit at 1M rows); one shared copy serves every page and session.
@st.cache_resource(max_entries=8, show_spinner=False)
def _base_data(url: str, handbook: str, version: int) -> VersionData:
    with session(url) as s:
        return load_version_data(s, handbook, version, default_prior(), 0.95)


def base_data(handbook: str, version: int) -> VersionData:
    """The version's evidence and posteriors under the default prior, loaded once per server (Overview, Graph and
    Posteriors share it)."""
    return _base_data(db_url(), handbook, version)


@st.cache_resource(max_entries=32, show_spinner=False)
def version_data(url: str, handbook: str, version: int, prior_kind: str, strength: float,
                 level: float) -> VersionData:
    return with_level(_base_data(url, handbook, version), level, PriorConfig(prior_kind, strength))


@st.cache_resource(max_entries=8, show_spinner=False)
def full_graph(url: str, handbook: str, version: int, prior_kind: str, strength: float) -> nx.DiGraph:
    """Shared read-only graph of a version (filters copy what they draw, nothing mutates it)."""
    return version_graph(version_data(url, handbook, version, prior_kind, strength, 0.95), with_edges=False)


def selected_data(prior: PriorConfig | None = None, level: float = 0.95) -> VersionData | None:
    """The sidebar's version under `prior` and `level`, or None (with a hint) when nothing is picked."""
    handbook, version = current_selection()
    if handbook is None or version is None:
        st.info("Pick a handbook in the sidebar (or create the demo with `skillorchestra demo`).")
        return None
    prior = prior or default_prior()
    return version_data(db_url(), handbook, version, prior.kind, prior.strength, level)


def selected_graph(data: VersionData) -> nx.DiGraph:
    return full_graph(db_url(), data.loaded.handbook_name, data.loaded.number, data.prior.kind,
                      data.prior.strength)


def current_node() -> str | None:
    return st.query_params.get("node") or None


def set_node(node: str | None) -> None:
    """Remember the selected node in the URL (so the view can be shared)."""
    if node:
        st.query_params["node"] = node
    elif "node" in st.query_params:
        del st.query_params["node"]


def open_from_widget(key: str) -> None:
    """Callback: open the node a widget (e.g. the search-hit picker) holds."""
    if st.session_state.get(key):
        set_node(st.session_state[key])


def node_from_chart(chart_key: str) -> str | None:
    """The node clicked in the Vega-Lite chart `chart_key` (read before the chart is drawn, so the new selection is
    highlighted in the same run); a new click wins over the URL, an unchanged selection leaves the URL alone.
    The point selection NODE_PARAM arrives as `selection[NODE_PARAM]`: a list of {"id": node id} dicts."""
    event = st.session_state.get(chart_key) or {}
    points = (event.get("selection") or {}).get(NODE_PARAM) or []
    ids = [p["id"] for p in points if isinstance(p, dict) and isinstance(p.get("id"), str)]
    seen_key = f"{chart_key}:seen"
    if ids and tuple(ids) != st.session_state.get(seen_key):
        st.session_state[seen_key] = tuple(ids)
        set_node(ids[0])
    elif not ids:
        st.session_state[seen_key] = ()
    return current_node()


@st.cache_data(max_entries=32, show_spinner=False)
def _view(url: str, handbook: str, version: int, prior_kind: str, strength: float, flt: GraphFilter) -> GraphView:
    g = full_graph(url, handbook, version, prior_kind, strength)
    with gc_paused():
        return apply_filter(g, flt)


@st.cache_data(max_entries=32, show_spinner=False)
def _figure(url: str, handbook: str, version: int, prior_kind: str, strength: float, flt: GraphFilter,
            node: str | None, theme: str) -> dict[str, Any]:
    view = _view(url, handbook, version, prior_kind, strength, flt)
    return vega_spec(view.graph, selected=node if node in view.graph else None, theme=theme)


def filtered_view(data: VersionData, flt: GraphFilter) -> GraphView:
    """The filtered graph, cached per (version, prior, filter): a revisit recomputes nothing."""
    return _view(db_url(), data.loaded.handbook_name, data.loaded.number, data.prior.kind, data.prior.strength, flt)


def graph_figure(data: VersionData, flt: GraphFilter, node: str | None, theme: str) -> dict[str, Any]:
    """The Vega-Lite spec of the filtered graph (data in its "datasets"), cached per filter, node and theme."""
    return _figure(db_url(), data.loaded.handbook_name, data.loaded.number, data.prior.kind, data.prior.strength,
                   flt, node, theme)
