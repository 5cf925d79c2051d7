"""`make run` on a busy port says which PORT= to use instead of failing inside Streamlit; data/ exists in git."""

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _check(port: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "skillorchestra_core.portcheck", str(port)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=60)


def test_a_busy_port_names_the_make_variable():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = _check(port)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use (another app?): run `make run PORT={port + 1}` "
        "or stop the other app"]
    assert _check(port).returncode == 0  # free again


def test_make_run_checks_the_port_before_starting_streamlit():
    recipe = (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n\n")[0]
    assert recipe.index("portcheck $(PORT)") < recipe.index("streamlit run")


def test_the_data_folder_is_in_the_repository_and_the_database_is_not():
    tracked = subprocess.run(["git", "ls-files", "data"], capture_output=True, text=True, cwd=ROOT).stdout.split()
    assert "data/README.md" in tracked
    ignored = subprocess.run(["git", "check-ignore", "-q", "data/skillorchestra.db"], cwd=ROOT)
    assert ignored.returncode == 0
