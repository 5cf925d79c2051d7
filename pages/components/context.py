"""Shared page context: the engine, and the handbook/version the sidebar picked (carried in the URL)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from sqlmodel import Session

from skillorchestra_core.db import get_engine
from skillorchestra_core.handbook.store import LoadedVersion, list_versions, load_version, summarise_handbooks


@st.cache_resource
def _engine(url: str | None):
    return get_engine(url)


def open_session() -> Session:
    """One Session per rerun or callback; never keep ORM objects in session_state."""
    return Session(_engine(None), expire_on_commit=False)


@dataclass(frozen=True)
class Selection:
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
        names = [h.name for h in summarise_handbooks(s)]
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
    return Selection(st.session_state.get("ctx:handbook"),
                     st.session_state.get(f"ctx:version:{st.session_state.get('ctx:handbook')}"))


def load_selected() -> LoadedVersion | None:
    """The version the sidebar picked, or None (with a hint shown) when there is none."""
    sel = current_selection()
    if sel.handbook is None or sel.version is None:
        st.info("Pick a handbook in the sidebar (or create the demo with `skillorchestra demo`).")
        return None
    with open_session() as s:
        return load_version(s, sel.handbook, sel.version)
