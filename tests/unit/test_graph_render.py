"""Renderers: Plotly figure (clickable ids), pyvis HTML (offline, no CDN), DOT; every name escaped."""

import json
import re

import pytest

from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.graph.filters import GraphFilter, apply_filter
from skillorchestra_core.graph.render_dot import dot_source
from skillorchestra_core.graph.render_plotly import NODE_TRACES, plotly_figure
from skillorchestra_core.graph.render_pyvis import pyvis_html
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


def test_plotly_figure_nodes_are_clickable_by_id(g):
    fig = plotly_figure(g, selected=_skill_with(g, XSS))
    spec = json.loads(fig.to_json())
    by_name = {t["name"]: t for t in spec["data"]}
    assert set(NODE_TRACES.values()) <= set(by_name)
    assert sorted(by_name["skills"]["customdata"]) == sorted(n for n in g if n.startswith("skill:"))
    assert sorted(by_name["agents"]["customdata"]) == ["agent:a<b>", "agent:href-agent"]
    assert spec["layout"]["clickmode"] == "event+select"


def test_plotly_escapes_labels_and_tooltips(g):
    blob = plotly_figure(g).to_json()
    spec = json.loads(blob)
    texts = [t for trace in spec["data"] for key in ("text", "hovertext") for t in (trace.get(key) or [])]
    assert texts
    assert not any("<img" in t or "<b>" in t for t in texts if isinstance(t, str))
    assert any(esc(XSS) in t for t in texts)
    assert any("a&lt;b&gt;" in t for t in texts)


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
    assert plotly_figure(view.graph).data
    assert "digraph" in dot_source(view.graph)
    empty = apply_filter(g, GraphFilter(search="no such thing"))
    assert plotly_figure(empty.graph).data


def test_md_escape_neutralises_markdown_and_directives():
    assert md_escape("**x** <b> :red[y]") == "\\*\\*x\\*\\* \\<b\\> \\:\u2060red\\[y\\]"
    assert md_escape(None) == ""


def test_renderers_follow_the_theme(g):
    light, dark = plotly_figure(g, theme="light"), plotly_figure(g, theme="dark")
    assert {a.bgcolor for a in light.layout.annotations} == {"rgba(255,255,255,0.85)"}
    assert {a.bgcolor for a in dark.layout.annotations} == {"rgba(14,17,23,0.85)"}
    assert {a.font.color for a in dark.layout.annotations} == {"#fafafa"}
    assert light.layout.plot_bgcolor is None  # the Streamlit theme paints the background
    assert "#0e1117" in pyvis_html(g, theme="dark") and "#0e1117" not in pyvis_html(g, theme="light")
    assert 'bgcolor="transparent"' in dot_source(g, theme="dark")


def test_edge_colours_come_from_one_continuous_scale():
    from skillorchestra_core.graph.text import EDGE_BIN_COUNT, MEAN_BINS, mean_bin, mean_color

    assert len(MEAN_BINS) == EDGE_BIN_COUNT
    assert mean_bin(0.0)[2] == mean_color(0.05) and mean_bin(1.0)[2] == mean_color(0.95)
    widths = [b[3] for b in MEAN_BINS]
    assert widths == sorted(widths)  # stronger edges are thicker
    assert len({b[2] for b in MEAN_BINS}) == EDGE_BIN_COUNT
