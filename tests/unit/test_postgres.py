"""The same core code on a real PostgreSQL server (started here on loopback when its binaries are present)."""

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

PG_BIN = next((p for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
               if (p / "initdb").exists()), None) if Path("/usr/lib/postgresql").exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def pg_url():
    if PG_BIN is None or shutil.which("runuser") is None:
        pytest.skip("PostgreSQL server binaries (/usr/lib/postgresql/*/bin) not installed")
    if os.geteuid() != 0:
        pytest.skip("starting a throwaway PostgreSQL cluster here needs root (to run it as user postgres)")
    pytest.importorskip("psycopg")
    data = Path(tempfile.mkdtemp(prefix="studio-pg-"))  # pytest's tmp dirs are private to root
    shutil.chown(data, "postgres")
    data.chmod(0o700)
    port = _free_port()
    as_pg = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*as_pg, str(PG_BIN / "initdb"), "-D", str(data / "db"), "-A", "trust", "-U", "postgres"],
                   check=True, capture_output=True)
    subprocess.run([*as_pg, str(PG_BIN / "pg_ctl"), "-D", str(data / "db"), "-w", "-l", str(data / "log"), "-o",
                    f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "start"], check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        from skillorchestra_core.db import dispose_engines

        dispose_engines()
        subprocess.run([*as_pg, str(PG_BIN / "pg_ctl"), "-D", str(data / "db"), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(data, ignore_errors=True)


def test_demo_and_competence_match_sqlite_on_postgresql(pg_url, demo_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.demo import build_demo
    from skillorchestra_core.handbook.delete import delete_handbook
    from skillorchestra_core.handbook.overview import show_record

    with session(pg_url) as s:
        build_demo(s)
        s.commit()
        on_pg = show_record(s, "demo-agents")
    with session(demo_db_url) as s:
        on_sqlite = show_record(s, "demo-agents")
    assert on_pg["content_hash"] == on_sqlite["content_hash"]
    assert on_pg["counts"] == on_sqlite["counts"]
    assert on_pg["competence"] == on_sqlite["competence"]
    with session(pg_url) as s:
        delete_handbook(s, "demo-agents")
        s.commit()
        assert [h["handbook"] for h in [show_record(s, "demo-qa")]] == ["demo-qa"]
