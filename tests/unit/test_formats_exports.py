"""RSL, stage-router and JSON dump exports, checked against reference doc 1.9 (a) and (b)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillorchestra_core.db import session
from skillorchestra_core.errors import NotFound, StudioError
from skillorchestra_core.formats.canonical import import_handbook
from skillorchestra_core.formats.export import export_document
from skillorchestra_core.formats.outcomes import import_outcomes

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "formats"


@pytest.fixture
def db_url(any_db_url):
    """Every test here that imports into a database does so on SQLite and on PostgreSQL."""
    return any_db_url


@pytest.fixture
def frames_url(db_url):
    with session(db_url) as s:
        import_handbook(s, FIX / "handbook_frames.json", "f")
        import_outcomes(s, FIX / "outcomes_good.csv", "ev", skills_from_task=True)
        s.commit()
    return db_url


def doc(url, name, fmt, number=None):
    with session(url) as s:
        return export_document(s, name, fmt, number)[0]


def test_rsl_structure(frames_url):
    d = doc(frames_url, "f", "rsl")
    assert list(d) == ["version", "total_experiences", "created_at", "updated_at", "skill_catalog",
                       "model_profiles", "routing_insights"]
    assert d["version"] == 0 and d["skill_catalog"]["version"] == 1
    assert d["total_experiences"] == 12 + 8 + 7 + 10  # sum of imported total_executions
    cats = d["skill_catalog"]["categories"]
    assert sorted(cats) == ["answer", "code", "search"]  # first id segment
    assert cats["search"]["description"] == "Skills related to search"
    assert cats["code"]["description"] == "Date math skill"  # a one-skill category takes its skill's description
    entity = next(k for k in cats["search"]["skills"] if k["id"] == "search.factual.entity_lookup")
    assert set(entity) == {"id", "name", "description", "category", "indicators", "examples"}
    assert entity["category"] == "search" and len(entity["examples"]) == 5  # capped from 7

    p = d["model_profiles"]["search-1"]
    assert set(p) == {"model_name", "skill_scores", "skill_attempts", "skill_successes", "strengths", "weaknesses",
                      "routing_rules", "total_attempts", "total_successes", "total_executions",
                      "total_completion_tokens", "total_prompt_tokens", "total_cost_usd",
                      "total_completion_cost_usd", "updated_at", "recent_success_summaries",
                      "recent_failure_summaries"}
    assert p["model_name"] == "gpt-5"
    assert len(p["skill_scores"]) == 5  # every handbook skill
    assert p["skill_scores"]["answer.synthesis"] == 0.0  # unseen -> 0.0, the reference's convention
    assert p["skill_scores"]["search.factual.entity_lookup"] == round(8 / 9, 4)  # Beta(9, 2): 8 of 9
    entity_id = "search.factual.entity_lookup"
    assert (p["skill_attempts"][entity_id], p["skill_successes"][entity_id]) == (9, 8)
    assert len(p["strengths"]) == 5 and len(p["routing_rules"]) == 5 and p["weaknesses"] == ["slow"]
    assert p["total_executions"] == 12 and p["total_cost_usd"] == pytest.approx(0.02 * 12)
    assert p["total_prompt_tokens"] == pytest.approx(900.0 * 12)

    ins = d["routing_insights"]
    assert [i["insight_id"] for i in ins] == [f"ins_{n}" for n in range(1, len(ins) + 1)]
    assert len(ins) == 4 + 6 + 1  # 4 mode insights first, then every agent routing signal
    assert ins[0]["applies_to_models"] == [] and ins[0]["supporting_evidence"] == 1
    signal = next(i for i in ins if i["content"] == "prefer for long answers")
    assert signal["applies_to_models"] == ["answer-1"] and signal["confidence"] == 0.5


def test_stage_router_structure(frames_url):
    d = doc(frames_url, "f", "stage-router")
    assert list(d) == ["version", "created_at", "updated_at", "skills", "model_profiles", "usage_patterns",
                       "routing_insights", "learning_history"]
    assert sorted(d["skills"]) == ["answer", "code", "search"] and d["learning_history"] == []
    entry = d["skills"]["search"]["search.factual.entity_lookup"]
    assert set(entry) == {"skill_id", "name", "description", "stage", "examples", "discovered_from_problems"}
    assert entry["stage"] == "search" and len(entry["examples"]) == 5
    assert entry["discovered_from_problems"] == [{"problem_id": "wiki____1", "problem": "", "answer": ""},
                                                 {"problem_id": "wiki____2", "problem": "", "answer": ""}]
    p = d["model_profiles"]["search-1"]
    assert set(p) == {"model_alias", "actual_model", "stage", "skill_scores", "skill_attempts", "skill_successes",
                      "overall_success_rate", "total_attempts", "total_successes", "avg_prompt_tokens",
                      "avg_completion_tokens", "avg_cost_usd", "strengths", "weaknesses"}
    assert (p["model_alias"], p["actual_model"], p["stage"]) == ("search-1", "gpt-5", "search")
    assert sorted(p["skill_scores"]) == sorted(d["skills"]["search"])  # the skills of its stage
    assert len(p["strengths"]) == 3 and p["overall_success_rate"] == 0.75  # 9 of 12
    assert p["avg_cost_usd"] == pytest.approx(0.02)
    g = d["usage_patterns"]["guidelines"]
    assert g["search"] == {"use_when": ["Use for named entities"], "skip_when": ["Skip when the answer is in context"],
                           "learned_insights": ["Search before computing"]}
    assert g["code"]["learned_insights"] == ["reasoner-3 is enough for date math"]
    assert g["answer"]["use_when"] == ["Write the final answer"]  # no usage insight: the mode description
    assert d["routing_insights"] == ["reasoner-3 is enough for date math", "[ToolSelection] Search before computing",
                                     "[Usage] Use for named entities", "[Cost] Skip when the answer is in context"]


def test_exports_of_evidence_use_the_empirical_rate(frames_url):
    d = doc(frames_url, "ev", "stage-router")
    beta = d["model_profiles"]["beta"]
    # learned from train only: beta q1 0 in arithmetic, q3 0 in geography (q2 val and q4 test held out)
    assert beta["skill_scores"] == {"answer.arithmetic": 0.0, "answer.geography": 0.0}
    assert beta["total_attempts"] == 2 and beta["avg_prompt_tokens"] == pytest.approx(12)
    rsl = doc(frames_url, "ev", "rsl")
    assert rsl["total_experiences"] == 4 and rsl["skill_catalog"]["categories"]["answer"]["name"] == "answer"


def test_json_dump_has_everything_of_the_version(frames_url):
    d = doc(frames_url, "ev", "json")
    for key in ("handbook", "version", "content_hash", "parent_version", "author", "message", "source", "modes",
                "skills", "agents", "imported_counts", "competence", "mode_costs", "counts", "evidence_batches",
                "learn_splits"):
        assert key in d, key
    assert (d["handbook"], d["version"], d["parent_version"]) == ("ev", 1, None)
    assert d["counts"]["queries"] == 4 and d["counts"]["trajectories"] == 8
    assert d["counts"]["queries_by_split"]["val"] == 1
    assert {k["key"]: k["evidence_queries"] for k in d["skills"]} == {"answer.arithmetic": 2, "answer.geography": 2}
    assert len(d["competence"]) == 4 and {"mean", "ci_low", "ci_high", "S", "F", "a0"} <= set(d["competence"][0])
    f = doc(frames_url, "f", "json")
    assert len(f["imported_counts"]) == 6 and f["counts"]["trajectories"] == 0  # 7 minus one Beta(1, 1)


def test_export_errors(frames_url):
    with pytest.raises(StudioError, match="unknown export format 'xml'"):
        doc(frames_url, "f", "xml")
    with pytest.raises(NotFound, match="no version 9"):
        doc(frames_url, "f", "rsl", 9)
    with pytest.raises(NotFound, match="no handbook named 'nope'"):
        doc(frames_url, "nope", "rsl")
