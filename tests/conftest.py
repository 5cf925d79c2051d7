"""Shared fixtures: offline flags, temporary databases, the demo database built once per run."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
SHARED_LLMROUTER = (ROOT.parent / "shared" / "data" / "llmrouter").resolve()


@pytest.fixture
def sqlite_db_url(tmp_path) -> str:
    """An SQLite file, also where a test module has made `db_url` mean both engines."""
    return f"sqlite:///{tmp_path / 'studio.db'}"


@pytest.fixture
def db_url(sqlite_db_url) -> str:
    return sqlite_db_url


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


PG_BIN = next((p for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
               if (p / "initdb").exists()), None) if Path("/usr/lib/postgresql").exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_unavailable(reason: str):
    """Skip where PostgreSQL cannot run here; fail when the run demands it (STUDIO_REQUIRE_POSTGRES=1, as in CI)."""
    if os.environ.get("STUDIO_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required (STUDIO_REQUIRE_POSTGRES=1) but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_url():
    """A throwaway PostgreSQL cluster on loopback for the whole run (skipped where the server is not installed)."""
    if PG_BIN is None or shutil.which("runuser") is None:
        _pg_unavailable("PostgreSQL server binaries (/usr/lib/postgresql/*/bin) not installed")
    if os.geteuid() != 0:
        _pg_unavailable("starting a throwaway PostgreSQL cluster here needs root (to run it as user postgres)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _pg_unavailable("the psycopg driver is not installed")
    data = Path(tempfile.mkdtemp(prefix="studio-pg-"))  # pytest's tmp dirs are private to root
    shutil.chown(data, "postgres")
    data.chmod(0o700)
    port = _free_port()
    as_pg = ["runuser", "-u", "postgres", "--"]
    try:
        subprocess.run([*as_pg, str(PG_BIN / "initdb"), "-D", str(data / "db"), "-A", "trust", "-U", "postgres"],
                       check=True, capture_output=True)
        subprocess.run([*as_pg, str(PG_BIN / "pg_ctl"), "-D", str(data / "db"), "-w", "-l", str(data / "log"),
                        "-o", f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(data, ignore_errors=True)
        _pg_unavailable(f"the throwaway cluster did not start: {(exc.stderr or b'').decode().strip()[-300:]}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        from skillorchestra_core.db import dispose_engines

        dispose_engines()
        subprocess.run([*as_pg, str(PG_BIN / "pg_ctl"), "-D", str(data / "db"), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(data, ignore_errors=True)


def _pg_create_database(pg_url: str, template: str | None = None) -> str:
    """CREATE DATABASE (a copy of `template` when given: a file copy, far faster than seeding again); its URL."""
    import uuid

    from sqlalchemy import create_engine, text

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else "")))
    admin.dispose()
    return pg_url.rsplit("/", 1)[0] + f"/{name}"


def _pg_drop_database(pg_url: str, url: str) -> None:
    """Close this process's connections to a test database and drop it: a run makes hundreds of them, and the
    cluster allows only 100 connections at once."""
    from sqlalchemy import create_engine, text

    from skillorchestra_core.db import dispose_engines

    dispose_engines()
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)"))
    admin.dispose()


@pytest.fixture
def pg_db_url(pg_url):
    """A fresh, empty database in the throwaway cluster."""
    url = _pg_create_database(pg_url)
    yield url
    _pg_drop_database(pg_url, url)


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db_url(request, tmp_path):
    """The same test on an SQLite file and on PostgreSQL (skipped where the server is not installed)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'studio.db'}"
    return request.getfixturevalue("pg_db_url")


_RUN_LAST = {"e2e": 1, "bench": 2}  # top-level folder under tests/ -> rank; every other test ranks 0


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Browser tests, then benchmarks, run after everything else. The sort is stable, so pytest-randomly's shuffle
    (which runs first) still decides the order within each group."""
    tests = ROOT / "tests"

    def rank(item) -> int:
        path = Path(str(item.path)).resolve()
        return _RUN_LAST.get(path.relative_to(tests).parts[0], 0) if path.is_relative_to(tests) else 0

    items.sort(key=rank)


@pytest.fixture
def any_db_session(any_db_url):
    """A session on an empty database, once on SQLite and once on PostgreSQL."""
    from skillorchestra_core.db import session

    with session(any_db_url) as s:
        yield s


@pytest.fixture(scope="session")
def pg_demo_template(pg_url) -> str:
    """The demo built once into a PostgreSQL database that tests copy (CREATE DATABASE ... TEMPLATE)."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.demo import build_demo

    url = _pg_create_database(pg_url)
    with session(url) as s:
        build_demo(s)
        s.commit()
    dispose_engines()  # a template must have no open connections
    return url.rsplit("/", 1)[1]


@pytest.fixture(params=["sqlite", "postgresql"])
def any_demo_db_url(request):
    """A fresh copy of the demo database, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        yield request.getfixturevalue("demo_db_url")
        return
    pg = request.getfixturevalue("pg_url")
    url = _pg_create_database(pg, request.getfixturevalue("pg_demo_template"))
    yield url
    _pg_drop_database(pg, url)


def _sqlite_copy(src: Path, dst: Path) -> str:
    """A copy of an SQLite database and of its routing-model cache folder (so the copy's first route is a cache
    hit, as the original's would be); its URL."""
    a, b = sqlite3.connect(src), sqlite3.connect(dst)
    a.backup(b)
    a.close()
    b.close()
    cache = src.with_name(src.name + ".routing")
    if cache.exists():
        shutil.copytree(cache, dst.with_name(dst.name + ".routing"))
    return f"sqlite:///{dst}"


def _build_mini(url: str) -> None:
    from support.handbooks import build_mini_agents, build_mini_qa

    from skillorchestra_core.db import dispose_engines, session

    with session(url) as s:
        build_mini_qa(s)
        build_mini_agents(s)
        s.commit()
    dispose_engines()


@pytest.fixture(scope="session")
def mini_db_file(tmp_path_factory) -> Path:
    """The two small routing handbooks (support/handbooks.py), built once into an SQLite file that tests copy."""
    from support.handbooks import MINI_AGENTS, MINI_QA

    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.routing.build import routing_model

    path = tmp_path_factory.mktemp("mini") / "mini.db"
    _build_mini(f"sqlite:///{path}")
    with session(f"sqlite:///{path}") as s:  # fills the on-disk model cache that the copies take along
        routing_model(s, MINI_QA)
        routing_model(s, MINI_AGENTS)
    dispose_engines()
    return path


@pytest.fixture(scope="session")
def pg_mini_template(pg_url) -> str:
    url = _pg_create_database(pg_url)
    _build_mini(url)
    return url.rsplit("/", 1)[1]


@pytest.fixture
def mini_db_copy(request, tmp_path):
    """`mini_db_copy("sqlite" | "postgresql")`: the URL of a fresh copy of the small routing handbooks' database
    (mini-qa and mini-agents), made only when asked for; PostgreSQL copies are dropped afterwards."""
    made: list[tuple[str, str]] = []

    def copy(engine: str) -> str:
        if engine == "sqlite":
            return _sqlite_copy(request.getfixturevalue("mini_db_file"), tmp_path / f"mini-copy-{len(made)}.db")
        pg = request.getfixturevalue("pg_url")
        made.append((pg, _pg_create_database(pg, request.getfixturevalue("pg_mini_template"))))
        return made[-1][1]

    yield copy
    for pg, url in made:
        _pg_drop_database(pg, url)


@pytest.fixture(params=["sqlite", "postgresql"])
def any_mini_db_url(request, mini_db_copy):
    """A fresh copy of the small routing handbooks' database, once on SQLite and once on PostgreSQL."""
    return mini_db_copy(request.param)
