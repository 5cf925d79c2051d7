"""Canonical SkillOrchestra handbook JSON: import, validation, export and round trips."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Handbook, HandbookVersion
from skillorchestra_core.formats.canonical import import_handbook
from skillorchestra_core.formats.export import export_document, write_json
from skillorchestra_core.formats.outcomes import import_outcomes
from skillorchestra_core.formats.rows import MalformedFile
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.competence import PriorConfig

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
REFERENCE = FIX / "handbook_reference.json"
FRAMES = FIX / "handbook_frames.json"


@pytest.fixture
def db_url(any_db_url):
    """Every test here that imports into a database does so on SQLite and on PostgreSQL."""
    return any_db_url


def imp(url, path, name):
    with session(url) as s:
        result = import_handbook(s, path, name)
        s.commit()
    return result


def export(url, name, fmt="skillorchestra", number=None):
    with session(url) as s:
        return export_document(s, name, fmt, number)[0]


def state(url, name, prior=None):
    """What must survive a round trip: content, competence numbers and C(A, mode)."""
    with session(url) as s:
        v = load_version(s, name)
        frames = profile.load_frames(s, v)
        comp = profile.competence(frames, prior=prior)
        costs = profile.costs(frames)
    c = v.content
    agents = {k: (a.model, a.tools, a.input_price_per_m, a.output_price_per_m) for k, a in c.agents.items()}
    comp = comp[["agent", "mode", "skill", "alpha", "beta", "mean", "ci_low", "ci_high"]]
    return c.modes, c.skills, agents, comp.reset_index(drop=True), costs[["agent", "mode", "cost"]]


def assert_same(a, b):
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
    pd.testing.assert_frame_equal(a[3], b[3], check_exact=False, rtol=1e-9, atol=1e-9)
    pd.testing.assert_frame_equal(a[4].sort_values(["agent", "mode"]).reset_index(drop=True),
                                  b[4].sort_values(["agent", "mode"]).reset_index(drop=True),
                                  check_exact=False, rtol=1e-9, atol=1e-12)


def test_reference_example_imports(db_url):
    result = imp(db_url, REFERENCE, "ref")
    assert (result.version, result.modes, result.skills, result.agents, result.imported_counts) == (1, 1, 1, 1, 1)
    with session(db_url) as s:
        v = load_version(s, "ref")
        comp = profile.competence(profile.load_frames(s, v), prior=PriorConfig("flat"))
    c = v.content
    assert c.modes["code"].insights[0]["insight_type"] == "transition"
    skill = c.skills["code.data_processing.symbolic_logic"]
    assert skill.provenance == {"discovered_from_queries": ["wiki____25"]}  # empty reference defaults dropped
    agent = c.agents[("reasoner-3", "code")]
    assert agent.model == "Qwen/Qwen2.5-Coder-32B-Instruct" and agent.profile["cost_stats"]["avg_cost_usd"] == 0.0021
    assert (agent.profile["total_attempts"], agent.profile["total_successes"]) == (4, 3)
    counts = c.imported[("reasoner-3", "code", "code.data_processing.symbolic_logic")]
    assert (counts.alpha, counts.beta) == (4, 2)
    row = comp.iloc[0]
    assert (row.alpha, row.beta, row.basis) == (4.0, 2.0, "imported")  # flat prior + 3 successes, 1 failure


def test_reference_example_exports_back_to_itself(db_url):
    imp(db_url, REFERENCE, "ref")
    doc = export(db_url, "ref")
    original = json.loads(REFERENCE.read_text())
    for key in ("modes", "skills", "agent_profiles", "mode_skill_index"):
        assert doc[key] == original[key], key
    assert list(doc) == ["metadata", "modes", "skills", "agent_profiles", "mode_skill_index"]
    assert {k: doc["metadata"][k] for k in ("version", "num_modes", "num_skills", "num_agents")} == {
        "version": "v1", "num_modes": 1, "num_skills": 1, "num_agents": 1}


def test_reimport_same_file_is_unchanged(db_url):
    imp(db_url, FRAMES, "f")
    again = imp(db_url, FRAMES, "f")
    assert again.created_version is False and again.version == 1


def test_round_trip_of_imported_handbook_with_hierarchy_and_three_modes(db_url, tmp_path):
    imp(db_url, FRAMES, "f")
    path = tmp_path / "f.json"
    write_json(export(db_url, "f"), path)
    imp(db_url, path, "f2")
    assert_same(state(db_url, "f"), state(db_url, "f2"))
    second = export(db_url, "f2")
    first = export(db_url, "f")
    for key in ("modes", "skills", "agent_profiles", "mode_skill_index"):
        assert first[key] == second[key], key


@pytest.mark.parametrize("prior", [None, PriorConfig("flat")])
def test_round_trip_of_a_version_with_real_evidence(db_url, tmp_path, prior):
    with session(db_url) as s:
        import_outcomes(s, FIX / "outcomes_good.csv", "ev", skills_from_task=True)
        s.commit()
    doc = export(db_url, "ev")
    alpha = doc["agent_profiles"]["alpha"]
    # learned from train only: alpha answered q1 (1) in arithmetic and q3 (0.5, hash split train) in geography;
    # q2 (val) and q4 (test) are held out
    assert alpha["skill_competence"]["answer.geography"] == {"alpha": 1.5, "beta": 1.5}
    assert alpha["skill_scores"]["answer.geography"] == 0.5 and alpha["skill_attempts"]["answer.arithmetic"] == 1
    assert (alpha["total_attempts"], alpha["total_successes"]) == (2, 1.5)
    path = tmp_path / "ev.json"
    write_json(doc, path)
    imp(db_url, path, "ev2")
    assert_same(state(db_url, "ev", prior), state(db_url, "ev2", prior))


def test_import_over_evidence_keeps_matching_attributions(db_url, tmp_path):
    with session(db_url) as s:
        import_outcomes(s, FIX / "outcomes_good.csv", "ev", skills_from_task=True)
        s.commit()
    doc = export(db_url, "ev")
    del doc["skills"]["answer.geography"]
    doc["mode_skill_index"]["answer"].remove("answer.geography")
    for agent in doc["agent_profiles"].values():
        agent["skill_competence"].pop("answer.geography")
    path = tmp_path / "less.json"
    path.write_text(json.dumps(doc))
    result = imp(db_url, path, "ev")
    assert result.version == 2 and result.dropped_attributions == 2  # q2 and q3 were geography
    with session(db_url) as s:
        c = load_version(s, "ev").content
    assert {k for (_, _, k) in c.attributions} == {"answer.arithmetic"}
    assert c.evidence_batches  # the evidence stays


def test_agent_name_in_two_modes_is_keyed_name_at_mode(db_url, tmp_path):
    doc = json.loads(FRAMES.read_text())
    twin = copy.deepcopy(doc["agent_profiles"]["answer-1"])
    twin.update(agent_id="search-1", skill_competence={})
    doc["agent_profiles"]["search-1@answer"] = twin
    path = tmp_path / "twin.json"
    path.write_text(json.dumps(doc))
    imp(db_url, path, "t")
    out = export(db_url, "t")
    assert {"search-1@answer", "search-1@search"} <= set(out["agent_profiles"])
    assert out["agent_profiles"]["search-1@answer"]["agent_id"] == "search-1"
    write_json(out, tmp_path / "t2.json")
    imp(db_url, tmp_path / "t2.json", "t2")
    assert_same(state(db_url, "t"), state(db_url, "t2"))


def _broken(doc, how):
    doc = copy.deepcopy(doc)
    if how == "skill_mode":
        doc["skills"]["answer.synthesis"]["mode"] = "writing"
    elif how == "parent":
        doc["skills"]["search.factual.date_lookup_ancient"]["parent_skill_id"] = "search.factual.nope"
    elif how == "index_missing":
        doc["mode_skill_index"]["search"].remove("search.factual.date_lookup")
    elif how == "index_unknown":
        doc["mode_skill_index"]["code"].append("code.ghost")
    elif how == "index_mode":
        doc["mode_skill_index"]["planning"] = []
    elif how == "agent_mode":
        doc["agent_profiles"]["answer-1"]["mode"] = "review"
    elif how == "competence":
        doc["agent_profiles"]["answer-1"]["skill_competence"]["answer.ghost"] = {"alpha": 2, "beta": 1}
    elif how == "key":
        doc["skills"]["answer.synthesis"]["skill_id"] = "answer.other"
    return doc


# Refused by the reader, before any database work: one engine is enough (as for the malformed files below).
@pytest.mark.parametrize(("how", "message"), [
    ("skill_mode", "skill 'answer.synthesis' is in mode 'writing', which is not in modes"),
    ("parent", "has parent 'search.factual.nope', which is not a skill"),
    ("index_missing", "skill 'search.factual.date_lookup' is missing from mode_skill_index"),
    ("index_unknown", "mode_skill_index['code'] lists 'code.ghost', which is not a skill"),
    ("index_mode", "mode_skill_index names mode 'planning', which is not in modes"),
    ("agent_mode", "agent 'answer-1' is in mode 'review', which is not in modes"),
    ("competence", "agent 'answer-1' has competence on 'answer.ghost', which is not a skill"),
    ("key", "skills['answer.synthesis'] has skill_id 'answer.other'"),
])
def test_inconsistent_handbooks_are_refused(sqlite_db_url, tmp_path, how, message):
    path = tmp_path / f"{how}.json"
    path.write_text(json.dumps(_broken(json.loads(FRAMES.read_text()), how)))
    with pytest.raises(MalformedFile) as err:
        imp(sqlite_db_url, path, "bad")
    assert message in str(err.value) and str(path) in str(err.value)
    with session(sqlite_db_url) as s:
        assert s.exec(select(func.count()).select_from(Handbook)).one() == 0
        assert s.exec(select(func.count()).select_from(HandbookVersion)).one() == 0


def test_every_problem_is_listed(db_url, tmp_path):
    doc = _broken(_broken(json.loads(FRAMES.read_text()), "parent"), "agent_mode")
    path = tmp_path / "two.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(MalformedFile) as err:
        imp(db_url, path, "bad")
    assert "search.factual.nope" in str(err.value) and "'review'" in str(err.value)


@pytest.mark.parametrize(("text", "message"), [
    ('{"modes": {}, \n "skills": [1, }', ":2: invalid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"agent_profiles": {"a": {"agent_id": "a", "mode": "m", "skill_competence": {"s": {"alpha": -1}}}}}',
     "agent_profiles.a.skill_competence.s.alpha"),
    ('{"skills": {"s": {"name": "no id or mode"}}}', "skills.s.skill_id: Field required"),
])
def test_malformed_handbook_files(sqlite_db_url, tmp_path, text, message):
    path = tmp_path / "h.json"
    path.write_text(text)
    with pytest.raises(MalformedFile) as err:
        imp(sqlite_db_url, path, "bad")
    assert message in str(err.value) and str(path) in str(err.value)


def test_round_trip_under_the_flat_prior_with_unlabelled_queries(db_url, tmp_path):
    path = tmp_path / "partly.csv"
    path.write_text("query_id,query,agent,score,task\n"
                    "a,first,x,1,t\na,first,y,0,t\nb,second,x,0,\nb,second,y,1,\nc,third,x,1,u\nc,third,y,1,u\n")
    with session(db_url) as s:
        import_outcomes(s, path, "p", skills_from_task=True)
        s.commit()
    write_json(export(db_url, "p"), tmp_path / "p.json")
    imp(db_url, tmp_path / "p.json", "p2")
    flat = PriorConfig("flat")
    assert_same(state(db_url, "p", flat), state(db_url, "p2", flat))
