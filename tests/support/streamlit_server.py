"""A real `streamlit run` server on a free loopback port, for the e2e tests and the browser benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic", "--disable-default-apps",
                 "--disable-features=Translate,OptimizationHints,MediaRouter"]
APP_ORIGINS: set[str] = set()  # every server started here: requests to them are not "outside the app"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as resp:
                if resp.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.25)
    raise RuntimeError(f"streamlit was not healthy after {timeout:.0f}s:\n{log.read_text()[-3000:]}")


class AppLauncher:
    """Starts `streamlit run app.py` subprocesses on free loopback ports; stops them all at the end."""

    def __init__(self, log_dir: Path, script: str = "app.py", cwd: Path = ROOT):
        self.log_dir = log_dir
        self.script = script
        self.cwd = cwd
        self.procs: list[subprocess.Popen] = []

    def __call__(self, db_url: str) -> str:
        port = _free_port()
        log = self.log_dir / f"streamlit-{port}.log"
        env = {**os.environ, "SKILLORCHESTRA_DB_URL": db_url, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "LITELLM_OFFLINE_MODE": "true", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        cmd = [sys.executable, "-m", "streamlit", "run", self.script, "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
               "--server.fileWatcherType", "none"]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, cwd=self.cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, proc, log)
        APP_ORIGINS.add(url)
        return url

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


