"""End-to-end harness: a real `streamlit run` on a free loopback port over a temporary demo database, driven by
Playwright in Debian's chromium (never a downloaded browser).

Fixtures for every e2e test module:
- `app_server` (session): base URL of the running app, e.g. "http://127.0.0.1:43817".
- `launch_app` (session): `launch_app(db_url)` starts one more app server on another database, returns its URL.
- `e2e_db_url` (session): the SQLAlchemy URL of the app's temporary database (demo + an escaping probe handbook).
- `browser` (session): a headless chromium Browser.
- `page`: a fresh Page (1400x1000) whose requests are all recorded; the test fails if any request leaves the app
  origin (data:, blob:, about: are fine). `page.external_requests` lists offenders so far, and
  `page.dialogs` lists any JS dialogs (alert/confirm) that fired; dialogs are dismissed.
- `screenshot(page, name)`: saves artifacts/screenshots/<name>.png under the repo root and returns the path.
- `wait_for_app(page)`: waits until Streamlit has finished running the script and lazy parts have loaded.
- `escape_probe` (session): the handbook in the app's database whose skill name is `<img src=x onerror=alert(1)>`.
- `warm_up` (session): `warm_up(base_url)` opens a server's entry page once, so the first test does not pay the
  server's start-up. (A cold deep link works too: test_deep_link_e2e.py.)
- `open_context`: `open_context(viewport, color_scheme) -> (context, page)`, a page recording requests outside the
  app origins in `page.external` (for tests that need a viewport, a theme or a second browser context).
- `copy_db` (session): `copy_db(url, target_path) -> url`, a copy of a SQLite database.
- `draw_times` (session): `draw_times.record(page_name, column, seconds)`; `draw_times.trivial(column, new_page)`
  times a trivial Streamlit page (its own server, started on first use) in fresh pages from `new_page()` (median).
  The table is printed at the end of the run, with the budget of tests/bench/test_bench_page_draw.py (printed, never
  asserted).
The server launcher itself lives in tests/support/streamlit_server.py (the browser benchmarks use it too).

All tests in tests/e2e are marked `e2e` and skip, with the reason, when /usr/bin/chromium is absent.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.page_draw import BUDGET_S, FRESH_REPEATS, visit, write_trivial
from support.streamlit_server import APP_ORIGINS, CHROMIUM, CHROMIUM_ARGS, ROOT, AppLauncher

SCREENSHOTS = ROOT / "artifacts" / "screenshots"
# The handbook with markup in a skill name, for the escaping checks (sorts after the demo handbooks).
ESCAPE_HANDBOOK = "escape-probe"
XSS_LABEL = "<img src=x onerror=alert(1)>"
XSS_QUERY = "<script>alert(2)</script> what is 2+2?"
XSS_SKILL = "answer.img_src_x_onerror_alert_1"  # the key ingest derives from XSS_LABEL
_LOCAL_SCHEMES = ("data:", "blob:", "about:")


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    skip = pytest.mark.skip(reason=f"e2e tests need Debian chromium at {CHROMIUM} (apt-get install chromium); "
                                   "no browser is downloaded")
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if not os.path.exists(CHROMIUM):
                item.add_marker(skip)


def _copy_db(src: Path, dst: Path) -> None:
    a, b = sqlite3.connect(src), sqlite3.connect(dst)
    a.backup(b)
    a.close()
    b.close()


def _add_escape_probe(url: str) -> None:
    """A small handbook whose skill name, description and query text carry markup that must show as text."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes

    rows, line = [], 0
    for q in range(4):
        for agent, score in (("agent-a", float(q != 1)), ("agent-b", float(q % 2 == 0))):
            line += 1
            rows.append(OutcomeRow(line=line, query_id=f"q{q}", query=f"{XSS_QUERY} #{q}" if q == 0 else f"plain {q}",
                                   agent=agent, score=score, task=XSS_LABEL if q < 3 else "<b>bold</b> & co"))
    with session(url) as s:
        ingest_outcomes(s, ESCAPE_HANDBOOK, rows, source_label="e2e-escape", skills_from_task=True,
                        description="Markup in names must render as text.", synthetic=True)
        s.commit()
    dispose_engines()


@pytest.fixture(scope="session")
def e2e_db_url(demo_db_file, tmp_path_factory) -> str:
    """A copy of the demo database (built once per run by tests/conftest.py) plus the escaping probe handbook."""
    target = tmp_path_factory.mktemp("e2e") / "e2e.db"
    _copy_db(demo_db_file, target)
    url = f"sqlite:///{target}"
    _add_escape_probe(url)
    return url




@pytest.fixture(scope="session")
def launch_app(tmp_path_factory):
    """`launch_app(db_url) -> base URL`: another app server (e.g. on a bigger database), stopped at session end."""
    launcher = AppLauncher(tmp_path_factory.mktemp("e2e-log"))
    yield launcher
    launcher.stop()


@pytest.fixture(scope="session")
def app_server(e2e_db_url, launch_app):
    return launch_app(e2e_db_url)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _warm_up(browser, base_url: str) -> str:
    """Open the entry page once per server, so timing-sensitive tests do not pay the server's first run."""
    context = browser.new_context()
    pg = context.new_page()
    pg.goto(base_url)
    pg.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=60_000)
    pg.locator('[data-testid="stSidebarNav"]').wait_for(timeout=30_000)
    context.close()
    return base_url


@pytest.fixture(scope="session")
def warm_app(browser, app_server):
    return _warm_up(browser, app_server)


@pytest.fixture(scope="session")
def warm_up(browser):
    """`warm_up(base_url)`: the same first visit for a server started with `launch_app`."""
    return lambda base_url: _warm_up(browser, base_url)


@pytest.fixture
def page(browser, app_server, warm_app):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    pg.requests = []
    pg.external_requests = []
    pg.dialogs = []

    def on_request(req):
        pg.requests.append(req.url)
        origin = "/".join(req.url.split("/", 3)[:3])
        if not (origin in APP_ORIGINS or req.url.startswith(_LOCAL_SCHEMES)):
            pg.external_requests.append(req.url)

    def on_dialog(dialog):
        pg.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    pg.on("request", on_request)
    pg.on("dialog", on_dialog)
    yield pg
    external = list(pg.external_requests)
    context.close()
    assert not external, f"the page made requests outside the app origin {app_server}: {external[:10]}"


def wait_for_app(pg, timeout: float = 30_000) -> None:
    """Wait until the script run is over (stApp's data-test-script-state) and no skeleton placeholder is left.

    (Not "networkidle": a page holding a srcdoc iframe never reaches it in chromium.)"""
    pg.wait_for_timeout(250)
    pg.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=timeout)
    pg.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=timeout)
    pg.wait_for_timeout(500)


def screenshot(pg, name: str) -> Path:
    """Save the whole app (Streamlit scrolls inside its main block, so the viewport is grown to fit it first)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    size = pg.viewport_size or {"width": 1400, "height": 1000}
    height = pg.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                         " return m ? m.scrollHeight : document.body.scrollHeight; }")
    pg.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), 5000))})
    pg.wait_for_timeout(400)
    pg.screenshot(path=str(path), full_page=True)
    pg.set_viewport_size(size)
    return path


@pytest.fixture(scope="session")
def escape_probe():
    """Names in the app's database that carry markup: handbook, label (a skill name), skill (its key), query."""
    return SimpleNamespace(handbook=ESCAPE_HANDBOOK, label=XSS_LABEL, skill=XSS_SKILL, query=XSS_QUERY)


@pytest.fixture(name="screenshot")
def screenshot_fixture():
    return screenshot


@pytest.fixture(name="wait_for_app")
def wait_for_app_fixture():
    return wait_for_app


def _record(pg) -> None:
    pg.external = []

    def on_request(req):
        origin = "/".join(req.url.split("/", 3)[:3])
        if not (origin in APP_ORIGINS or req.url.startswith(_LOCAL_SCHEMES)):
            pg.external.append(req.url)

    pg.on("request", on_request)


@pytest.fixture
def open_context(browser):
    """`open_context(viewport=..., color_scheme="dark") -> (context, page)`: a page recording requests outside the
    app origins in `page.external`; every context is closed at the end of the test."""
    made = []

    def _open(viewport=None, color_scheme="light"):
        context = browser.new_context(viewport=viewport or {"width": 1400, "height": 1000}, color_scheme=color_scheme)
        pg = context.new_page()
        pg.set_default_timeout(30_000)
        _record(pg)
        made.append(context)
        return context, pg

    yield _open
    for context in made:
        context.close()


@pytest.fixture(scope="session")
def copy_db():
    """`copy_db(url, target_path) -> url`: a copy of a SQLite database (online backup)."""

    def _copy(url: str, target: Path) -> str:
        _copy_db(Path(url.removeprefix("sqlite:///")), target)
        return f"sqlite:///{target}"

    return _copy


class DrawTimes:
    """Page draw times seen by the e2e tests (seconds, by page and column), beside the trivial page's."""

    def __init__(self, launcher: AppLauncher):
        self.launcher = launcher
        self.rows: dict[str, dict[str, float]] = {}
        self.not_pages: set[str] = set()
        self._trivial_url: str | None = None

    def record(self, page_name: str, column: str, seconds: float, page: bool = True) -> None:
        """`page=False`: an action that is not a page draw (e.g. routing), shown without the budget's verdict."""
        self.rows.setdefault(page_name, {})[column] = seconds
        if not page:
            self.not_pages.add(page_name)

    def trivial(self, column: str, new_page) -> None:
        """Time the trivial page in fresh pages from `new_page()` (median of FRESH_REPEATS; its server is started and
        warmed first). Each page is closed once drawn."""
        if self._trivial_url is None:
            self._trivial_url = self.launcher("sqlite://")  # the trivial page never opens it
            _visit_once(new_page(), self._trivial_url)  # the server's first run
        self.record(TRIVIAL_ROW, column, statistics.median(_visit_once(new_page(), self._trivial_url)
                                                           for _ in range(FRESH_REPEATS)))

    def table(self) -> list[str]:
        columns = sorted({c for row in self.rows.values() for c in row})
        base = self.rows.get(TRIVIAL_ROW, {})
        lines = [f"page draw in chromium (e2e, warm servers, seconds to fully drawn, fresh-browser rows and the "
                 f"trivial page: median of {FRESH_REPEATS} visits; load average {os.getloadavg()[0]:.1f}); budget: "
                 f"the trivial page + {BUDGET_S:.1f} s",
                 f"  {'page':<42}" + "".join(f"{c:>18}" for c in columns)]
        for name in [TRIVIAL_ROW] + sorted(n for n in self.rows if n != TRIVIAL_ROW):
            cells = []
            for c in columns:
                secs = self.rows.get(name, {}).get(c)
                verdict = "" if name in self.not_pages | {TRIVIAL_ROW} or c not in base or secs is None else (
                    " ok" if secs - base[c] <= BUDGET_S else " OVER")
                cells.append(f"{'-' if secs is None else f'{secs:.2f} s'}{verdict:<5}".rjust(18))
            lines.append(f"  {name:<42}" + "".join(cells))
        return lines


TRIVIAL_ROW = "(trivial Streamlit page)"


def _visit_once(page, url: str) -> float:
    try:
        return visit(page, url)
    finally:
        page.context.close()
_DRAW_TIMES: list[DrawTimes] = []


@pytest.fixture(scope="session")
def draw_times(tmp_path_factory):
    folder = tmp_path_factory.mktemp("e2e-trivial")
    times = DrawTimes(AppLauncher(folder, script=str(write_trivial(folder)), cwd=folder))
    _DRAW_TIMES.append(times)
    yield times
    times.launcher.stop()


def pytest_terminal_summary(terminalreporter):
    for times in _DRAW_TIMES:
        if times.rows:
            terminalreporter.section("page draw times")
            for line in times.table():
                terminalreporter.write_line(line)
