"""Shared page context: the engine, and the handbook/version the sidebar picked (carried in the URL)."""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st
from sqlmodel import Session

from skillorchestra_core.db import get_engine
from skillorchestra_core.errors import NotFound
from skillorchestra_core.handbook.revision import handbook_names
from skillorchestra_core.handbook.store import get_version, list_versions


@st.cache_resource
def _engine(url: str | None):
    return get_engine(url)


def open_session() -> Session:
    """One Session per rerun or callback; never keep ORM objects in session_state."""
    return Session(_engine(None), expire_on_commit=False)


class Selection(NamedTuple):
    handbook: str | None
    version: int | None


def _param_int(name: str) -> int | None:
    raw = st.query_params.get(name)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def sidebar_picker() -> Selection:
    """Handbook and version pickers in the sidebar; the choice lives in the URL so a view can be shared."""
    with open_session() as s:
        names = handbook_names(s)  # names only: the evidence counts are the Overview's business
    if not names:
        st.sidebar.info("No handbook yet. Run `skillorchestra demo` or import outcomes.")
        return Selection(None, None)
    wanted = st.query_params.get("handbook")
    index = names.index(wanted) if wanted in names else 0
    name = st.sidebar.selectbox("Handbook", names, index=index, key="ctx:handbook")
    with open_session() as s:
        numbers = [v.number for v in list_versions(s, name)][::-1]
    wanted_v = _param_int("version")
    v_index = numbers.index(wanted_v) if wanted_v in numbers and wanted == name else 0
    number = st.sidebar.selectbox("Version", numbers, index=v_index, key=f"ctx:version:{name}",
                                  format_func=lambda n: f"v{n}" + (" (latest)" if n == numbers[0] else ""))
    st.query_params["handbook"] = name
    st.query_params["version"] = str(number)
    return Selection(name, number)


def current_selection() -> Selection:
    """The sidebar's pick, else the URL the picker writes (?handbook=&version=), which also holds when only the
    page script reruns (AppTest re-runs just the page of an st.navigation app). A missing version means the latest."""
    handbook = st.session_state.get("ctx:handbook")
    if handbook is not None:
        version = st.session_state.get(f"ctx:version:{handbook}")
    else:
        handbook, version = st.query_params.get("handbook"), _param_int("version")
    if handbook is not None and version is None:
        with open_session() as s:
            try:
                version = get_version(s, handbook).number
            except NotFound:
                return Selection(None, None)
    return Selection(handbook, version)


def theme_type() -> str:
    """"light" or "dark": the theme the browser shows (figures pick matching label backgrounds)."""
    theme = getattr(st.context, "theme", None)
    kind = getattr(theme, "type", None) if theme is not None else None
    return kind if kind in ("light", "dark") else "light"
