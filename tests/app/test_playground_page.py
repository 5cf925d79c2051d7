"""AppTest of the Playground page on the demo database."""

import json

PAGE = "pages/playground.py"

QUESTION = "How many years passed between the founding of the harbour of Turku and the death of its first mayor?"


def test_playground_routes_a_typed_query_and_shows_every_step(app_db, open_at):
    at = open_at(handbook="demo-agents")
    assert not at.exception
    assert at.title[0].value == "Playground"
    at.toggle(key="pg:animate").set_value(False)
    at.text_area(key="pg:query").set_value(QUESTION)
    at.button(key="pg:route").click().run()
    assert not at.exception
    steps = [m.value for m in at.markdown if m.value.startswith("#### Step")]
    assert len(steps) >= 2, steps
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Chosen agent"].startswith("answer-")
    assert "Lambda interval" in metrics and "Margin" in metrics
    charts = at.get("plotly_chart")
    assert charts, "no utility chart"
    spec = json.loads(charts[0].proto.spec)
    assert any(t.get("name") == "utility" for t in spec["data"])
    assert len(at.session_state["pg:trace_ids"]) == 1


def test_moving_lambda_changes_the_choice_at_the_predicted_point(app_db, open_at):
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.store import load_trace

    at = open_at(**{"pg:animate": False})
    question = at.selectbox(key="pg:example").options[1]
    at.selectbox(key="pg:example").set_value(question).run()
    assert at.text_area(key="pg:query").value == question
    at.button(key="pg:route").click().run()
    assert not at.exception
    (trace_id,) = at.session_state["pg:trace_ids"]
    with session(app_db) as s:
        trace = load_trace(s, trace_id)
    step = trace.steps[0]
    high = step.lambda_interval.high
    assert high is not None and high < 2.0
    at.slider(key="pg:lambda").set_value(round(high + 0.005, 3)).run()
    assert not at.exception
    assert any(step.lambda_interval.above in w.value and "would be chosen" in w.value for w in at.warning)


def test_compare_two_routers_side_by_side_and_export(app_db, open_at):
    at = open_at(**{"pg:animate": False})
    at.text_area(key="pg:query").set_value("Which emperor ruled Rome after the fall of Carthage?")
    at.radio(key="pg:compare").set_value("another router").run()
    at.selectbox(key="pg:router2").set_value("cheapest")
    at.button(key="pg:route").click().run()
    assert not at.exception
    assert len(at.session_state["pg:trace_ids"]) == 2
    assert any("Cheapest" in m.value for m in at.markdown)
    assert any(b.label == "Export trace (JSON)" for b in at.get("download_button"))


def test_playground_reports_an_empty_query_without_routing(app_db, open_at):
    at = open_at()
    at.button(key="pg:route").click().run()
    assert not at.exception
    assert any("Type a query" in w.value for w in at.warning)
    assert not at.session_state["pg:trace_ids"] if "pg:trace_ids" in at.session_state else True
