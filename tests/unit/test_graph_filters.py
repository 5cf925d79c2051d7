"""Graph filters: mode, skill subtree, agent, minimum evidence, top-k, collapsing, search, scale."""

import pytest

from skillorchestra_core.graph.build import AGENT, COMPETENCE, MODE, SKILL
from skillorchestra_core.graph.filters import GraphFilter, apply_filter, default_depth
from skillorchestra_core.graph.layout import layered_layout
from skillorchestra_core.graph.service import load_version_data, version_graph
from skillorchestra_core.graph.synthetic import SyntheticSpec, build_synthetic_handbook


def _graph(db_session, **spec):
    spec = SyntheticSpec(**{"name": "f", "n_skills": 14, "n_agents": 5, "queries_per_leaf": 3, "seed": 1, **spec})
    build_synthetic_handbook(db_session, spec)
    db_session.commit()
    return version_graph(load_version_data(db_session, spec.name, None))


@pytest.fixture
def g(db_session):
    return _graph(db_session, modes=("search", "answer"))


def _nodes(view, kind):
    return sorted(n for n, d in view.graph.nodes(data=True) if d["kind"] == kind)


def _competence(view):
    return [(u, v, d) for u, v, d in view.graph.edges(data=True) if d["kind"] == COMPETENCE]


def test_no_filter_keeps_everything(g):
    view = apply_filter(g, GraphFilter(edges_from="all"))
    assert view.shown_skills == view.total_skills == 14
    assert len(_competence(view)) == 14 * 5
    assert not view.truncated


def test_leaf_edges_by_default(g):
    view = apply_filter(g)
    sources = {u for u, _, _ in _competence(view)}
    assert sources and all(view.graph.nodes[u]["depth"] == 1 for u in sources)


def test_mode_filter(g):
    view = apply_filter(g, GraphFilter(modes=("search",)))
    assert _nodes(view, MODE) == ["mode:search"]
    assert all(view.graph.nodes[n]["mode"] == "search" for n in _nodes(view, SKILL))
    assert view.total_skills == 7


def test_skill_subtree(g):
    view = apply_filter(g, GraphFilter(skill_root="answer.cat01"))
    skills = _nodes(view, SKILL)
    assert "skill:answer.cat01" in skills
    assert all(s.startswith("skill:answer.cat01") for s in skills)
    assert _nodes(view, MODE) == ["mode:answer"]  # the path to the root stays visible


def test_agent_filter(g):
    view = apply_filter(g, GraphFilter(agents=("agent-02",)))
    assert _nodes(view, AGENT) == ["agent:agent-02"]
    assert {v for _, v, _ in _competence(view)} == {"agent:agent-02"}


def test_min_evidence(g):
    view = apply_filter(g, GraphFilter(min_evidence=3.5, edges_from="all"))
    assert _competence(view)
    assert all(d["n"] >= 3.5 for _, _, d in _competence(view))
    assert {u for u, _, _ in _competence(view)} == {n for n in _nodes(view, SKILL)
                                                    if view.graph.nodes[n]["depth"] == 0}


def test_top_k_keeps_the_best_agents(g):
    view = apply_filter(g, GraphFilter(top_k=2, edges_from="all"))
    for skill in _nodes(view, SKILL):
        kept = [d["mean"] for _, _, d in view.graph.out_edges(skill, data=True) if d["kind"] == COMPETENCE]
        all_means = sorted((d["mean"] for _, _, d in g.out_edges(skill, data=True) if d["kind"] == COMPETENCE),
                           reverse=True)
        assert sorted(kept, reverse=True) == all_means[:2]
    assert len(_nodes(view, AGENT)) == 5  # agents stay, even one no top-2 edge reaches


def test_collapse_and_expand(g):
    view = apply_filter(g, GraphFilter(depth=0))
    assert all(view.graph.nodes[n]["depth"] == 0 for n in _nodes(view, SKILL))
    hidden = {n: view.graph.nodes[n]["hidden_children"] for n in _nodes(view, SKILL)}
    assert sum(hidden.values()) == 14 - len(hidden)
    opened = apply_filter(g, GraphFilter(depth=0, expanded=("answer.cat00",)))
    children = [n for n in _nodes(opened, SKILL) if n.startswith("skill:answer.cat00.")]
    assert children and opened.graph.nodes["skill:answer.cat00"]["hidden_children"] == 0
    assert not any(n.startswith("skill:answer.cat01.") for n in _nodes(opened, SKILL))


def test_search_shows_hits_with_their_ancestors(g):
    key = sorted(n for n in g if n.startswith("skill:search.cat01."))[0]
    view = apply_filter(g, GraphFilter(search=key.removeprefix("skill:").upper(), depth=0))
    assert view.matches == [key]
    assert set(_nodes(view, SKILL)) == {key, "skill:search.cat01"}
    assert view.graph.nodes[key]["match"] is True
    assert apply_filter(g, GraphFilter(search="agent-03")).matches == ["agent:agent-03"]


def test_max_skills_truncates(g):
    view = apply_filter(g, GraphFilter(max_skills=5))
    assert view.truncated and view.shown_skills == 5


def test_a_thousand_skills_collapse_to_a_readable_view(db_session):
    big = _graph(db_session, name="big", n_skills=1000, n_agents=20, queries_per_leaf=1)
    depth = default_depth(big)
    assert depth == 0
    view = apply_filter(big, GraphFilter(depth=depth, top_k=3))
    assert view.shown_skills <= 120 and view.total_skills == 1000
    assert len(_competence(view)) <= 3 * view.shown_skills
    assert sum(view.graph.nodes[n]["hidden_children"] for n in _nodes(view, SKILL)) == 1000 - view.shown_skills
    pos = layered_layout(view.graph)
    assert set(pos) == set(view.graph.nodes)
    skill_x = max(pos[n][0] for n in _nodes(view, SKILL))
    assert all(pos[a][0] > skill_x for a in _nodes(view, AGENT))
    sub = apply_filter(big, GraphFilter(skill_root="answer.cat05", depth=None, top_k=3))
    assert 1 < sub.shown_skills < 100


def test_small_handbooks_are_not_collapsed(g):
    assert default_depth(g) is None
