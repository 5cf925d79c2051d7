"""E2E: the live demo at 1280 px, in the light and the dark theme. Route, move lambda, compare routers and versions,
share the link and open it in a new browser context, follow the links to the graph and the evidence; no exception,
no cut-off headline, nothing requested outside the app origin."""

from __future__ import annotations

import re

import pytest

VIEWPORT = {"width": 1280, "height": 900}
QUESTION = "Which emperor ruled Rome after the fall of Carthage?"

# Text cut off by the layout: wider than its box while overflow is hidden (ellipsis or clipping).
TRUNCATED = """() => {
  const out = [];
  const main = document.querySelector('[data-testid="stMain"]');
  for (const el of main.querySelectorAll('[data-testid="stMarkdownContainer"] *, [data-testid="stCaptionContainer"],'
      + ' [data-testid="stMetricValue"], [data-testid="stMetricLabel"], [data-testid="stWidgetLabel"] *')) {
    const cs = getComputedStyle(el);
    const clips = cs.textOverflow === 'ellipsis' || cs.overflowX === 'hidden' || cs.overflow === 'hidden';
    if (clips && el.scrollWidth > el.clientWidth + 1 && el.innerText.trim()) out.push(el.innerText.slice(0, 80));
  }
  return out;
}"""


@pytest.fixture(scope="module")
def two_version_app(tmp_path_factory, e2e_db_url, launch_app, warm_up, copy_db):
    """Another server whose demo-qa has a second version (so versions can be compared)."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.handbook.store import commit_version, get_handbook, latest_content

    url = copy_db(e2e_db_url, tmp_path_factory.mktemp("e2e-v2") / "v2.db")
    with session(url) as s:
        hb = get_handbook(s, "demo-qa")
        parent, content = latest_content(s, hb.id)
        key = sorted(content.skills)[0]
        content.skills[key].description = "edited for a second version"
        commit_version(s, hb, content, author="e2e", message="second version", parent=parent)
        s.commit()
    dispose_engines()
    return warm_up(launch_app(url))


def _headline(pg) -> str:
    """The first 'Chosen agent' value on the page."""
    label = pg.locator('[data-testid="stCaptionContainer"]', has_text="Chosen agent").first
    return label.locator("xpath=following::*[@data-testid='stMarkdownContainer'][1]").inner_text().strip()


def _no_exception_no_truncation(pg, where: str) -> None:
    assert pg.locator('[data-testid="stException"]').count() == 0, f"exception on {where}"
    cut = pg.evaluate(TRUNCATED)
    assert cut == [], f"truncated text on {where}: {cut}"


def _route(pg, wait_for_app) -> None:
    pg.get_by_role("button", name="Route Shortcut Ctrl + Enter").click()
    pg.get_by_role("button", name="Export trace (JSON)").first.wait_for(timeout=60_000)
    wait_for_app(pg)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_demo_script(open_context, app_server, warm_app, two_version_app, wait_for_app, screenshot, theme):
    context, pg = open_context(VIEWPORT, theme)
    pg.goto(f"{app_server}/playground?handbook=demo-qa")
    wait_for_app(pg)
    if theme == "dark":  # the app follows the browser's colour scheme
        bg = pg.evaluate("() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor")
        assert bg.startswith("rgb(") and sum(map(int, bg[4:-1].split(",")[:3])) < 200, bg
    # 1. route (Ctrl+Enter in the query box)
    box = pg.get_by_label("Query")
    box.fill(QUESTION)
    box.press("Control+Enter")
    pg.get_by_role("button", name="Export trace (JSON)").first.wait_for(timeout=60_000)
    wait_for_app(pg)
    first = _headline(pg)
    assert first
    _no_exception_no_truncation(pg, "routed")
    screenshot(pg, f"demo-{theme}-routed")
    # 2. move lambda to its maximum: the headline follows the new winner, the note names the same agent
    thumb = pg.locator('[data-testid="stSlider"] input[type="range"]').first
    thumb.focus()
    thumb.press("End")
    wait_for_app(pg)
    moved = _headline(pg)
    assert "lam=2" in pg.url
    if moved != first:
        note = pg.locator('[data-testid="stAlertContentWarning"]').first.inner_text()
        assert moved in note and first in note
    _no_exception_no_truncation(pg, "lambda moved")
    # presenter mode: one click hides the chrome and shows the query and the choice large
    pg.get_by_text("Presenter mode", exact=True).click()
    wait_for_app(pg)
    assert not pg.locator('[data-testid="stSidebar"]').is_visible()
    assert pg.locator('[data-testid="stMain"] h2', has_text=QUESTION[:20]).count() == 1
    assert _headline(pg) == moved
    screenshot(pg, f"demo-{theme}-presenter")
    pg.get_by_text("Presenter mode", exact=True).click()
    wait_for_app(pg)
    assert pg.locator('[data-testid="stSidebar"]').is_visible()
    # 3. share the link, open it in a new context: the same result
    link = pg.url
    assert "q=" in link and "handbook=demo-qa" in link
    other, pg2 = open_context(VIEWPORT, theme)
    pg2.goto(link)
    pg2.get_by_role("button", name="Export trace (JSON)").first.wait_for(timeout=60_000)
    wait_for_app(pg2)
    assert _headline(pg2) == moved
    assert pg2.external == []
    # 4. compare with another router
    pg.get_by_text("another router", exact=True).click()
    wait_for_app(pg)
    _route(pg, wait_for_app)
    assert pg.get_by_role("button", name="Export trace (JSON)").count() == 2
    _no_exception_no_truncation(pg, "router comparison")
    screenshot(pg, f"demo-{theme}-compare-routers")
    # 5. follow the links: the chosen agent's graph node, then a posterior cell's evidence
    pg.get_by_text("nothing", exact=True).click()
    wait_for_app(pg)
    _route(pg, wait_for_app)
    agent = _headline(pg)
    pg.get_by_role("link", name=f"{agent} in the graph").first.click()
    wait_for_app(pg)
    pg.get_by_role("heading", name=f"Agent · {agent}").wait_for()
    assert "node=agent" in pg.url
    _no_exception_no_truncation(pg, "graph")
    pg.locator(".js-plotly-plot .annotation-text").first.wait_for()
    label_bg = pg.locator(".js-plotly-plot .annotation rect.bg").first.evaluate("r => getComputedStyle(r).fill")
    dark_bg = sum(int(v) for v in re.findall(r"\d+", label_bg)[:3]) < 200
    assert dark_bg == (theme == "dark"), label_bg  # the graph follows the theme
    screenshot(pg, f"demo-{theme}-graph")
    pg.go_back()
    wait_for_app(pg)
    pg.get_by_role("link", name="evidence").first.click()
    wait_for_app(pg)
    pg.get_by_role("heading", name="Posteriors").wait_for()
    assert "agent=" in pg.url
    pg.get_by_role("tab", name="Evidence").click()
    pg.get_by_text("trajectories (weights").first.wait_for()
    assert pg.external == []
    # 6. compare two versions (a server whose demo-qa has v2)
    context, pg = open_context(VIEWPORT, theme)
    pg.goto(f"{two_version_app}/playground?handbook=demo-qa&version=1&q={QUESTION}&compare=another+version")
    pg.get_by_role("button", name="Export trace (JSON)").nth(1).wait_for(timeout=60_000)
    wait_for_app(pg)
    body = pg.locator('[data-testid="stMain"]').inner_text()
    assert "· v1" in body and "· v2" in body
    _no_exception_no_truncation(pg, "version comparison")
    screenshot(pg, f"demo-{theme}-compare-versions")
    assert pg.external == []
