"""AppTest of the Posteriors page on the demo database: plots, level and prior and score toggles, evidence."""

import json
import re

import numpy as np
import pytest

PAGE = "pages/posteriors.py"


def _figures(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _forest(at):
    """The forest plot (a Vega-Lite chart, the page's first view): its spec and its data."""
    import pyarrow as pa

    (chart,) = at.get("vega_lite_chart")
    return json.loads(chart.proto.spec), pa.ipc.open_stream(chart.proto.data.data).read_pandas()


def _x_title(spec) -> str:
    return next(layer["encoding"]["x"]["title"] for layer in spec["layer"] if "title" in layer["encoding"]["x"])


def _table(at, *columns):
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise AssertionError(f"no dataframe with columns {columns}")


@pytest.mark.parametrize("handbook", ["demo-qa", "demo-agents"])
def test_posteriors_render_every_demo_handbook(app_db, open_at, handbook):
    at = open_at(handbook)
    assert not at.exception
    assert at.title[0].value == "Posteriors"
    assert any(re.search(r"learned from [\d,]+ train queries", c.value) for c in at.caption)
    assert not _figures(at)  # lazy tabs: only the open one (the forest plot, in Vega-Lite) is drawn
    spec, rows = _forest(at)
    agents = at.multiselect(key=f"post:agents:{handbook}").value
    assert spec["encoding"]["color"]["scale"]["domain"] == agents
    assert set(rows["agent"]) == set(agents)
    assert _figures(_tab(at, "Densities"))[0]["data"][0]["fill"] == "tozeroy"
    heat = _figures(_tab(at, "Heatmap"))[0]
    assert heat["data"][0]["type"] == "heatmap"
    assert "n=%{customdata[0]" in heat["data"][0]["hovertemplate"]
    assert _table(_tab(at, "Evidence"), "query", "text", "weight", "score").shape[0] > 0


def _tab(at, name):
    at.session_state["post:tab"] = name
    return at.run()


def _mean_width(forest):
    rows = forest[1]
    return float(np.mean(rows["hi"] - rows["lo"]))


def test_credible_level_changes_the_intervals(app_db, open_at):
    narrow = _forest(open_at(**{"post:level": 0.5}))
    wide = _forest(open_at(**{"post:level": 0.99}))
    assert _mean_width(narrow) < _mean_width(wide)
    assert "50%" in _x_title(narrow[0])


def test_empirical_rate_toggle_shows_the_reference_reading(app_db, open_at):
    at = open_at(**{"post:score": "empirical"})
    assert not at.exception
    spec, rows = _forest(at)
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["point"]  # no interval lines
    assert (rows["lo"] == rows["hi"]).all()
    assert "empirical" in _x_title(spec)


def test_flat_prior_toggle(app_db, open_at):
    hier = _forest(open_at())
    flat = _forest(open_at(**{"post:prior": "flat"}))
    assert hier[1]["x"].tolist() != flat[1]["x"].tolist()
    assert any("flat prior" in i.value for i in open_at(**{"post:prior": "flat"}).info)


def test_node_in_the_url_picks_the_density_skill_and_agent(app_db, open_at):
    at = open_at("demo-agents", node="skill:search.retrieval.multi_hop")
    assert "search.retrieval.multi_hop" in at.multiselect(key="post:skills:demo-agents").value
    assert _tab(at, "Densities").selectbox(key="post:density:demo-agents").value == "search.retrieval.multi_hop"
    assert _tab(at, "Evidence").selectbox(key="post:ev_skill:demo-agents").value == "search.retrieval.multi_hop"
    at = open_at("demo-agents", node="agent:search-2")
    assert at.multiselect(key="post:agents:demo-agents").value[0] == "search-2"


def test_density_overlays_the_chosen_agents(app_db, open_at):
    at = open_at("demo-qa", **{"post:agents:demo-qa": ["mistral-7b-instruct", "llama3.1-70b-instruct"],
                                "post:tab": "Densities"})
    dens = _figures(at)[0]
    assert len(dens["data"]) == 2 and all(t["fill"] == "tozeroy" for t in dens["data"])
    summary = _table(at, "agent", "mean", "alpha", "beta")
    assert set(summary["agent"]) == {"mistral-7b-instruct", "llama3.1-70b-instruct"}


def test_evidence_is_paged(app_db, open_at):
    state = {"post:ev_agent:demo-qa": "mistral-7b-instruct", "post:ev_skill:demo-qa": "answer.math",
             "post:tab": "Evidence"}
    first = open_at(**state)
    page1 = _table(first, "query", "text", "score")
    caption = next(c.value for c in first.caption if c.value.startswith("Page 1 of"))
    pages = int(caption.split(" of ")[1].split(" ")[0])
    assert pages >= 2 and len(page1) == 20
    second = _table(open_at(**state, **{"post:ev_page:demo-qa": 2}), "query", "text", "score")
    assert set(page1["query"]).isdisjoint(second["query"])
    assert any(m.value.startswith("**mistral") and "Beta(" in m.value for m in first.markdown)


def test_agent_prior_and_skill_choices_survive_a_page_switch(app_db, open_at):
    at = open_at("demo-qa")
    agents = at.multiselect(key="post:agents:demo-qa").options[-2:]
    at.multiselect(key="post:agents:demo-qa").set_value(agents).run()
    at.radio(key="post:prior").set_value("flat").run()
    at.switch_page("pages/overview.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.multiselect(key="post:agents:demo-qa").value == agents
    assert at.radio(key="post:prior").value == "flat"


def test_the_cell_count_is_the_cells_shown(app_db, open_at):
    at = open_at("demo-agents")
    agents = at.multiselect(key="post:agents:demo-agents").value
    skills = at.multiselect(key="post:skills:demo-agents").value
    z = json.loads(_tab(at, "Heatmap").get("plotly_chart")[0].proto.spec)["data"][0]["z"]
    shown = sum(v is not None for row in z for v in row)
    note = [m.value for m in list(at.info) + list(at.warning) if "cells shown" in m.value][0]
    assert f"of {shown} agent-skill cells" in note or f"All {shown} agent-skill cells" in note, (note, agents, skills)


def test_a_decision_link_opens_the_agent_skill_cell(app_db, open_at, open_page):
    at = open_page(PAGE, {"handbook": "demo-agents", "node": "skill:search.retrieval.multi_hop", "agent": "search-3"})
    assert not at.exception
    assert "search-3" in at.multiselect(key="post:agents:demo-agents").value
    assert at.selectbox(key="post:ev_agent:demo-agents").value == "search-3"
    assert at.selectbox(key="post:ev_skill:demo-agents").value == "search.retrieval.multi_hop"


def test_a_heatmap_click_opens_the_cell_evidence(app_db, open_at):
    at = _tab(open_at("demo-qa"), "Heatmap")
    at.session_state["post:heatmap"] = {"selection": {"points": [
        {"x": 3, "y": "mistral-7b-instruct", "z": 0.5, "customdata": [12.0, "Math", "answer.math"]}],
        "point_indices": [0], "box": [], "lasso": []}}
    at.run()
    assert not at.exception
    assert at.selectbox(key="post:ev_agent:demo-qa").value == "mistral-7b-instruct"
    assert at.selectbox(key="post:ev_skill:demo-qa").value == "answer.math"
    assert any(m.value.startswith("**mistral") and "Beta(" in m.value for m in at.markdown)
