"""E2E: a reviewer opens the queue in the real browser, approves the planted split with the keyboard (A) and sees
the new version in the version history."""

from __future__ import annotations

import re
import sqlite3

import pytest


@pytest.fixture(scope="module")
def review_app(demo_db_file, tmp_path_factory, launch_app, warm_up):
    """An app server of its own (the decision changes the database), with candidates detected and proposed."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.refinement.proposing import propose_pending
    from skillorchestra_core.refinement.run import detect_and_store

    target = tmp_path_factory.mktemp("review-e2e") / "review.db"
    src, dst = sqlite3.connect(demo_db_file), sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()
    url = f"sqlite:///{target}"
    with session(url) as s:
        detect_and_store(s, "demo-qa")
        propose_pending(s, "demo-qa")
    dispose_engines()
    return warm_up(launch_app(url))


def test_approve_with_the_keyboard_and_see_the_new_version(page, review_app, wait_for_app, screenshot):
    page.goto(f"{review_app}/review?handbook=demo-qa")
    wait_for_app(page)
    heading = page.get_by_role("heading", name="#1 split answer.math.word_problems")
    heading.wait_for()
    reviewer = page.get_by_label("Reviewer")
    reviewer.fill("alice")
    reviewer.press("Enter")
    wait_for_app(page)
    page.get_by_text("decisions are recorded as 'alice'").wait_for()
    page.get_by_text("What approving changes").wait_for(timeout=60_000)
    screenshot(page, "review-queue")
    page.get_by_role("heading", name="Review queue").click()  # focus the page, not an input
    page.keyboard.press("a")
    # Streamlit typesets "->" as an arrow; the message names the candidate and the new version.
    page.get_by_text(re.compile(r"approved #1: split answer\.math\.word_problems \S+ v2")).wait_for(timeout=60_000)
    wait_for_app(page)

    page.goto(f"{review_app}/history?handbook=demo-qa")
    wait_for_app(page)
    page.get_by_role("heading", name="v1 → v2").wait_for(timeout=60_000)
    # The versions table is a canvas grid: its accessible cells exist (hidden) once the data arrived.
    assert page.get_by_text("split answer.math.word_problems (candidate #1, approved)").count() >= 1
    assert page.get_by_text("skills added").count() == 1
    screenshot(page, "version-history")
