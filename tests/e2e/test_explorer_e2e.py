"""E2E: the handbook explorer (Graph and Posteriors pages) in a real browser (Debian chromium).

Every test also checks, through the `page` fixture, that the page made no request outside the app origin.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

PLOTLY = ".js-plotly-plot"
VEGA = '[data-testid="stVegaLiteChart"]'
NODES = f"{VEGA} g.nodes_marks path"  # the Graph's node symbols (its Vega-Lite layer "nodes", drawn as SVG)
LABELS = f"{VEGA} g.labels_left_marks text, {VEGA} g.labels_right_marks text"
TOOLTIP = "#vg-tooltip-element"
CANVAS_PIXELS = """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"""


def _open(page, app_server, wait_for_app, path: str) -> None:
    page.goto(app_server + path)
    wait_for_app(page)


def _nodes(page, kind: str):
    """The graph's node symbols of one kind (each symbol's aria-label is "<kind> <label> (<node id>)")."""
    return page.locator(f'{NODES}[aria-label^="{kind} "]')


def _inside(page, locator) -> bool:
    """Every element of `locator` is drawn inside the chart's SVG (not cut off at its edge)."""
    return locator.evaluate_all("""(els, svg) => els.every(e => { const b = e.getBoundingClientRect();
        const c = document.querySelector(svg).getBoundingClientRect();
        return b.width > 0 && b.left >= c.left - 1 && b.right <= c.right + 1 && b.top >= c.top - 1
               && b.bottom <= c.bottom + 1; })""", f"{VEGA} svg.marks")


def _choose_view(page, name: str) -> None:
    page.locator('[data-testid="stButtonGroup"]').get_by_text(name, exact=True).click()


def test_overview_loads(page, app_server, wait_for_app, screenshot):
    _open(page, app_server, wait_for_app, "/")
    page.get_by_role("heading", name="SkillOrchestra Studio").wait_for()
    screenshot(page, "overview")


def test_graph_page_draws(page, app_server, wait_for_app, screenshot):
    _open(page, app_server, wait_for_app, "/graph?handbook=demo-qa")
    page.get_by_role("heading", name="Graph").wait_for()
    page.locator(NODES).first.wait_for()
    assert page.locator(PLOTLY).count() == 0 and page.locator(f"{VEGA} svg.marks").count() == 1  # no Plotly
    assert _nodes(page, "skill").count() >= 7
    agents = _nodes(page, "agent")
    assert agents.count() == 6 and _inside(page, agents)  # every agent drawn, none cut off
    right = page.locator(f"{VEGA} g.labels_right_marks text")
    assert right.count() == 6 and _inside(page, right)  # every agent's label, whole
    assert page.locator(LABELS).count() > 10  # node labels are drawn
    assert page.locator(f"{VEGA} g.competence_marks line").count() >= 6 * 11  # every agent's edges
    legend = page.locator(f"{VEGA} .role-legend")
    assert legend.locator(".role-legend-title text").all_text_contents() == ["posterior mean"]
    assert legend.locator(".role-legend-label text").count() == 5  # the gradient's ticks 0 ... 1
    screenshot(page, "graph")


def test_clicking_a_node_opens_its_panel(page, app_server, wait_for_app, screenshot):
    _open(page, app_server, wait_for_app, "/graph?handbook=demo-qa")
    point = page.locator(f'{NODES}[aria-label$="(skill:answer.math)"]')
    point.wait_for()
    point.hover()  # its tooltip: the node's facts
    page.locator(TOOLTIP).get_by_text("skill:answer.math", exact=True).wait_for()
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.get_by_role("heading", name="Skill · Mathematics").wait_for()
    wait_for_app(page)
    assert "node=skill:answer.math" in unquote(page.url)
    page.locator(f"{VEGA} g.ring_marks path").wait_for()  # the selected node's ring
    page.get_by_text("Agents ranked by posterior mean").wait_for()
    ranking = page.locator('[data-testid="stMarkdownContainer"] ol').first  # agents ranked, as wrapping text
    assert ranking.locator("li").count() == 6
    screenshot(page, "graph-node-panel")
    # a second click, on an agent, moves the panel and the ring
    _nodes(page, "agent").first.click()
    page.get_by_role("heading", name=re.compile(r"^Agent · ")).wait_for()
    wait_for_app(page)
    assert "node=agent:" in unquote(page.url)


def test_shared_url_opens_the_node(page, app_server, wait_for_app):
    _open(page, app_server, wait_for_app, "/graph?handbook=demo-agents&node=agent:search-1")
    page.get_by_role("heading", name="Agent · search-1").wait_for()
    page.get_by_text("Price card and cost per call").wait_for()
    page.get_by_text(re.compile(r"per call \(\d+ calls")).first.wait_for()


def test_explore_view_draws_offline(page, app_server, wait_for_app, screenshot):
    _open(page, app_server, wait_for_app, "/graph?handbook=demo-qa")
    _choose_view(page, "Explore (physics)")
    wait_for_app(page)
    frame = page.frame_locator("iframe[title='Mode-skill-agent graph (physics)']")
    canvas = frame.locator("#mynetwork canvas")
    canvas.wait_for()
    page.wait_for_timeout(1500)
    assert canvas.evaluate(CANVAS_PIXELS) > 1000
    assert any(u.endswith("/app/static/vis-network.min.js") for u in page.requests)
    screenshot(page, "graph-explore")


def test_posteriors_page_draws_its_plots(page, app_server, wait_for_app, screenshot):
    _open(page, app_server, wait_for_app, "/posteriors?handbook=demo-qa")
    page.get_by_role("heading", name="Posteriors").wait_for()
    forest = page.locator('[data-testid="stVegaLiteChart"] .mark-symbol path')  # the forest plot: Vega-Lite
    forest.first.wait_for(state="attached")
    assert forest.count() > 10  # forest markers
    screenshot(page, "posteriors-forest")
    page.get_by_role("tab", name="Densities").click()
    page.locator(f"{PLOTLY} .scatterlayer .trace .js-line").first.wait_for(state="attached")
    assert page.locator(f"{PLOTLY} .scatterlayer .js-fill").count() >= 1
    screenshot(page, "posteriors-densities")
    page.get_by_role("tab", name="Heatmap").click()
    page.locator(f"{PLOTLY} .heatmaplayer image, {PLOTLY} .hm image").first.wait_for(state="attached")
    wait_for_app(page)
    screenshot(page, "posteriors-heatmap")
    # a click on a cell opens that cell's evidence
    grid = page.locator(f"{PLOTLY} .nsewdrag").first.bounding_box()
    page.mouse.click(grid["x"] + grid["width"] * 0.05, grid["y"] + grid["height"] * 0.1)
    page.get_by_text(re.compile(r"Page 1 of \d+")).wait_for()
    wait_for_app(page)
    assert page.get_by_role("tab", name="Evidence", selected=True).count() == 1
    page.get_by_role("tab", name="Evidence").click()
    page.get_by_text(re.compile(r"Page 1 of \d+")).wait_for()
    screenshot(page, "posteriors-evidence")


def test_markup_in_a_skill_name_renders_as_text(page, app_server, wait_for_app, screenshot, escape_probe):
    hb, label_text = escape_probe.handbook, escape_probe.label
    _open(page, app_server, wait_for_app, f"/graph?handbook={hb}")
    label = page.locator(LABELS, has_text=label_text)
    label.first.wait_for()
    assert label.first.text_content() == label_text  # SVG text: the markup is the label
    # its tooltip: the name as text (the tooltip escapes it), no element made of it
    page.locator(f'{NODES}[aria-label$="(skill:{escape_probe.skill})"]').hover()
    tooltip = page.locator(TOOLTIP)
    tooltip.get_by_text(f"skill {label_text}").wait_for()
    assert tooltip.locator("img").count() == 0 and "<img" not in tooltip.inner_html().replace("&lt;img", "")
    # Open its panel through the URL and through the Explore view: still text, no image element, no alert.
    skill = f"skill:{escape_probe.skill}"
    _open(page, app_server, wait_for_app, f"/graph?handbook={hb}&node={skill}")
    page.get_by_role("heading", name=f"Skill · {label_text}").wait_for()
    _choose_view(page, "Explore (physics)")
    wait_for_app(page)
    page.frame_locator("iframe").first.locator("#mynetwork canvas").wait_for()
    page.wait_for_timeout(1000)
    screenshot(page, "escaping-graph")
    _open(page, app_server, wait_for_app, f"/posteriors?handbook={hb}&node={skill}")
    page.get_by_role("tab", name="Evidence").click()
    page.wait_for_timeout(500)
    screenshot(page, "escaping-posteriors")
    assert page.locator("img[src='x']").count() == 0
    for frame in page.frames:
        assert frame.locator("img[src='x']").count() == 0
    assert page.dialogs == [], f"a dialog fired: {page.dialogs}"


def test_hierarchy_view_draws_an_svg(page, app_server, wait_for_app, screenshot, escape_probe):
    _open(page, app_server, wait_for_app, f"/graph?handbook={escape_probe.handbook}")
    _choose_view(page, "Hierarchy (DOT)")
    wait_for_app(page)
    svg = page.locator('[data-testid="stGraphVizChart"] svg')
    svg.wait_for()
    assert svg.locator("g.node").count() >= 5  # mode, 2 skills, 2 agents
    assert svg.locator("text", has_text=escape_probe.label).count() == 1  # shown as text, not markup
    assert page.locator("img[src='x']").count() == 0 and page.dialogs == []
    screenshot(page, "graph-hierarchy")


@pytest.fixture(scope="module")
def large_app(launch_app, warm_up, tmp_path_factory):
    """A second server on a database with a generated 1,000-skill x 20-agent handbook."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.graph.synthetic import SyntheticSpec, build_synthetic_handbook

    url = f"sqlite:///{tmp_path_factory.mktemp('large') / 'large.db'}"
    with session(url) as s:
        build_synthetic_handbook(s, SyntheticSpec(name="synthetic-large", n_skills=1000, n_agents=20,
                                                  queries_per_leaf=1))
        s.commit()
    dispose_engines()
    return warm_up(launch_app(url))


def test_a_thousand_skills_stay_readable(page, large_app, wait_for_app, screenshot):
    _open(page, large_app, wait_for_app, "/graph?handbook=synthetic-large")
    page.get_by_text(re.compile(r"showing \d+ of 1000 skills")).wait_for()
    shown = _nodes(page, "skill").count()
    assert 5 <= shown <= 120, shown  # collapsed to the top level, not a hairball
    screenshot(page, "graph-1000-skills")
    box = page.get_by_label("Search skills and agents")
    box.fill("s0042")
    box.press("Enter")
    wait_for_app(page)
    page.get_by_text(re.compile(r"showing 2 of 1000 skills")).wait_for()
    _open(page, large_app, wait_for_app, "/posteriors?handbook=synthetic-large")
    page.locator('[data-testid="stVegaLiteChart"] .mark-symbol path').first.wait_for(state="attached")
    screenshot(page, "posteriors-1000-skills")
