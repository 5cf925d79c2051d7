"""Renderers: Vega-Lite spec (clickable ids), pyvis HTML (offline, no CDN), DOT; every name escaped."""

import json
import re

import pytest

from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.graph.filters import GraphFilter, apply_filter
from skillorchestra_core.graph.render_dot import dot_source
from skillorchestra_core.graph.render_pyvis import pyvis_html
from skillorchestra_core.graph.render_vega import NODE_LAYER, NODE_PARAM, vega_spec
from skillorchestra_core.graph.service import load_version_data, version_graph
from skillorchestra_core.graph.text import esc, md_escape

XSS = "<img src=x onerror=alert(1)>"
QUOTE = 'say "hi" & \\ bye'


@pytest.fixture
def g(db_session):
    rows, line = [], 0
    for q in range(4):
        for agent in ("a<b>", "href-agent"):
            line += 1
            rows.append(OutcomeRow(line=line, query_id=f"q{q}", query=f"question {q}", agent=agent,
                                   score=float((q + line) % 2), task=XSS if q < 2 else QUOTE))
    ingest_outcomes(db_session, "esc", rows, source_label="t", skills_from_task=True)
    db_session.commit()
    return version_graph(load_version_data(db_session, "esc", None))


def _skill_with(g, name):
    return next(n for n, d in g.nodes(data=True) if d["kind"] == "skill" and d["label"] == name)


def _layers(spec):
    return {layer["name"]: layer for layer in spec["layer"]}


def _spec_without_data(spec) -> str:
    return json.dumps({k: v for k, v in spec.items() if k != "datasets"})


def test_vega_nodes_are_clickable_by_id(g):
    selected = _skill_with(g, XSS)
    spec = vega_spec(g, selected=selected)
    nodes = spec["datasets"]["nodes"]
    assert sorted(nodes["id"]) == sorted(g.nodes)
    assert sorted(nodes.loc[nodes["kind"] == "agent", "id"]) == ["agent:a<b>", "agent:href-agent"]
    node_layer = _layers(spec)[NODE_LAYER]
    assert node_layer["params"] == [{"name": NODE_PARAM, "select": {"type": "point", "fields": ["id"], "on": "click"}}]
    assert list(nodes.loc[nodes["selected"], "id"]) == [selected]  # the ring layer draws these
    assert _layers(spec)["ring"]["transform"] == [{"filter": "datum.selected"}]
    assert spec["usermeta"] == {"embedOptions": {"renderer": "svg"}}  # drawn points a browser test can click
    # modes, skills and agents differ in shape
    assert dict(zip(nodes["kind"], nodes["shape"])) == {"mode": "square", "skill": "circle", "agent": "diamond"}


def test_vega_names_go_in_as_data_only(g):
    """Vega draws labels as SVG text and its tooltip escapes values: names go in raw (HTML-escaping them would show
    "&lt;" on screen), and only as data, never into the spec's expressions, field names or title rows."""
    spec = vega_spec(g, title=XSS)
    nodes = spec["datasets"]["nodes"]
    assert XSS in set(nodes["label"]) and "a<b>" in set(nodes["label"])
    blob = json.dumps({k: df.to_dict("records") for k, df in spec["datasets"].items()}, ensure_ascii=False)
    assert "&lt;" not in blob and "&amp;" not in blob and "&quot;" not in blob
    assert any(XSS in t for t in nodes["title"]) and any('say "hi"' in t for t in nodes["about"].tolist()
                                                             + nodes["title"].tolist())
    edges = spec["datasets"]["competence"]
    assert any(t.startswith("a<b> on ") for t in edges["title"])
    outside = _spec_without_data({**spec, "title": None})
    assert "<img" not in outside and "a<b>" not in outside and "say" not in outside
    assert spec["title"] == XSS  # a chart title is drawn as text too
    tooltip_rows = [t["title"] for layer in spec["layer"] for t in layer.get("encoding", {}).get("tooltip", [])]
    assert tooltip_rows and "image" not in tooltip_rows  # a row named "image" would be loaded as an image URL
    defs = [d for layer in spec["layer"] for ch in layer.get("encoding", {}).values()
            for d in (ch if isinstance(ch, list) else [ch])]
    assert {d["field"] for d in defs if "field" in d} <= set(nodes.columns) | set(edges.columns)


def test_vega_edges_have_a_continuous_scale_with_a_legend_and_tooltips(g):
    spec = vega_spec(g)
    comp = _layers(spec)["competence"]["encoding"]
    assert comp["color"]["field"] == "mean" and comp["color"]["type"] == "quantitative"
    assert comp["color"]["scale"]["domain"] == [0, 0.5, 1] and comp["color"]["legend"]["values"][-1] == 1
    assert comp["strokeWidth"]["scale"]["range"][0] < comp["strokeWidth"]["scale"]["range"][1]  # stronger: thicker
    edges = spec["datasets"]["competence"]
    assert len(edges) == sum(1 for *_, d in g.edges(data=True) if d["kind"] == "competence")
    assert list(edges["mean"]) == sorted(edges["mean"])  # strong edges drawn last, on top
    assert "edge_info" in _layers(spec) and "tooltip" in comp


def test_vega_size_caps(g, monkeypatch):
    import skillorchestra_core.graph.render_vega as rv

    monkeypatch.setattr(rv, "MAX_EDGE_HOVERS", 0)
    monkeypatch.setattr(rv, "MAX_LABEL_BACKGROUNDS", 1)
    monkeypatch.setattr(rv, "MAX_SVG_MARKS", 1)
    spec = vega_spec(g)
    names = set(_layers(spec))
    assert "edge_info" not in names and "tooltip" not in _layers(spec)["competence"]["encoding"]
    assert "title" not in spec["datasets"]["competence"].columns
    assert not {"halo_left", "halo_right"} & names and {"labels_left", "labels_right", NODE_LAYER} <= names
    assert spec["usermeta"]["embedOptions"]["renderer"] == "canvas"


@pytest.mark.parametrize("assets", ["static", "inline"])
def test_pyvis_html_is_offline_and_escaped(g, assets):
    html = pyvis_html(g, assets=assets)
    assert "cdn.jsdelivr" not in html and "cdnjs" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']https?://""", html)
    assert "<img src=x" not in html
    if assets == "static":
        assert '<script src="/app/static/vis-network.min.js"></script>' in html
        assert len(html) < 100_000
    else:
        assert "vis-network" in html and len(html) > 300_000
    # pyvis switches to an innerHTML popup for tooltips that contain "href": those must arrive escaped
    assert "href-agent" in html
    payload = html[html.index("nodes = new vis.DataSet("):html.index("edges = new vis.DataSet(")]
    assert "\\u003cimg" in payload  # labels: raw text, JSON-escaped, drawn on the canvas
    assert "\\u0026lt;img" in payload  # tooltips: HTML-escaped (the "href" popup path), then JSON-escaped


def test_pyvis_tooltips_stay_plain_text_without_href(g):
    view = apply_filter(g, GraphFilter(agents=("a<b>",)))
    html = pyvis_html(view.graph)
    payload = html[html.index("nodes = new vis.DataSet("):html.index("edges = new vis.DataSet(")]
    assert "\\u0026lt;" not in payload  # vis-network sets string tooltips with innerText
    assert "<img src=x" not in html


def test_pyvis_rejects_unknown_assets(g):
    with pytest.raises(ValueError):
        pyvis_html(g, assets="cdn")


def test_dot_source_quotes_and_escapes(g):
    dot = dot_source(g, selected=_skill_with(g, QUOTE))
    assert "<img" not in dot
    assert esc(XSS) in dot
    assert "say &quot;hi&quot; &amp; \\\\ bye" in dot
    # every quoted string is closed: strip them and no quote is left
    assert '"' not in re.sub(r'"(?:[^"\\]|\\.)*"', "", dot)
    assert dot.startswith("digraph handbook {") and dot.rstrip().endswith("}")
    assert "penwidth=3" in dot


def test_filtered_views_render(g):
    view = apply_filter(g, GraphFilter(search="say", depth=0))
    assert len(vega_spec(view.graph)["datasets"]["nodes"])
    assert "digraph" in dot_source(view.graph)
    empty = apply_filter(g, GraphFilter(search="no such thing"))
    assert vega_spec(empty.graph)["layer"]


def test_md_escape_neutralises_markdown_and_directives():
    assert md_escape("**x** <b> :red[y]") == "\\*\\*x\\*\\* \\<b\\> \\:\u2060red\\[y\\]"
    assert md_escape(None) == ""


def test_renderers_follow_the_theme(g):
    light, dark = _layers(vega_spec(g, theme="light")), _layers(vega_spec(g, theme="dark"))
    for side in ("left", "right"):  # each label sits on a halo of the theme's background colour
        assert light[f"halo_{side}"]["mark"]["stroke"] == "#ffffff"
        assert light[f"labels_{side}"]["mark"]["fill"] == "#31333f"
        assert dark[f"halo_{side}"]["mark"]["stroke"] == "#0e1117"
        assert dark[f"labels_{side}"]["mark"]["fill"] == "#fafafa"
    assert light["tree"]["mark"]["color"] != dark["tree"]["mark"]["color"]
    assert "background" not in vega_spec(g, theme="dark")  # the Streamlit theme paints the background
    assert "#0e1117" in pyvis_html(g, theme="dark") and "#0e1117" not in pyvis_html(g, theme="light")
    assert 'bgcolor="transparent"' in dot_source(g, theme="dark")


def test_edge_colours_come_from_one_continuous_scale():
    from skillorchestra_core.graph.text import EDGE_BIN_COUNT, MEAN_BINS, mean_bin, mean_color

    assert len(MEAN_BINS) == EDGE_BIN_COUNT
    assert mean_bin(0.0)[2] == mean_color(0.05) and mean_bin(1.0)[2] == mean_color(0.95)
    widths = [b[3] for b in MEAN_BINS]
    assert widths == sorted(widths)  # stronger edges are thicker
    assert len({b[2] for b in MEAN_BINS}) == EDGE_BIN_COUNT
