"""Graph construction: nodes, tree by parent/dotted key, competence edges carrying the posterior."""

import pytest

from skillorchestra_core.graph.build import (
    AGENT,
    COMPETENCE,
    MODE,
    SKILL,
    TREE,
    ancestors,
    build_graph,
    competence_edges,
    skill_parents,
    skill_subtree,
    split_id,
)
from skillorchestra_core.graph.service import load_version_data, queries_per_skill, version_graph
from skillorchestra_core.graph.synthetic import SyntheticSpec, build_synthetic_handbook
from skillorchestra_core.handbook.content import HandbookContent, SkillSpec


@pytest.fixture
def small(db_session):
    build_synthetic_handbook(db_session, SyntheticSpec(name="small", n_skills=7, n_agents=3, queries_per_leaf=4,
                                                       modes=("answer",), seed=3))
    db_session.commit()
    return load_version_data(db_session, "small", None)


def _kinds(g, kind):
    return sorted(n for n, d in g.nodes(data=True) if d["kind"] == kind)


def test_nodes_and_tree(small):
    g = version_graph(small)
    assert _kinds(g, MODE) == ["mode:answer"]
    assert len(_kinds(g, SKILL)) == 7
    assert _kinds(g, AGENT) == ["agent:agent-00", "agent:agent-01", "agent:agent-02"]
    tree = [(u, v) for u, v, d in g.edges(data=True) if d["kind"] == TREE]
    assert ("mode:answer", "skill:answer.cat00") in tree
    assert ("skill:answer.cat00", "skill:answer.cat00.s0000") in tree
    assert len(tree) == 7  # every skill has exactly one tree parent (a skill or its mode)
    assert g.nodes["skill:answer.cat00.s0000"]["depth"] == 1
    assert g.nodes["skill:answer.cat00.s0000"]["parent"] == "skill:answer.cat00"
    assert ancestors(g, "skill:answer.cat00.s0000") == ["skill:answer.cat00", "mode:answer"]
    assert "skill:answer.cat00.s0000" in skill_subtree(g, "skill:answer.cat00")


def test_competence_edges_carry_the_posterior(small):
    g = version_graph(small)
    comp = small.competence.set_index(["skill", "agent"])
    edges = [(u, v, d) for u, v, d in g.edges(data=True) if d["kind"] == COMPETENCE]
    assert len(edges) == 7 * 3
    for u, v, d in edges:
        row = comp.loc[(split_id(u)[1], split_id(v)[1])]
        assert d["weight"] == pytest.approx(row["mean"]) == pytest.approx(d["mean"])
        assert d["ci_low"] <= d["mean"] <= d["ci_high"]
        assert d["n"] == pytest.approx(row["n"])
    assert len(competence_edges(g, "skill:answer.cat01")) == 3
    assert len(competence_edges(g, "agent:agent-01")) == 7


def test_parent_skill_counts_its_subtree_queries(small):
    per = queries_per_skill(small.frames)
    leaves = [k for k in per if k.count(".") == 2 and k.startswith("answer.cat00.")]
    assert per["answer.cat00"] == sum(per[k] for k in leaves)
    assert all(per[k] == 4 for k in leaves)


def test_parents_from_parent_key_or_dotted_prefix():
    skills = {
        "a.x": SkillSpec("a.x", "a"),
        "a.x.y": SkillSpec("a.x.y", "a"),  # dotted prefix a.x exists
        "a.z.w": SkillSpec("a.z.w", "a"),  # no a.z: top level
        "a.q": SkillSpec("a.q", "a", parent_key="a.x"),  # explicit parent wins
        "b.x.y": SkillSpec("b.x.y", "b"),  # a prefix of another mode is not a parent
        "a.bad": SkillSpec("a.bad", "a", parent_key="a.missing"),
    }
    parents = skill_parents(skills)
    assert parents == {"a.x": None, "a.x.y": "a.x", "a.z.w": None, "a.q": "a.x", "b.x.y": None, "a.bad": None}


def test_parent_cycles_are_broken():
    skills = {"m.a": SkillSpec("m.a", "m", parent_key="m.b"), "m.b": SkillSpec("m.b", "m", parent_key="m.a")}
    parents = skill_parents(skills)
    assert None in parents.values()


def test_graph_without_evidence_or_agents():
    c = HandbookContent()
    c.add_mode("answer")
    c.skills["answer.a"] = SkillSpec("answer.a", "answer", name="A")
    g = build_graph(c, competence=None)
    assert _kinds(g, SKILL) == ["skill:answer.a"]
    assert g.nodes["skill:answer.a"]["label"] == "A"


def test_demo_graphs(demo_db_url):
    from skillorchestra_core.db import session

    with session(demo_db_url) as s:
        for name in ("demo-qa", "demo-agents"):
            data = load_version_data(s, name, None)
            g = version_graph(data)
            c = data.loaded.content
            assert len(_kinds(g, SKILL)) == len(c.skills)
            assert len(_kinds(g, MODE)) == len(c.modes)
            for node in _kinds(g, SKILL):  # every skill hangs under its mode
                assert ancestors(g, node)[-1] == f"mode:{g.nodes[node]['mode']}"
