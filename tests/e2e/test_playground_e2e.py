"""E2E: a presenter routes a typed question in the real browser and sees every step; the decision is then on the
Decisions page. Markup in a query or skill name shows as text."""

from __future__ import annotations

QUESTION = "How many years passed between the founding of the museum of Ghent and the death of its first director?"


def _route(page, app_server, wait_for_app, handbook: str, query: str) -> None:
    page.goto(f"{app_server}/playground?handbook={handbook}")
    wait_for_app(page)
    page.get_by_role("heading", name="Playground").wait_for()
    box = page.get_by_label("Query")
    box.fill(query)
    box.press("Control+Enter")  # commits the text and routes (the Route button's shortcut)
    page.locator('[data-testid="stApp"][data-test-script-state="running"]').or_(
        page.get_by_text("Step 1 · mode").first).first.wait_for(timeout=30_000)


def test_a_typed_query_is_routed_step_by_step(page, app_server, wait_for_app, screenshot):
    _route(page, app_server, wait_for_app, "demo-agents", QUESTION)
    # The first step shows while the later ones are still being decided (a pause separates them).
    page.get_by_text("Step 1 · mode search").first.wait_for(timeout=30_000)
    # The stored trace replaces the live steps at the end of the run: its export button marks that moment.
    page.get_by_role("button", name="Export trace (JSON)").wait_for(timeout=60_000)
    wait_for_app(page)
    for text in ("Step 1 · mode search", "Step 2 · mode code", "Step 3 · mode answer"):
        page.get_by_text(text).first.wait_for()
    assert page.get_by_text("Lambda interval").count() >= 3
    assert page.get_by_text("Chosen agent").count() >= 1
    assert page.locator(".js-plotly-plot").count() == 0  # charts are drawn on demand
    page.get_by_text("Utility chart", exact=True).first.click()
    page.locator(".js-plotly-plot .main-svg").first.wait_for()
    assert page.get_by_role("button", name="Export trace (JSON)").count() == 1
    screenshot(page, "playground-steps")

    page.goto(f"{app_server}/decisions")
    wait_for_app(page)
    page.get_by_role("heading", name="Decisions").wait_for()
    page.locator('[data-testid="stText"]', has_text=QUESTION).first.wait_for()  # the opened trace's query
    page.get_by_text("Why not another agent?").wait_for()
    screenshot(page, "decisions")


def test_markup_in_a_query_renders_as_text(page, app_server, wait_for_app, escape_probe):
    _route(page, app_server, wait_for_app, escape_probe.handbook, escape_probe.query)
    wait_for_app(page)
    page.get_by_text("Step 1 · mode answer").first.wait_for()
    page.locator('[data-testid="stText"]', has_text=escape_probe.query).first.wait_for()
    assert page.dialogs == []
    assert page.locator("main script, [data-testid='stMain'] img[src='x']").count() == 0
