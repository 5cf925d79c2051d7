"""E2E: every page over a database whose handbook, mode, skill and agent names, descriptions, queries and authors
carry a Markdown image and link to another host, a bare URL, a <script> and an <img onerror>.

On every page, and on the Graph in each node panel, each view and each picker: no request leaves the app (each one
is recorded, and aborted, at the browser context), no script of the data ran (window.__pwned stays undefined in every
frame, no dialog), no link or image to the other host exists in the DOM, and the names read as the literal text
they are.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

import hostile_data as H
import pytest

from skillorchestra_core.graph.text import short

# Links, images and frames whose target is a host named in the data (same-origin links may carry names in their
# query string, URL-encoded, and are fine).
# (A srcdoc iframe's location is about:srcdoc; its document.baseURI is the app's.)
OFF_ORIGIN_ELEMENTS = """() => [...document.querySelectorAll('a[href], img[src], link[href], iframe[src], source[src]')]
    .filter(e => { const u = new URL(e.getAttribute('href') || e.getAttribute('src'), document.baseURI);
                   return ['198.51.100.7', 'www.example.org', 'example.org'].includes(u.hostname); })
    .map(e => e.outerHTML.slice(0, 200))"""
# What a reader sees: the page's text without the invisible joiners that keep URLs from becoming links.
VISIBLE_TEXT = "() => document.body.innerText.replace(/\\u2060/g, '')"
GRAPH = '[data-testid="stVegaLiteChart"]'


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, launch_app, warm_up):
    url = f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'hostile.db'}"
    H.build(url)
    base = launch_app(url)
    warm_up(base)
    return base, H.skill_keys(url)


@pytest.fixture
def guarded(browser):
    """A page whose context records every request and aborts those to any host but the loopback app."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    pg.off_origin, pg.dialogs = [], []

    def gate(route):
        if urlsplit(route.request.url).hostname in ("127.0.0.1", None):
            route.continue_()
        else:
            pg.off_origin.append(route.request.url)
            route.abort()

    def on_request(req):
        host = urlsplit(req.url).hostname
        if req.url.startswith(("http:", "https:", "ws:", "wss:")) and host != "127.0.0.1":
            pg.off_origin.append(req.url)

    context.route("**/*", gate)
    context.on("request", on_request)
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    context.close()


def _url(base: str, path: str, **params) -> str:
    return f"{base}/{path}?" + urlencode({"handbook": H.HANDBOOK, "version": "2", **params})  # v2: the described one


def _check(pg, *expected: str) -> None:
    """The page's safety and its text: nothing ran, nothing left, nothing links out, the names read literally."""
    pg.wait_for_timeout(600)  # let late images and iframes try
    assert pg.off_origin == [], f"requests left the origin: {pg.off_origin}"
    assert pg.dialogs == [], f"a dialog fired: {pg.dialogs}"
    for frame in pg.frames:
        assert frame.evaluate("() => typeof window.__pwned") == "undefined", f"a script of the data ran in {frame.url}"
        bad = frame.evaluate(OFF_ORIGIN_ELEMENTS)
        assert bad == [], f"a link or image to another host in {frame.url}: {bad}"
    text = pg.evaluate(VISIBLE_TEXT)
    for want in expected:
        assert want in text, f"{want!r} is not shown as text in:\n{text[-3000:]}"


def test_overview(hostile, guarded, wait_for_app):
    base, _ = hostile
    guarded.goto(_url(base, ""))
    wait_for_app(guarded)
    _check(guarded, H.HANDBOOK, H.AUTHOR)


@pytest.mark.parametrize("node", ["agent", "skill", "mode"])
def test_graph_node_panels(hostile, guarded, wait_for_app, node):
    base, keys = hostile
    ident, heading = {"agent": (f"agent:{H.AGENT_A}", f"Agent · {H.AGENT_A}"),
                      "skill": (f"skill:{keys[1]}", f"Skill · {H.TASKS[0]}"),
                      "mode": (f"mode:{H.MODE}", f"Mode · {H.MODE}")}[node]
    guarded.goto(_url(base, "graph", node=ident))
    wait_for_app(guarded)
    guarded.locator(f"{GRAPH} g.nodes_marks path").first.wait_for()
    for expander in guarded.locator('[data-testid="stMain"] [data-testid="stExpander"] summary').all()[1:]:
        expander.click()  # the panel's Examples, Provenance or Insights (the first one is "More filters")
    wait_for_app(guarded)
    _check(guarded, H.HANDBOOK, heading, *([H.QUERY] if node == "skill" else []))


def test_clicking_a_hostile_node_in_the_chart(hostile, guarded, wait_for_app):
    """A click carries the node id (markup and all) through the chart's selection into the URL and the panel."""
    base, _ = hostile
    guarded.goto(_url(base, "graph"))
    wait_for_app(guarded)
    guarded.locator(f'{GRAPH} g.nodes_marks path[aria-label^="agent agent-a "]').click()
    guarded.wait_for_url(lambda url: "node=agent" in url)
    wait_for_app(guarded)
    assert parse_qs(urlsplit(guarded.url).query)["node"] == [f"agent:{H.AGENT_A}"]
    assert guarded.locator(f"{GRAPH} g.ring_marks path").count() == 1
    _check(guarded, H.HANDBOOK, f"Agent · {H.AGENT_A}")


# What each view draws the hostile skill's label with: SVG text in the Vega-Lite chart (its tooltip is a table the
# tooltip handler fills with escaped text, read by hovering the node), the SVG of the DOT view, vis-network's canvas
# (its tooltip is a div filled with innerText, read by hovering the node).
LABEL_START = H.TASKS[0][:39]  # labels are cut at 40 characters, tooltips at 80


@pytest.mark.parametrize("view", ["Clickable", "Explore (physics)", "Hierarchy (DOT)"])
def test_graph_views(hostile, guarded, wait_for_app, view):
    base, keys = hostile
    guarded.goto(_url(base, "graph", node=f"skill:{keys[1]}"))
    wait_for_app(guarded)
    guarded.locator('[data-testid="stMain"]').get_by_text(view, exact=True).click()
    wait_for_app(guarded)
    if view == "Clickable":
        labels = guarded.locator(f"{GRAPH} g.labels_left_marks text")
        labels.first.wait_for()
        drawn = labels.all_text_contents() + [_hover_vega_node(guarded, keys[1])]
        agents = guarded.locator(f"{GRAPH} g.labels_right_marks text").all_text_contents()
        assert sorted(agents) == sorted([short(H.AGENT_A), short(H.AGENT_B)])  # both agents, their names as text
    elif view == "Hierarchy (DOT)":
        svg = guarded.locator('[data-testid="stGraphVizChart"] svg')
        svg.wait_for()
        drawn = svg.locator("text").all_text_contents()
    else:
        drawn = [_hover_vis_node(guarded, keys[1])]
    assert any(LABEL_START in t for t in drawn), drawn
    _check(guarded, H.HANDBOOK, f"Skill · {H.TASKS[0]}")


def test_graph_search_and_filters(hostile, guarded, wait_for_app):
    """The search-hit picker, the mode and agent filters and the subtree picker list the names as text."""
    base, keys = hostile
    guarded.goto(_url(base, "graph"))
    wait_for_app(guarded)
    main = guarded.locator('[data-testid="stMain"]')
    box = guarded.get_by_label("Search skills and agents")
    box.fill("pwned")
    box.press("Enter")
    wait_for_app(guarded)
    for picker in ("Search hits", "Modes", "Skill subtree", "Agents"):
        more = main.locator("details", has_text="More filters").first
        if picker == "Skill subtree" and not more.evaluate("d => d.open"):
            more.locator("summary").click()
            guarded.wait_for_timeout(800)  # the expander's opening animation
        widget = main.locator('[data-testid="stSelectbox"], [data-testid="stMultiSelect"]').filter(
            has=guarded.get_by_label(picker, exact=True))
        widget.get_by_role("button", name="Open").click()
        options = guarded.locator('[role="option"]')
        options.first.wait_for()
        shown = options.all_inner_texts()
        _check(guarded)
        guarded.keyboard.press("Escape")
        assert any(H.TASKS[0] in t or H.MODE in t or H.AGENT_A in t for t in shown), (picker, shown)


def _hover_vega_node(pg, key: str) -> str:
    """Hover the skill's node in the Vega-Lite chart; its tooltip's text (none of it made into elements)."""
    quoted = '"' + f"(skill:{key})".replace("\\", "\\\\").replace('"', '\\"') + '"'  # a CSS string
    pg.locator(f"{GRAPH} g.nodes_marks path[aria-label$={quoted}]").hover()
    tooltip = pg.locator("#vg-tooltip-element.visible")
    tooltip.wait_for()
    assert tooltip.locator("img, script, a").count() == 0
    return tooltip.inner_text()


def _hover_vis_node(pg, key: str) -> str:
    """Hover the skill's node in the vis-network iframe; its tooltip's text."""
    frame_el = pg.locator('iframe[data-testid="stIFrame"]').first
    frame_el.wait_for()
    frame = frame_el.element_handle().content_frame()
    frame.locator("canvas").wait_for()
    pg.wait_for_timeout(1500)  # physics settles
    ident = f"skill:{key}"
    xy = frame.evaluate("id => { network.stopSimulation(); const p = network.getPositions([id])[id];"
                        " return network.canvasToDOM(p); }", ident)
    box = frame.locator("canvas").bounding_box()  # in the page's coordinates
    pg.mouse.move(box["x"] + xy["x"], box["y"] + xy["y"])
    tip = frame.locator("div.vis-tooltip")
    tip.wait_for(state="visible")
    assert tip.locator("img, a, script").count() == 0
    return tip.inner_text()


@pytest.mark.parametrize("tab", ["Forest plot", "Densities", "Heatmap", "Evidence"])
def test_posteriors_tabs(hostile, guarded, wait_for_app, tab):
    base, keys = hostile
    guarded.goto(_url(base, "posteriors", node=f"skill:{keys[1]}", agent=H.AGENT_A))
    wait_for_app(guarded)
    guarded.get_by_role("tab", name=tab).click()
    wait_for_app(guarded)
    _check(guarded, H.HANDBOOK, *([f"{H.AGENT_A} on "] if tab == "Evidence" else []))


@pytest.mark.parametrize("path", ["learn", "review", "history", "audit", "pareto"])
def test_review_learn_and_pareto_pages(hostile, guarded, wait_for_app, path):
    base, _ = hostile
    guarded.goto(_url(base, path))
    wait_for_app(guarded)
    _check(guarded)


@pytest.mark.parametrize("compare", [None, "another router"])
def test_playground_routes_a_hostile_query_from_a_link(hostile, guarded, wait_for_app, compare):
    """One result, and two side by side: the candidate tables (static, Markdown cells) list the agents as text."""
    base, _ = hostile
    guarded.goto(_url(base, "playground", q=H.QUERY, **({"compare": compare} if compare else {})))
    wait_for_app(guarded)
    guarded.get_by_text("Chosen agent").nth(1 if compare else 0).wait_for()
    wait_for_app(guarded)
    assert guarded.locator('[data-testid="stTable"]').count() == (2 if compare else 1)
    cells = guarded.locator('[data-testid="stTable"] td').all_inner_texts()
    assert {H.AGENT_A, H.AGENT_B} <= {c.replace("\u2060", "").strip() for c in cells}, cells
    _check(guarded, H.HANDBOOK, H.MODE, H.AGENT_A, H.AGENT_B, *([] if compare else [H.QUERY]))


def test_decisions_shows_the_stored_decision(hostile, guarded, wait_for_app):
    base, _ = hostile
    guarded.goto(_url(base, "decisions"))
    wait_for_app(guarded)
    guarded.get_by_text("Why not another agent?").wait_for()
    _check(guarded, H.HANDBOOK, H.QUERY, f"mode {H.MODE}")
