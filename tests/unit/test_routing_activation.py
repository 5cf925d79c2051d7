"""Skill activation: the offline retriever, and the LLM path with the fake client (validation, re-ask, fallback)."""

import pytest
from support.handbooks import routing_models

from skillorchestra_core.llm import FakeLlm, LlmError, OfflineLlm
from skillorchestra_core.routing.activation import activate, retriever
from skillorchestra_core.routing.engine import RouteOptions, route
from skillorchestra_core.routing.retriever import TfidfIndex, tokenize

HISTORY_Q = "Which emperor ruled Rome in the year 200?"


@pytest.fixture
def models(db_url):
    return routing_models(db_url)


def test_tfidf_index_ranks_the_matching_document_first():
    index = TfidfIndex(["the cat sat on the mat", "python code reverses a list", "rome had emperors"])
    sims = index.similarities("reverse this python list")
    assert sims.argmax() == 1 and sims[1] > 0 and sims[0] == 0
    assert index.similarities("zzz unknown words").tolist() == [0.0, 0.0, 0.0]
    assert tokenize("The Year 1999, a CAT!") == ["year", "1999", "cat"]


def test_offline_activation_finds_the_skill_with_weights_and_similarities(models):
    qa, _ = models
    act = activate(qa, "answer", HISTORY_Q)
    assert act.source == "offline:classifier" and not act.note
    assert act.skills[0].skill == "answer.history"
    assert sum(a.weight for a in act.skills) == pytest.approx(1.0)
    assert all(0 < a.probability <= 1 and a.source == "classifier" and a.similarity is None for a in act.skills)
    assert act.skills[0].probability > 0.5
    code = activate(qa, "answer", "Write a python function that sorts a list")
    assert code.skills[0].skill == "answer.coding"


def test_an_unrelated_query_activates_nothing_and_routing_says_so(models):
    qa, _ = models
    act = activate(qa, "answer", "zzyzx qqq")
    assert act.skills == [] and "no skill" in act.note
    step = route(qa, "zzyzx qqq").steps[0]
    assert step.cause == "fallback_no_skills" and step.active_skills == []
    assert step.candidate(step.chosen).contributions == []


def test_the_retriever_only_learns_from_train_queries(models):
    qa, _ = models
    r = retriever(qa, "answer")
    texts = [t for t, m, _ in qa.skill_queries]
    assert len(texts) == 24  # 3 tasks x 8 train queries; the 6 val queries are left out
    assert r.leaves == ["answer.arithmetic", "answer.coding", "answer.history"]


def test_llm_activation_is_used_when_valid(models):
    qa, _ = models
    llm = FakeLlm([{"required_skills": [{"skill_id": "answer.history", "weight": 70},
                                        {"skill_id": "Arithmetic", "weight": 30}], "reasoning": "dates"}])
    act = activate(qa, "answer", HISTORY_Q, llm=llm)
    assert act.source == "llm:fake/model" and act.note == "dates"
    assert [(a.skill, a.weight) for a in act.skills] == [("answer.history", 0.7), ("answer.arithmetic", 0.3)]
    prompt = llm.prompts[0]
    assert "answer.history" in prompt and HISTORY_Q in prompt and "required_skills" in prompt
    assert [r.outcome for r in llm.calls.records] == ["ok"]
    assert llm.calls.records[0].purpose == "routing.activation"


def test_malformed_llm_output_is_reasked_once_then_falls_back_with_the_reason(models):
    qa, _ = models
    llm = FakeLlm(["not json at all", '{"required_skills": "history"}'])
    act = activate(qa, "answer", HISTORY_Q, llm=llm)
    assert act.source == "offline:classifier" and act.skills[0].skill == "answer.history"
    assert "fell back to the offline activation" in act.note and "invalid output after 2 attempts" in act.note
    assert len(llm.requests) == 2 and "did not validate" in llm.prompts[1]
    assert [r.outcome for r in llm.calls.records] == ["invalid", "invalid"]


def test_an_unknown_skill_id_is_a_validation_failure_and_the_reask_can_fix_it(models):
    qa, _ = models
    llm = FakeLlm([{"required_skills": [{"skill_id": "answer.poetry", "weight": 1}]},
                   {"required_skills": [{"skill_id": "answer.coding", "weight": 1}]}])
    act = activate(qa, "answer", HISTORY_Q, llm=llm)
    assert [a.skill for a in act.skills] == ["answer.coding"] and act.source.startswith("llm:")
    assert "answer.poetry" in llm.calls.records[0].error


def test_a_failed_call_falls_back_and_offline_method_never_asks(models):
    qa, _ = models
    llm = FakeLlm([LlmError("connection refused")])
    act = activate(qa, "answer", HISTORY_Q, llm=llm)
    assert "call failed" in act.note and act.source == "offline:classifier"
    quiet = FakeLlm([])
    assert activate(qa, "answer", HISTORY_Q, llm=quiet, method="offline").source == "offline:classifier"
    assert quiet.requests == []
    assert activate(qa, "answer", HISTORY_Q, llm=OfflineLlm()).source == "offline:classifier"
    asked = activate(qa, "answer", HISTORY_Q, llm=OfflineLlm(), method="llm")
    assert "no LLM configured" in asked.note


def test_the_fallback_reason_reaches_the_trace(models):
    qa, _ = models
    trace = route(qa, HISTORY_Q, RouteOptions(), llm=FakeLlm(["{}", "{}"]))
    assert "fell back" in trace.steps[0].activation_note
    assert trace.steps[0].activation_source == "offline:classifier"
