"""Per-version caches for page read models: a version never changes, and `data_revision` moves with every new
version, so nothing is reloaded per visit and nothing goes stale. The database URL is part of every key."""

from __future__ import annotations

import streamlit as st

from pages.components.context import open_session
from pages.components.graph_data import base_data
from skillorchestra_core.handbook.overview import VersionOverview, overview_of
from skillorchestra_core.handbook.revision import data_revision
from skillorchestra_core.handbook.store import HandbookSummary, summarise_handbooks
from skillorchestra_core.settings import get_settings


def revision() -> tuple[int, int, int]:
    with open_session() as s:
        return data_revision(s)


@st.cache_data(max_entries=4, show_spinner=False)
def _summaries(url: str, stamp: tuple) -> list[HandbookSummary]:
    with open_session() as s:
        return summarise_handbooks(s)


@st.cache_data(max_entries=16, show_spinner=False)
def _overview(url: str, handbook: str, version: int, stamp: tuple) -> VersionOverview:
    data = base_data(handbook, version)  # the version the Graph and Posteriors read too, loaded once
    with open_session() as s:
        return overview_of(s, data.loaded, data.frames, data.summary, data.costs)


def summaries() -> list[HandbookSummary]:
    return _summaries(get_settings().database_url, revision())


def overview(handbook: str, version: int) -> VersionOverview:
    """The version's overview; the stamp keys only its versions table (a new version elsewhere re-reads it)."""
    return _overview(get_settings().database_url, handbook, version, revision())
