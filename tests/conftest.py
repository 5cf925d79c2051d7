"""Shared fixtures: offline flags, temporary databases, the demo database built once per run."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
SHARED_LLMROUTER = (ROOT.parent / "shared" / "data" / "llmrouter").resolve()


@pytest.fixture
def db_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'studio.db'}"


@pytest.fixture
def db_session(db_url):
    from skillorchestra_core.db import session

    with session(db_url) as s:
        yield s


@pytest.fixture(scope="session")
def demo_db_file(tmp_path_factory) -> Path:
    """The demo database, built once; tests get copies."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.demo import build_demo

    path = tmp_path_factory.mktemp("demo") / "demo.db"
    with session(f"sqlite:///{path}") as s:
        build_demo(s)
        s.commit()
    dispose_engines()
    return path


@pytest.fixture
def demo_db_url(demo_db_file, tmp_path) -> str:
    target = tmp_path / "demo-copy.db"
    src, dst = sqlite3.connect(demo_db_file), sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()
    return f"sqlite:///{target}"


@pytest.fixture
def app_db(monkeypatch, demo_db_url):
    """Point the Streamlit app (AppTest) at a fresh copy of the demo database."""
    import streamlit as st

    from skillorchestra_core.settings import get_settings

    monkeypatch.setenv("SKILLORCHESTRA_DB_URL", demo_db_url)
    get_settings.cache_clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    yield demo_db_url
    get_settings.cache_clear()
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def llmrouter_dir() -> Path:
    if not (SHARED_LLMROUTER / "dcrouter_train.json").exists():
        pytest.skip(f"LLMRouter outcome set not found at {SHARED_LLMROUTER} (it lives in ../shared/data/llmrouter)")
    return SHARED_LLMROUTER


@pytest.fixture
def app_path() -> str:
    """The Streamlit entry point, for AppTest.from_file (relative paths resolve against the test file)."""
    return str(ROOT / "app.py")
