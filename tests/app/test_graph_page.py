"""AppTest of the Graph page on the demo database: renders, filters change the chart, the node panel ranks agents."""

import json

import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from skillorchestra_core.db import session
from skillorchestra_core.graph.render_vega import NODE_PARAM
from skillorchestra_core.graph.service import load_version_data

PAGE = "pages/graph.py"
CHART = "graph:chart"


def _chart(at):
    """(spec, {dataset name: DataFrame}) of the page's Vega-Lite chart, as the browser receives them."""
    charts = at.get("vega_lite_chart")
    assert charts, "no Vega-Lite chart drawn"
    proto = charts[0].proto
    return json.loads(proto.spec), {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in proto.datasets}


def _nodes(at, kind):
    nodes = _chart(at)[1]["nodes"]
    return nodes[nodes["kind"] == kind]


def _edges(at):
    """The competence edges drawn (one row each)."""
    return _chart(at)[1]["competence"]


def _table(at, *columns):
    """The first dataframe shown with all these columns (AppTest does not expose dataframe keys)."""
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise AssertionError(f"no dataframe with columns {columns}")


def _ids(at, kind):
    return sorted(_nodes(at, kind)["id"])


@pytest.mark.parametrize("handbook", ["demo-qa", "demo-agents"])
def test_graph_renders_every_demo_handbook(app_db, open_at, handbook):
    at = open_at(handbook)
    assert not at.exception
    assert at.title[0].value == "Graph"
    with session(app_db) as s:
        c = load_version_data(s, handbook, None).loaded.content
    assert len(_ids(at, "skill")) == len(c.skills)
    assert _ids(at, "agent") == sorted(f"agent:{a}" for a in {n for n, _ in c.agents})  # every agent is drawn
    spec, _ = _chart(at)
    assert at.get("vega_lite_chart")[0].proto.selection_mode == [NODE_PARAM]
    assert spec["usermeta"] == {"embedOptions": {"renderer": "svg"}}
    assert any("showing" in cap.value for cap in at.caption)


@pytest.mark.parametrize("view", ["Explore (physics)", "Hierarchy (DOT)"])
def test_other_views(app_db, open_at, view):
    at = open_at("demo-agents", **{"graph:view": view})
    assert not at.exception
    if view.startswith("Explore"):
        proto = str(at.get("iframe")[0].proto)
        assert "/app/static/vis-network.min.js" in proto and "cdnjs" not in proto
    else:
        assert "digraph handbook" in str(at.get("graphviz_chart")[0].proto)


def test_mode_filter_changes_the_figure(app_db, open_at):
    at = open_at("demo-agents")
    before = _ids(at, "skill")
    at.multiselect(key="graph:modes:demo-agents").set_value(["code"]).run()
    assert not at.exception
    after = _ids(at, "skill")
    assert after and all(n.startswith("skill:code.") for n in after) and len(after) < len(before)
    assert _ids(at, "mode") == ["mode:code"]


def test_search_and_top_k_change_the_figure(app_db, open_at):
    at = open_at("demo-qa")
    all_edges = len(_edges(at))
    at.number_input(key="graph:top_k:demo-qa").set_value(1).run()
    assert len(_edges(at)) < all_edges
    at.text_input(key="graph:q:demo-qa").set_value("arith").run()
    assert not at.exception
    skills = _ids(at, "skill")
    assert "skill:answer.math.arithmetic" in skills and "skill:answer.math" in skills  # a hit and its parent
    assert len(skills) < 22
    hits = [o.rsplit("(", 1)[1].rstrip(")") for o in at.selectbox(key="graph:hit:demo-qa").options
            if o.endswith(")")]  # the search-hit picker: "name (node id)"
    assert hits
    nodes = _chart(at)[1]["nodes"]
    assert set(nodes.query("stroke_w > 1")["id"]) == set(hits)  # every hit, and only hits, ringed


def test_collapsing_and_expanding_a_subtree(app_db, open_at):
    at = open_at("demo-qa", **{"graph:depth:demo-qa": 0})
    top = _ids(at, "skill")
    assert top and all(n.count(".") == 1 for n in top)
    assert any("(+" in t for t in _nodes(at, "skill")["label"])
    at.query_params["node"] = "skill:answer.math"
    at.run()
    at.button(key="graph:expand").click().run()
    assert not at.exception
    assert "skill:answer.math.arithmetic" in _ids(at, "skill")
    assert "skill:answer.code.python" not in _ids(at, "skill")


def _expected_ranking(db_url, handbook, skill):
    with session(db_url) as s:
        comp = load_version_data(s, handbook, None).competence
    rows = comp[comp["skill"] == skill].sort_values(["mean", "n", "agent"], ascending=[False, False, True])
    return list(rows["agent"])


def _ranking(at):
    """The panel's ranking, drawn as wrapping text lines "1. **name** mean [low, high] · n ..."."""
    import re

    text = [m.value for m in at.markdown if m.value.startswith("1. **")][0].replace("\\", "")
    rows = re.findall(r"^\d+\. \*\*(.+?)\*\* ([\d.]+) \[([\d.]+), ([\d.]+)\]", text, re.M)
    return [(name, float(m), float(lo), float(hi)) for name, m, lo, hi in rows]


def test_clicking_a_skill_opens_its_panel_with_agents_ranked(app_db, open_at):
    at = open_at("demo-qa")
    at.session_state[CHART] = {"selection": {NODE_PARAM: [{"id": "skill:answer.math"}]}}  # a click, as sent
    at.run()
    assert not at.exception
    assert at.query_params["node"] == "skill:answer.math"
    nodes = _chart(at)[1]["nodes"]
    assert list(nodes.loc[nodes["selected"], "id"]) == ["skill:answer.math"]  # ringed in the same run
    assert any(h.value.startswith("Skill · ") and "Math" in h.value for h in at.subheader)
    rows = _ranking(at)
    assert [name for name, *_ in rows] == _expected_ranking(app_db, "demo-qa", "answer.math")
    assert all(low <= mean <= high for _, mean, low, high in rows)


def test_shared_url_opens_an_agent_panel(app_db, open_at):
    at = open_at("demo-agents", node="agent:search-1")
    assert not at.exception
    assert any(h.value.replace("\\", "") == "Agent · search-1" for h in at.subheader)
    prices = [v for v in (m.value.replace("\\", "") for m in at.markdown) if v.startswith("- search: ")][0]
    assert "per 1M tokens" in prices and " per call (" in prices  # price card and cost per call, as text
    means = [mean for _, mean, _, _ in _ranking(at)]
    assert means and means == sorted(means, reverse=True)


def test_unknown_node_in_the_url_is_harmless(app_db, open_at):
    at = open_at("demo-qa", node="skill:nope")
    assert not at.exception
    assert any("Click a node" in i.value for i in at.info)


def test_every_agent_has_its_edges_by_default_and_thinning_says_what_it_hides(app_db, open_at):
    at = open_at("demo-agents")
    assert not at.exception
    with session(app_db) as s:
        comp = load_version_data(s, "demo-agents", None).competence
    leaves = {k for k in comp["skill"]}
    drawn = len(_edges(at))
    assert drawn >= len(comp[comp["skill"].isin(leaves)]) // 2  # all agents, not the top 3
    assert "answer-3 on Long-context summary" in set(_edges(at)["title"])  # the planted weak edge, which top-3 hid
    assert any("Every agent's competence edge" in c.value for c in at.caption)
    at.number_input(key="graph:top_k:demo-agents").set_value(1).run()
    assert not at.exception
    note = [c.value for c in at.caption if c.value.startswith("Hiding")][0].replace("\\", "")
    assert f"Hiding {drawn - len(_edges(at))} of {drawn} competence edges" in note and "top 1 agents" in note
    assert "No edge drawn for" in note


def test_a_planted_weakness_is_visible(app_db, open_at):
    at = open_at("demo-agents")
    edges = _edges(at)
    assert (edges["mean"] < 0.4).any(), "no weak (red) competence edge drawn"
    long_ctx = edges[edges["title"].str.startswith("answer-3 on ") & edges["title"].str.contains("Long-context")]
    assert len(long_ctx) and float(long_ctx["posterior mean"].iloc[0].split(" ")[0]) < 0.5
    assert (long_ctx["mean"] < 0.5).all()


def test_colour_scale_has_a_legend_and_labels_have_backgrounds(app_db, open_at):
    at = open_at("demo-qa")
    spec, data = _chart(at)
    layers = {layer["name"]: layer for layer in spec["layer"]}
    colour = layers["competence"]["encoding"]["color"]
    assert colour["field"] == "mean" and colour["legend"]["values"] == [0, 0.25, 0.5, 0.75, 1]  # the gradient
    assert colour["scale"]["domain"] == [0, 0.5, 1]
    # every node's label is drawn twice: on a halo of the theme's background, then in ink
    assert set(data["nodes"]["side"]) == {"left", "right"}
    for side in ("left", "right"):
        assert layers[f"halo_{side}"]["mark"]["stroke"] == layers[f"halo_{side}"]["mark"]["fill"] == "#ffffff"
        assert layers[f"labels_{side}"]["encoding"]["text"] == {"field": "label"}
    assert data["nodes"]["label"].str.len().gt(0).all()


def test_node_panel_links_to_the_decisions_that_used_it(app_db, open_at):
    at = open_at("demo-qa", node="skill:answer.math")
    links = {p.label: p for p in at.get("page_link")}
    assert "Decisions that used this skill →" in links
