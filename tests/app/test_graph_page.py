"""AppTest of the Graph page on the demo database: renders, filters change the figure, the node panel ranks agents."""

import json

import pytest

from skillorchestra_core.db import session
from skillorchestra_core.graph.service import load_version_data

PAGE = "app_pages/graph.py"
CHART = "graph:chart"


def _traces(at):
    charts = at.get("plotly_chart")
    assert charts, "no Plotly chart drawn"
    return {t["name"]: t for t in json.loads(charts[0].proto.spec)["data"]}


def _table(at, *columns):
    """The first dataframe shown with all these columns (AppTest does not expose dataframe keys)."""
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise AssertionError(f"no dataframe with columns {columns}")


def _ids(at, trace):
    return sorted(_traces(at)[trace]["customdata"])


@pytest.mark.parametrize("handbook", ["demo-qa", "demo-agents"])
def test_graph_renders_every_demo_handbook(app_db, open_at, handbook):
    at = open_at(handbook)
    assert not at.exception
    assert at.title[0].value == "Graph"
    with session(app_db) as s:
        c = load_version_data(s, handbook, None).loaded.content
    assert len(_ids(at, "skills")) == len(c.skills)
    assert _ids(at, "agents") == sorted(f"agent:{a}" for a in {n for n, _ in c.agents})
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
    before = _ids(at, "skills")
    at.multiselect(key="graph:modes:demo-agents").set_value(["code"]).run()
    assert not at.exception
    after = _ids(at, "skills")
    assert after and all(n.startswith("skill:code.") for n in after) and len(after) < len(before)
    assert [m for m in _ids(at, "modes")] == ["mode:code"]


def test_search_and_top_k_change_the_figure(app_db, open_at):
    at = open_at("demo-qa")
    all_edges = sum(len([x for x in t["x"] if x is not None]) // 2 for n, t in _traces(at).items()
                    if n.startswith("mean "))
    at.number_input(key="graph:top_k:demo-qa").set_value(1).run()
    top1 = sum(len([x for x in t["x"] if x is not None]) // 2 for n, t in _traces(at).items()
               if n.startswith("mean "))
    assert top1 < all_edges
    at.text_input(key="graph:q:demo-qa").set_value("arith").run()
    assert not at.exception
    skills = _ids(at, "skills")
    assert "skill:answer.math.arithmetic" in skills and "skill:answer.math" in skills  # a hit and its parent
    assert len(skills) < 22
    assert at.selectbox(key="graph:hit:demo-qa").options  # the search-hit picker


def test_collapsing_and_expanding_a_subtree(app_db, open_at):
    at = open_at("demo-qa", **{"graph:depth:demo-qa": 0})
    top = _ids(at, "skills")
    assert top and all(n.count(".") == 1 for n in top)
    assert any("(+" in t for t in _traces(at)["skills"]["text"])
    at.query_params["node"] = "skill:answer.math"
    at.run()
    at.button(key="graph:expand").click().run()
    assert not at.exception
    assert "skill:answer.math.arithmetic" in _ids(at, "skills")
    assert "skill:answer.code.python" not in _ids(at, "skills")


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
    at.session_state[CHART] = {"selection": {"points": [{"curve_number": 7, "point_number": 0, "point_index": 0,
                                                         "customdata": "skill:answer.math"}],
                                             "point_indices": [0], "box": [], "lasso": []}}
    at.run()
    assert not at.exception
    assert at.query_params["node"] == "skill:answer.math"
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


def _edges(at) -> int:
    return sum(len([x for x in t["x"] if x is not None]) // 2 for n, t in _traces(at).items() if n.startswith("mean "))


def test_every_agent_has_its_edges_by_default_and_thinning_says_what_it_hides(app_db, open_at):
    at = open_at("demo-agents")
    assert not at.exception
    with session(app_db) as s:
        comp = load_version_data(s, "demo-agents", None).competence
    leaves = {k for k in comp["skill"]}
    drawn = _edges(at)
    assert drawn >= len(comp[comp["skill"].isin(leaves)]) // 2  # all agents, not the top 3
    hover = " ".join(_traces(at)["edge info"]["hovertext"])
    assert "answer-3 on Long-context summary" in hover  # the planted weak edge, which top-3 used to hide
    assert any("Every agent's competence edge" in c.value for c in at.caption)
    at.number_input(key="graph:top_k:demo-agents").set_value(1).run()
    assert not at.exception
    note = [c.value for c in at.caption if c.value.startswith("Hiding")][0].replace("\\", "")
    assert f"Hiding {drawn - _edges(at)} of {drawn} competence edges" in note and "top 1 agents" in note
    assert "No edge drawn for" in note


def test_a_planted_weakness_is_visible(app_db, open_at):
    at = open_at("demo-agents")
    weak = [t for n, t in _traces(at).items() if n.startswith("mean 0.")]
    red = {n for n, t in _traces(at).items() if n.startswith(("mean 0.0", "mean 0.1", "mean 0.2", "mean 0.3"))
           and [x for x in t["x"] if x is not None]}
    assert weak and red, "no weak (red) competence edge drawn"
    hovers = [h for h in _traces(at)["edge info"]["hovertext"] if h.startswith("answer-3 on ")]
    long_ctx = [h for h in hovers if "Long-context" in h]
    assert long_ctx and float(long_ctx[0].split("mean ")[1].split(" ")[0]) < 0.5


def test_colour_scale_has_a_legend_and_labels_have_backgrounds(app_db, open_at):
    at = open_at("demo-qa")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    bar = [t for t in spec["data"] if t.get("name") == "posterior mean"][0]
    assert bar["marker"]["showscale"] is True and bar["marker"]["cmin"] == 0 and bar["marker"]["cmax"] == 1
    labels = spec["layout"]["annotations"]
    assert len(labels) == sum(len(t["customdata"]) for n, t in _traces(at).items() if n in ("modes", "skills",
                                                                                                 "agents"))
    assert all(a.get("bgcolor") for a in labels)


def test_node_panel_links_to_the_decisions_that_used_it(app_db, open_at):
    at = open_at("demo-qa", node="skill:answer.math")
    links = {p.label: p for p in at.get("page_link")}
    assert "Decisions that used this skill →" in links
