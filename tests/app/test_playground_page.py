"""AppTest of the Playground page on the demo database."""

import json
from dataclasses import replace

from sqlmodel import func, select
from support.page_facts import fact, facts

PAGE = "pages/playground.py"

QUESTION = "How many years passed between the founding of the harbour of Turku and the death of its first mayor?"


def stored_decisions(url) -> int:
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace

    with session(url) as s:
        return s.exec(select(func.count()).select_from(DecisionTrace)).one()


def add_version(url, handbook: str) -> int:
    from skillorchestra_core.db import session
    from skillorchestra_core.handbook.store import commit_version, get_handbook, latest_content

    with session(url) as s:
        hb = get_handbook(s, handbook)
        parent, content = latest_content(s, hb.id)
        key = sorted(content.skills)[0]
        content.skills[key] = replace(content.skills[key], description="edited for a second version")
        version, _ = commit_version(s, hb, content, author="test", message="v2", parent=parent)
        s.commit()
        return version.number


def test_playground_routes_a_typed_query_and_shows_every_step(app_db, open_at):
    at = open_at(handbook="demo-agents", **{"pg:animate": False})
    assert not at.exception
    assert at.title[0].value == "Playground"
    at.text_area(key="q").set_value(QUESTION)
    at.button(key="pg:route").click().run()
    assert not at.exception
    steps = [m.value for m in at.markdown if m.value.startswith("#### Step")]
    assert len(steps) >= 2, steps
    assert fact(at, "Chosen agent").startswith("answer-")
    assert {"Runner-up", "Margin", "Lambda interval"} <= {lab for lab, _ in facts(at)}
    assert not at.metric, "the headline uses wrapping facts, not truncating st.metric"
    assert not at.get("plotly_chart")  # charts are drawn on demand
    detail = [w for w in at.segmented_control if w.key.startswith("pg:") and w.key.endswith(":detail")][0]
    detail.set_value("Utility chart").run()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any(t.get("name") == "utility" for t in spec["data"])
    assert len(at.session_state["pg:result"]["traces"]) == 1
    assert stored_decisions(app_db) == 1


def _routed(open_at, app_db, **state):
    from skillorchestra_core.routing.trace import RouteTrace

    at = open_at(**{"pg:animate": False, **state})
    question = at.selectbox(key="pg:example").options[1]
    at.selectbox(key="pg:example").set_value(question).run()
    assert at.text_area(key="q").value == question
    at.button(key="pg:route").click().run()
    assert not at.exception
    (raw,) = at.session_state["pg:result"]["traces"]
    return at, RouteTrace.from_json(raw)


def test_moving_lambda_updates_headline_table_and_note_together(app_db, open_at):
    at, trace = _routed(open_at, app_db)
    step = trace.steps[0]
    high = step.lambda_interval.high
    assert high is not None and high < 2.0
    before = fact(at, "Chosen agent")
    assert before == step.chosen
    at.slider(key="lam").set_value(round(high + 0.005, 3)).run()
    assert not at.exception
    new = step.lambda_interval.above
    assert fact(at, "Chosen agent") == new  # the headline
    assert fact(at, "Chosen") == new  # the step's figures
    assert not at.dataframe  # the candidates are a static table; the grid is drawn on demand
    table = at.table[0].value
    assert fact(at, "Runner-up") == table.iloc[1]["agent"] == table.loc[table[""] == "runner-up", "agent"].item()
    assert table.iloc[0]["agent"] == new and table.iloc[0][""] == "chosen"  # re-sorted, winner first
    utility = table["utility"].tolist()
    assert utility == sorted(utility, reverse=True)
    assert any(new in w.value and step.chosen in w.value for w in at.warning)  # the note
    detail = next(w for w in at.segmented_control if w.key.endswith(":detail"))
    detail.set_value("All columns").run()
    grid = at.dataframe[0].value  # every column, the same order and figures
    assert {"model", "cost (norm.)"} <= set(grid.columns) and grid["agent"].tolist() == table["agent"].tolist()
    assert grid["utility"].tolist() == utility


def test_compare_two_routers_side_by_side_and_export(app_db, open_at):
    at = open_at(**{"pg:animate": False})
    at.text_area(key="q").set_value("Which emperor ruled Rome after the fall of Carthage?")
    at.radio(key="compare").set_value("another router").run()
    assert "skill" not in at.selectbox(key="router2").options  # the same router twice is not offered
    at.selectbox(key="router2").set_value("cheapest")
    at.button(key="pg:route").click().run()
    assert not at.exception
    assert len(at.session_state["pg:result"]["traces"]) == 2
    assert any("Cheapest" in m.value for m in at.markdown)
    assert sum(b.label == "Export trace (JSON)" for b in at.get("download_button")) == 2
    # side by side: each step's candidates as a static table of the deciding columns, the choice first
    tables = [t.value for t in at.table]
    assert len(tables) == 2 and not at.dataframe
    for table, trace in zip(tables, at.session_state["pg:result"]["traces"]):
        step = json.loads(trace)["steps"][0]
        assert list(table.columns) == ["agent", "utility", "mean", "cost (USD)"]
        assert table.iloc[0]["agent"] == step["chosen"]  # in the router's own order
        assert table["cost (USD)"].dtype == float and table["cost (USD)"].notna().all()


def test_same_router_twice_cannot_crash(app_db, open_at):
    at = open_at(**{"pg:animate": False, "compare": "another router", "router2": "cheapest"})
    at.text_area(key="q").set_value("Which emperor ruled Rome after the fall of Carthage?")
    at.selectbox(key="router").set_value("cheapest").run()  # now the main router is the second one
    assert "cheapest" not in at.selectbox(key="router2").options
    at.button(key="pg:route").click().run()
    assert not at.exception
    assert len({json.loads(t)["router"] for t in at.session_state["pg:result"]["traces"]}) == 2


def test_compare_versions_offers_only_other_versions(app_db, open_at):
    at = open_at()
    assert "another version" not in at.radio(key="compare").options  # one version: nothing to compare with
    assert any("Only one version" in c.value for c in at.caption)
    second = add_version(app_db, "demo-qa")
    at = open_at(**{"pg:animate": False, "ctx:version:demo-qa": 1})
    at.radio(key="compare").set_value("another version").run()
    assert at.selectbox(key="v2").options == [f"v{second}"]
    at.text_area(key="q").set_value("Who wrote the Iliad?")
    at.button(key="pg:route").click().run()
    assert not at.exception
    versions = [json.loads(t)["version"] for t in at.session_state["pg:result"]["traces"]]
    assert versions == [1, second]


def test_a_failed_comparison_stores_nothing(app_db, open_at, monkeypatch):
    from skillorchestra_core.routing import compare

    real, calls = compare.start_route, []

    def second_run_fails(s, handbook, version, query, options, **kw):
        calls.append(options.router)
        if len(calls) == 2:
            raise ValueError(f"router {options.router} cannot route this query")
        return real(s, handbook, version, query, options, **kw)

    monkeypatch.setattr(compare, "start_route", second_run_fails)
    at = open_at(**{"pg:animate": False})
    at.text_area(key="q").set_value("Which emperor ruled Rome after the fall of Carthage?")
    at.radio(key="compare").set_value("another router").run()
    at.selectbox(key="router2").set_value("cheapest")
    at.button(key="pg:route").click().run()
    assert not at.exception and calls == ["skill", "cheapest"]
    assert "nothing stored" in at.error[0].value and "cannot route" in at.error[0].value
    assert stored_decisions(app_db) == 0  # the first run, already routed, was rolled back too
    assert "pg:result" not in at.session_state


def test_live_execution_is_not_offered_offline(app_db, open_at):
    at = open_at()
    assert "live" not in at.radio(key="exec").options


def test_inputs_survive_a_page_switch(app_db, open_at):
    at, trace = _routed(open_at, app_db)
    at.radio(key="cost").set_value("usd").run()
    at.slider(key="lam").set_value(0.3).run()
    at.switch_page("pages/graph.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.text_area(key="q").value == trace.query
    assert at.radio(key="cost").value == "usd"
    assert at.slider(key="lam").value == 0.3
    assert any("earlier inputs" in i.value for i in at.info)  # the drawn result says it predates the cost unit


def test_a_link_reproduces_the_result(app_db, open_page, open_at):
    _, trace = _routed(open_at, app_db, router="cheapest")
    params = {"handbook": "demo-qa", "version": "1", "q": trace.query, "router": "cheapest", "lam": "0.25"}
    fresh = open_page(PAGE, params)
    assert not fresh.exception
    (raw,) = fresh.session_state["pg:result"]["traces"]
    assert json.loads(raw)["router"] == "cheapest" and json.loads(raw)["lambda"] == 0.25
    assert fact(fresh, "Chosen agent") == trace.chosen_agent
    assert stored_decisions(app_db) == 1  # opening a link routes for display only


def test_playground_reports_an_empty_query_without_routing(app_db, open_at):
    at = open_at()
    at.button(key="pg:route").click().run()
    assert not at.exception
    assert any("Type a query" in w.value for w in at.warning)
    assert "pg:result" not in at.session_state


def test_presenter_mode_shows_the_query_steps_and_choice_large(app_db, open_at):
    at, trace = _routed(open_at, app_db)
    at.toggle(key="present").set_value(True).run()
    assert not at.exception
    assert not at.title  # the chrome goes: no page title
    assert any("stSidebar" in h.proto.body for h in at.get("html"))  # the sidebar/toolbar are hidden by CSS
    assert any(m.value.startswith("## ") and m.value[3:].replace("\\", "") == trace.query
               for m in at.markdown)  # the query, large
    path = [m.value for m in at.markdown if m.value.startswith("1. **")][0].replace("\\", "")
    assert f"→ **{trace.steps[0].chosen}**" in path
    assert fact(at, "Chosen agent") == trace.chosen_agent
    at.button(key="pg:sweep").click().run()
    assert not at.exception
    assert any(m.value.startswith("### lambda = 2.000") for m in at.markdown)  # the last frame of the sweep
