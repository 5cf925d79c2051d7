"""E2E: an engineer opens the Pareto page in the real browser, sees frontier and baselines, and publishes the
selected configuration; the API then loads it."""

from __future__ import annotations

import sqlite3

import pytest


@pytest.fixture(scope="module")
def swept_db(demo_db_file, tmp_path_factory) -> str:
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.selection.service import select
    from skillorchestra_core.selection.sweep import SweepOptions

    path = tmp_path_factory.mktemp("pareto") / "pareto.db"
    src, dst = sqlite3.connect(demo_db_file), sqlite3.connect(path)
    src.backup(dst)
    src.close()
    dst.close()
    url = f"sqlite:///{path}"
    with session(url) as s:
        select(s, "demo-qa", SweepOptions(lambdas=(0.0, 0.1, 0.3, 0.6)))
        s.commit()
    dispose_engines()
    return url


def test_publish_from_the_pareto_page(page, launch_app, swept_db, wait_for_app, screenshot):
    from skillorchestra_core.db import dispose_engines
    from skillorchestra_core.routing.api import HandbookRouter

    base = launch_app(swept_db)
    page.goto(f"{base}/pareto?handbook=demo-qa")
    wait_for_app(page, timeout=60_000)
    page.get_by_role("heading", name="Pareto").wait_for()
    page.locator(".js-plotly-plot .legendtext").first.wait_for()
    legend = page.locator(".js-plotly-plot .legendtext").evaluate_all("els => els.map(e => e.textContent)")
    assert {"frontier", "baselines", "dominated runs"} <= set(legend)
    selected = page.get_by_text("Selected at λ=0.1:").first
    selected.wait_for()
    button = page.get_by_role("button", name="Publish v")
    label = button.inner_text()
    button.click()
    page.get_by_text("Published demo-qa v").wait_for(timeout=30_000)
    wait_for_app(page)
    screenshot(page, "pareto")
    version = int(label.split(" v", 1)[1].split()[0])
    router = HandbookRouter.from_database("demo-qa", db_url=swept_db)
    dispose_engines()
    assert router.published is not None and router.model.version == version
    assert router.published.actor == "reviewer"
