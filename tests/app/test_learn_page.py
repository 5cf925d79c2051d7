"""AppTest of the Learn page (a run in a worker process, its progress and report) and of the feedback buttons."""

import time

import pytest
from support.learning import NAME, build_contrast

from skillorchestra_core.db import session
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import runs
from skillorchestra_core.routing.engine import RouteOptions

PAGE = "pages/learn.py"


@pytest.fixture
def contrast_db(app_db):
    with session(app_db) as s:
        build_contrast(s)
        s.commit()
    return app_db


def _wait(db_url, run_id, timeout=120):
    deadline = time.time() + timeout
    run = runs.get_run(db_url, run_id)
    while run.status in ("queued", "running") and time.time() < deadline:
        time.sleep(0.2)
        run = runs.get_run(db_url, run_id)
    return run


def test_learn_page_runs_offline_learning_and_shows_skills_with_provenance(contrast_db, open_page):
    at = open_page(PAGE, {"handbook": NAME})
    assert not at.exception
    assert at.title[0].value == "Learn" and at.radio(key="learn:method").value == "Offline"
    at.checkbox(key="learn:ignore").check()
    at.button(key="learn:start").click().run()
    assert not at.exception
    run_id = at.session_state["learn:run"]
    run = _wait(contrast_db, run_id)
    assert run.status == "done" and run.version == 2, run.error
    at.run()
    assert not at.exception
    assert any("v2 created" in s.value for s in at.success)
    skills = at.dataframe[0].value
    assert len(skills) >= 2 and set(skills["method"]) == {"tfidf-kmeans"} and set(skills["source"]) == {"offline"}
    assert [p.proto.text for p in at.get("progress")] == ["discovery: 100%", "attribution: 100%",
                                                          "profiling: 100%"]
    with session(contrast_db) as s:
        assert load_version(s, NAME).number == 2


def test_thumbs_up_on_a_decision_records_feedback_as_a_new_version(app_db, open_page):
    from skillorchestra_core.routing.service import route_query

    with session(app_db) as s:
        trace = route_query(s, "demo-qa", None, "What is twelve percent of a price of 340 dollars?",
                            RouteOptions(lam=0.1))
        s.commit()
        before = load_version(s, "demo-qa").number
    at = open_page("pages/decisions.py", {"trace": str(trace.id)})
    up, down = at.button(key=f"dec:fb:up:{trace.id}"), at.button(key=f"dec:fb:down:{trace.id}")
    assert (up.label, up.proto.icon, down.label, down.proto.icon) == (
        "Worked", ":material/thumb_up:", "Failed", ":material/thumb_down:")  # no emoji: it needs a font
    up.click().run()
    assert not at.exception
    assert any(f"demo-qa v{before + 1}" in s.value for s in at.success)
    at.button(key=f"dec:fb:up:{trace.id}").click().run()
    assert any("already has feedback" in e.value for e in at.error)
