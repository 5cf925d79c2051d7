"""AppTest of the Decisions page: stored traces, filters, paging, the step view and "why not agent B?"."""

import pytest
from support.page_facts import facts

from skillorchestra_core.routing.engine import RouteOptions

QA_QUESTION = "Which emperor ruled Rome after the fall of Carthage?"
AGENTS_QUESTION = ("How many years passed between the founding of the harbour of Turku and the death of its first "
                   "mayor?")


@pytest.fixture
def stored(app_db):
    """Three decisions: two on demo-qa (skill and cheapest routers), one on demo-agents."""
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.service import route_query

    ids = {}
    with session(app_db) as s:
        ids["skill"] = route_query(s, "demo-qa", None, QA_QUESTION, RouteOptions(lam=0.1), actor="ada").id
        ids["cheapest"] = route_query(s, "demo-qa", None, QA_QUESTION, RouteOptions(router="cheapest"),
                                      actor="test").id
        ids["agents"] = route_query(s, "demo-agents", None, AGENTS_QUESTION, RouteOptions(), actor="test").id
        s.commit()
    return ids


@pytest.fixture
def open_at(open_page):
    return lambda **params: open_page("pages/decisions.py", {"handbook": "demo-qa", **params})


def _facts(at):
    return dict(facts(at))


def test_decisions_lists_the_handbooks_traces_and_opens_the_newest(stored, open_at):
    at = open_at()
    assert not at.exception
    assert at.title[0].value == "Decisions"
    table = at.dataframe[0].value
    assert set(table["id"]) == {stored["skill"], stored["cheapest"]}  # the sidebar's handbook only
    assert list(table.columns[:3]) == ["id", "chosen", "cause"]  # who and why first
    assert "actor" in table.columns and "ada" in set(table["actor"])  # the reviewer's name is shown
    assert not any(s.label == "Handbook" for s in at.main.selectbox)  # one set of pickers: the sidebar's
    assert at.selectbox(key="dec:open").value == stored["cheapest"]
    assert any(m.value.startswith("#### Step") for m in at.markdown)
    assert {"Chosen agent", "Margin", "Lambda interval"} <= set(_facts(at))


def test_filters_narrow_the_list(stored, open_at):
    at = open_at()
    at.selectbox(key="dec:cause").set_value("cheapest").run()
    assert not at.exception
    assert at.dataframe[0].value["id"].tolist() == [stored["cheapest"]]
    at.text_input(key="dec:text").set_value("no such words anywhere").run()
    assert any("No stored decision" in i.value for i in at.info)


def test_graph_links_filter_by_skill_and_agent(stored, app_db, open_at):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.store import load_trace

    with session(app_db) as s:
        trace = load_trace(s, stored["skill"])
    skill = trace.steps[0].active_skills[0].skill
    at = open_at(skill=skill)
    assert stored["skill"] in at.dataframe[0].value["id"].tolist()
    at = open_at(skill="answer.no_such_skill")
    assert any("No stored decision" in i.value for i in at.info)
    at = open_at(agent=trace.steps[0].chosen)
    assert stored["skill"] in at.dataframe[0].value["id"].tolist()


def test_decisions_are_paged(app_db, open_at):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.service import route_query

    with session(app_db) as s:
        for i in range(30):
            route_query(s, "demo-qa", None, f"{QA_QUESTION} {i}", RouteOptions(router="cheapest"), actor="t")
        s.commit()
    at = open_at()
    first = at.dataframe[0].value["id"].tolist()
    assert len(first) == 25 and first == sorted(first, reverse=True)
    assert at.button(key="dec:newer").disabled and not at.button(key="dec:older").disabled
    at.button(key="dec:older").click().run()
    assert not at.exception
    second = at.dataframe[0].value["id"].tolist()
    assert len(second) == 5 and max(second) < min(first)  # the next older page, by key
    assert at.button(key="dec:older").disabled
    at.button(key="dec:newer").click().run()
    assert at.dataframe[0].value["id"].tolist() == first


def test_deep_link_opens_a_trace_and_why_not_explains_the_rival(stored, open_at):
    at = open_at(trace=str(stored["skill"]))
    assert not at.exception
    assert at.selectbox(key="dec:open").value == stored["skill"]
    agent_box = at.selectbox(key=f"dec:why:agent:{stored['skill']}:0")
    rival = agent_box.options[0]
    why = [m.value for m in at.markdown if "trails by" in m.value][0]
    text = why.replace("\\", "")
    assert f"{rival} trails by" in text and "Competence:" in text and "Lambda:" in text
    lines = why.splitlines()
    subs = [ln for ln in lines if "alone on" in ln]
    assert subs and all(ln.startswith("    - ") for ln in subs)  # nested under the competence line
    assert all(ln.startswith("- ") for ln in lines if ln not in subs)


def test_multi_step_trace_draws_one_step_at_a_time(stored, open_page):
    at = open_page("pages/decisions.py", {"handbook": "demo-agents", "trace": str(stored["agents"])})
    assert not at.exception
    assert [m.value for m in at.markdown if m.value.startswith("#### Step")] == [
        m.value for m in at.markdown if m.value.startswith("#### Step 1")]
    at.segmented_control(key=f"dec:step:{stored['agents']}").set_value(1).run()
    assert [m.value[:11] for m in at.markdown if m.value.startswith("#### Step")] == ["#### Step 2"]


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
    assert _facts(at)["Chosen agent"] == step.lambda_interval.above


def test_decisions_page_without_traces(app_db, open_at):
    at = open_at()
    assert not at.exception
    assert any("No stored decision" in i.value for i in at.info)


def test_a_stale_decision_link_is_harmless(stored, open_at):
    at = open_at(trace="987654")
    assert not at.exception
    assert any("987654" in w.value and "stale" in w.value for w in at.warning)
    assert at.selectbox(key="dec:open").value == stored["cheapest"]
