"""The app on a database the user may only read: Overview, Graph and Posteriors show the handbooks, and a write
(Run detection on the Review queue) is one line of error that changes nothing.

The tests run as root, who may write anything, so the permission check is told what an unprivileged user would see
(as in tests/unit/test_read_only_db.py); SQLite then enforces read-only itself (`mode=ro` / `immutable=1`)."""

from __future__ import annotations

import os

import pytest
import streamlit as st
from sqlmodel import func, select
from streamlit.testing.v1 import AppTest

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.db.models import RefinementCandidate
from skillorchestra_core.settings import get_settings


@pytest.fixture(params=["read-only file", "read-only folder"])
def read_only_app(request, demo_db_file, tmp_path, monkeypatch):
    """A copy of the demo this user cannot write (the file, or its folder too), opened by the app."""
    import sqlite3

    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "studio.db"
    src, dst = sqlite3.connect(demo_db_file), sqlite3.connect(path)
    src.backup(dst)
    src.close()
    dst.close()
    path.chmod(0o444)
    denied = {str(path)}
    if request.param == "read-only folder":
        folder.chmod(0o555)
        denied.add(str(folder))
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: (str(p) not in denied or mode != os.W_OK)
                        and real_access(p, mode, **kw))
    url = f"sqlite:///{path}"
    dispose_engines()
    monkeypatch.setenv("SKILLORCHESTRA_DB_URL", url)
    get_settings.cache_clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    yield url, folder, request.param
    dispose_engines()
    get_settings.cache_clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    folder.chmod(0o755)


def _no_side_files(folder) -> bool:
    return sorted(p.name for p in folder.iterdir()) == ["studio.db"]


def test_overview_shows_the_handbooks(read_only_app, app_path):
    _, folder, kind = read_only_app
    at = AppTest.from_file(app_path, default_timeout=60)
    at.query_params["handbook"] = "demo-qa"
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "SkillOrchestra Studio"
    assert sorted(at.dataframe[0].value["name"]) == ["demo-agents", "demo-qa"]
    assert {m.label: m.value for m in at.metric}["Agents"] == "6"
    if kind == "read-only folder":
        assert _no_side_files(folder)  # immutable: not even a WAL file was tried


@pytest.mark.parametrize(("page", "title"), [("pages/graph.py", "Graph"),
                                             ("pages/posteriors.py", "Posteriors")])
def test_graph_and_posteriors_render(read_only_app, open_page, page, title):
    at = open_page(page, {"handbook": "demo-qa"})
    assert not at.exception, at.exception
    assert at.title[0].value == title
    assert at.get("plotly_chart") or at.get("vega_lite_chart"), "the page draws its figure"
    assert any("learned from" in c.value or "showing" in c.value for c in at.caption)


def test_a_write_is_one_line_of_error_and_changes_nothing(read_only_app, open_page):
    url = read_only_app[0]
    at = open_page("pages/review.py", {"handbook": "demo-qa"}, {"ctx:reviewer": "alice"})
    assert not at.exception, at.exception
    at.button(key="rev:detect").click().run()
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and len(errors[0].splitlines()) == 1, errors
    assert "read-only for this user, so nothing was changed" in errors[0]
    dispose_engines()
    with session(url) as s:
        assert s.exec(select(func.count()).select_from(RefinementCandidate)).one() == 0


def test_playground_route_shows_the_result_and_says_it_was_not_logged(read_only_app, open_page):
    from skillorchestra_core.db.models import DecisionTrace

    url, folder, kind = read_only_app
    with session(url) as s:
        before = s.exec(select(func.count()).select_from(DecisionTrace)).one()
    at = open_page("pages/playground.py", {"handbook": "demo-qa"}, {"pg:animate": False})
    assert not at.exception, at.exception
    at.text_area(key="q").set_value("Which emperor ruled Rome after the fall of Carthage?")
    at.button(key="pg:route").click().run()
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and len(errors[0].splitlines()) == 1, errors
    assert "read-only for this user, so nothing was changed" in errors[0]
    result = at.session_state["pg:result"]
    assert len(result["traces"]) == 1 and not result["stored"]  # the routing result is still shown
    assert any(m.value.startswith("#### Step") for m in at.markdown)
    assert any("Not logged" in c.value for c in at.caption)
    dispose_engines()
    with session(url) as s:
        assert s.exec(select(func.count()).select_from(DecisionTrace)).one() == before
    if kind == "read-only folder":
        assert _no_side_files(folder)
