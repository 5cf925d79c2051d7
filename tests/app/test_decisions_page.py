"""AppTest of the Decisions page: stored traces, filters, the step view and "why not agent B?"."""

import pytest

from skillorchestra_core.routing.engine import RouteOptions

QA_QUESTION = "Which emperor ruled Rome after the fall of Carthage?"


@pytest.fixture
def stored(app_db):
    """Three decisions: two on demo-qa (skill and cheapest routers), one on demo-agents."""
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.service import route_query

    ids = {}
    with session(app_db) as s:
        ids["skill"] = route_query(s, "demo-qa", None, QA_QUESTION, RouteOptions(lam=0.1), actor="test").id
        ids["cheapest"] = route_query(s, "demo-qa", None, QA_QUESTION, RouteOptions(router="cheapest"),
                                      actor="test").id
        ids["agents"] = route_query(s, "demo-agents", None, "How many years passed between the founding of the "
                                    "harbour of Turku and the death of its first mayor?", RouteOptions(),
                                    actor="test").id
        s.commit()
    return ids


@pytest.fixture
def open_at(open_page):
    return lambda **params: open_page("pages/decisions.py", params)


def test_decisions_lists_every_trace_and_opens_the_newest(stored, open_at):
    at = open_at()
    assert not at.exception
    assert at.title[0].value == "Decisions"
    table = at.dataframe[0].value
    assert set(stored.values()) <= set(table["id"])
    assert at.selectbox(key="dec:open").value == max(stored.values())
    assert any(m.value.startswith("#### Step") for m in at.markdown)
    assert {m.label for m in at.metric} >= {"Chosen agent", "Margin", "Lambda interval"}


def test_filters_narrow_the_list(stored, open_at):
    at = open_at()
    at.selectbox(key="dec:handbook").set_value("demo-qa").run()
    assert set(at.dataframe[0].value["handbook"]) == {"demo-qa"}
    at.selectbox(key="dec:cause").set_value("cheapest").run()
    assert not at.exception
    assert at.dataframe[0].value["id"].tolist() == [stored["cheapest"]]
    at.text_input(key="dec:text").set_value("no such words anywhere").run()
    assert any("No stored decision" in i.value for i in at.info)


def test_deep_link_opens_a_trace_and_why_not_explains_the_rival(stored, open_at):
    at = open_at(trace=str(stored["skill"]))
    assert not at.exception
    assert at.selectbox(key="dec:open").value == stored["skill"]
    agent_box = at.selectbox(key=f"dec:why:agent:{stored['skill']}:0")
    rival = agent_box.options[0]
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert f"{rival} trails by" in text and "Competence:" in text and "Lambda:" in text


def test_what_if_lambda_recomputes_the_choice(stored, app_db, open_at):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.store import load_trace

    with session(app_db) as s:
        step = load_trace(s, stored["skill"]).steps[0]
    at = open_at(trace=str(stored["skill"]))
    high = step.lambda_interval.high
    at.slider(key=f"dec:lam:{stored['skill']}").set_value(round(high + 0.005, 3)).run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert step.lambda_interval.above in warnings


def test_decisions_page_without_traces(app_db, open_at):
    at = open_at()
    assert not at.exception
    assert any("No stored decision" in i.value for i in at.info)
