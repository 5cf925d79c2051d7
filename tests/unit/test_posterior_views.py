"""Posteriors read models and figures, and the node panel read models."""

import json

import numpy as np
import pytest

from skillorchestra_core.graph.panel import AgentPanel, ModePanel, SkillPanel, node_panel, rank_agents
from skillorchestra_core.graph.posterior_figures import density_figure, heatmap_figure
from skillorchestra_core.graph.posterior_vega import forest_data, forest_spec
from skillorchestra_core.graph.posterior_views import (
    EMPIRICAL,
    MEAN,
    default_agents,
    default_skills,
    density_curves,
    evidence_page,
    evidence_rows,
    forest_rows,
    heatmap_frames,
    skill_names,
    unseen_summary,
)
from skillorchestra_core.graph.service import load_version_data, with_level
from skillorchestra_core.graph.synthetic import SyntheticSpec, build_synthetic_handbook
from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.handbook.store import commit_version, get_handbook, latest_content
from skillorchestra_core.learning.competence import PriorConfig

UNSEEN = "answer.unseen"


@pytest.fixture
def data(db_session):
    build_synthetic_handbook(db_session, SyntheticSpec(name="p", n_skills=7, n_agents=3, queries_per_leaf=5, seed=7))
    hb = get_handbook(db_session, "p")
    parent, content = latest_content(db_session, hb.id)
    content.skills[UNSEEN] = SkillSpec(UNSEEN, "answer", name="<i>Never seen</i>", description="no evidence")
    commit_version(db_session, hb, content, author="t", message="add an unseen skill", parent=parent)
    db_session.commit()
    return load_version_data(db_session, "p", None)


def test_forest_rows_mean_and_empirical(data):
    agents, skills = ["agent-00", "agent-02"], ["answer.cat00", UNSEEN]
    rows = forest_rows(data, agents, skills, MEAN)
    assert list(rows["skill"]) == ["answer.cat00", "answer.cat00", UNSEEN, UNSEEN]
    assert (rows["lo"] <= rows["x"]).all() and (rows["x"] <= rows["hi"]).all()
    unseen = rows[rows["skill"] == UNSEEN]
    assert unseen["unseen"].all() and (unseen["x"] > 0.2).all()  # the pooled ability, not 0
    ref = forest_rows(data, agents, skills, EMPIRICAL)
    assert (ref.loc[ref["skill"] == UNSEEN, "x"] == 0).all()  # the reference code's reading
    seen = ref[ref["skill"] == "answer.cat00"]
    assert np.allclose(seen["x"], seen["empirical_rate"])


def test_prior_toggle(data):
    flat = with_level(data, 0.95, PriorConfig("flat"))
    mean = flat.competence.loc[flat.competence["skill"] == UNSEEN, "mean"]
    assert np.allclose(mean, 0.5)
    u = unseen_summary(data)
    assert u.cells == 3 and u.total == 8 * 3
    assert u.mean_posterior == pytest.approx(data.competence.loc[data.competence["skill"] == UNSEEN, "mean"].mean())


def test_credible_level_widens_intervals(data):
    widths = []
    for level in (0.5, 0.8, 0.9, 0.95, 0.99):
        c = with_level(data, level).competence
        widths.append(float((c["ci_high"] - c["ci_low"]).mean()))
    assert widths == sorted(widths)
    assert with_level(data, 0.95) is data


def test_density_curves_integrate_to_one(data):
    curves = density_curves(data, "answer.cat01", ["agent-00", "agent-01"])
    assert set(curves["agent"]) == {"agent-00", "agent-01"}
    for _, c in curves.groupby("agent"):
        assert np.trapezoid(c["pdf"], c["x"]) == pytest.approx(1.0, abs=0.02)
    summary = data.competence[data.competence["skill"] == "answer.cat01"]
    fig = density_figure(curves, summary, "Category 01", 0.95)
    assert len(fig.data) == 2 and fig.data[0].fill == "tozeroy"


def test_heatmap_frames_and_figure(data):
    agents = ["agent-02", "agent-00"]
    skills = ["answer.cat00", "answer.cat01", UNSEEN]
    z, n = heatmap_frames(data, agents, skills)
    assert list(z.index) == agents and list(z.columns) == skills
    assert n.loc["agent-00", UNSEEN] == 0 and n.loc["agent-00", "answer.cat00"] > 0
    spec = json.loads(heatmap_figure(z, n, skill_names(data)).to_json())
    ticks = spec["layout"]["xaxis"]["ticktext"]
    assert "&lt;i&gt;Never seen&lt;/i&gt;" in ticks and not any("<i>" in t for t in ticks)
    assert spec["data"][0]["customdata"][0][0][0] == pytest.approx(n.iloc[0, 0])


def test_forest_spec_has_one_colour_per_agent_and_names_as_plain_text(data):
    agents = default_agents(data, 3)
    skills = default_skills(data, agents, 5) + [UNSEEN]
    rows = forest_rows(data, agents, skills)
    spec, table = forest_spec(rows, agents, 0.9), forest_data(rows)
    assert spec["encoding"]["color"]["scale"]["domain"] == agents
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rule", "point"]  # interval, then the mean
    assert "90% credible interval" in spec["layer"][1]["encoding"]["x"]["title"]
    assert spec["encoding"]["y"]["sort"] == list(dict.fromkeys(table["label"]))  # skills in the chosen order
    assert "<i>Never seen</i>" in set(table["label"])  # Vega draws text: nothing to escape, nothing rendered
    assert (table["lo"] <= table["x"]).all() and (table["x"] <= table["hi"]).all()
    unseen = table[table["skill"] == UNSEEN]
    assert set(unseen["marker"]) == {"no evidence"} and set(unseen["empirical"]) == {"unseen"}
    ref = forest_spec(forest_rows(data, agents, skills, EMPIRICAL), agents, 0.9, EMPIRICAL)
    assert [layer["mark"]["type"] for layer in ref["layer"]] == ["point"]
    assert ref["layer"][0]["encoding"]["shape"]["scale"]["range"] == ["circle", "cross"]
    json.dumps(spec)  # plain JSON for st.vega_lite_chart


def test_forest_labels_stay_apart_when_two_skills_share_a_name(data):
    rows = forest_rows(data, default_agents(data, 2), default_skills(data, default_agents(data, 2), 2))
    rows["name"] = "Same name"
    labels = set(forest_data(rows)["label"])
    assert len(labels) == rows["skill"].nunique() and all("Same name (" in label for label in labels)


def test_evidence_rows_add_up_to_the_posterior_counts(db_session, data):
    comp = data.competence.set_index(["agent", "skill"])
    for skill in ("answer.cat00", "answer.cat00.s0000"):
        rows = evidence_rows(db_session, data, "agent-01", skill)
        assert rows["S"].sum() == pytest.approx(comp.loc[("agent-01", skill), "S"])
        assert rows["F"].sum() == pytest.approx(comp.loc[("agent-01", skill), "F"])
    assert evidence_rows(db_session, data, "agent-01", UNSEEN).empty


def test_evidence_page_pages_and_texts(db_session, data):
    first = evidence_page(db_session, data, "agent-00", "answer.cat00", page=1, page_size=4)
    assert first.total == len(evidence_rows(db_session, data, "agent-00", "answer.cat00"))
    assert first.pages == -(-first.total // 4) and len(first.rows) == 4
    assert first.rows["text"].str.startswith("Synthetic question").all()
    last = evidence_page(db_session, data, "agent-00", "answer.cat00", page=999, page_size=4)
    assert last.page == first.pages and 1 <= len(last.rows) <= 4
    none = evidence_page(db_session, data, "agent-00", UNSEEN)
    assert none.total == 0 and none.rows.empty


def test_node_panels(data):
    skill = node_panel(data, "skill:answer.cat00")
    assert isinstance(skill, SkillPanel)
    assert list(skill.agents["mean"]) == sorted(skill.agents["mean"], reverse=True)
    assert list(skill.agents["rank"]) == [1, 2, 3]
    assert skill.children and all(c.startswith("answer.cat00.") for c in skill.children)
    agent = node_panel(data, "agent:agent-01")
    assert isinstance(agent, AgentPanel)
    assert list(agent.costs["mode"]) == ["answer"] and agent.costs["cost per call (USD)"].iloc[0] > 0
    assert agent.price_card["input_price_per_m"].iloc[0] > 0
    assert list(agent.skills["mean"]) == sorted(agent.skills["mean"], reverse=True)
    assert isinstance(node_panel(data, "mode:answer"), ModePanel)
    assert node_panel(data, "skill:nope") is None and node_panel(data, None) is None
    ranked = rank_agents(data.competence, UNSEEN)
    assert (ranked["n"] == 0).all()
