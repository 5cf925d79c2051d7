"""Proposals with the fake LLM (valid, malformed then re-asked, failing) and the offline proposer."""

import pytest

from skillorchestra_core.db import session
from skillorchestra_core.llm import FakeLlm
from skillorchestra_core.refinement.proposing import propose
from skillorchestra_core.refinement.run import detect_and_store
from skillorchestra_core.refinement.store import list_candidates

SPLIT = ["answer.math.word_problems"]
MERGE = ["answer.entities.capitals", "answer.entities.currencies"]


@pytest.fixture
def demo(demo_db_url):
    with session(demo_db_url) as s:
        detect_and_store(s, "demo-qa")
        views = {tuple(c.skills): c for c in list_candidates(s, "demo-qa")}
        yield s, views[tuple(SPLIT)], views[tuple(MERGE)]


def _split_reply(first_key="answer.math.word_problems.percentages", group1="group 1"):
    return {"rationale": "two kinds of problems",
            "children": [{"key": first_key, "name": "Percentages", "description": "Percent and interest.",
                          "indicators": ["percent"], "group": group1},
                         {"key": "answer.math.word_problems.geometry", "name": "Geometry",
                          "description": "Areas and volumes.", "indicators": ["area"], "group": "group 2"}],
            "moves": {}}


def _current(s, cid):
    return [c for c in list_candidates(s, "demo-qa") if c.id == cid][0]


def test_llm_merge_proposal_is_stored(demo):
    s, _, merge = demo
    llm = FakeLlm([{"rationale": "same profile", "merged": {"key": "answer.entities.country_facts",
                                                            "name": "Country facts", "indicators": ["capital"]}}])
    assert propose(s, merge.id, llm) == ("ok", "")
    after = _current(s, merge.id)
    assert after.proposal.source == "llm:fake/model" and after.proposal.skills[0].key == "answer.entities.country_facts"
    assert after.row_version == merge.row_version + 1  # a reviewer who saw the old row must reload
    assert "answer.entities.capitals" in llm.prompts[0] and "Successes/attempts" in llm.prompts[0]


def test_malformed_split_reply_is_re_asked_and_every_evidence_query_is_assigned(demo):
    s, split, _ = demo
    llm = FakeLlm(["Sure! Here are the children: percentages and geometry.", _split_reply()])
    assert propose(s, split.id, llm) == ("ok", "")
    assert "did not validate" in llm.prompts[1]
    p = _current(s, split.id).proposal
    evidence = {q for g in split.record.groups for q in g.query_ids}
    assert set(p.assignment) == evidence and set(p.assignment.values()) == {k.key for k in p.skills}


def test_invalid_twice_is_stored_as_failed_with_the_error_then_retried(demo):
    s, split, _ = demo
    bad = _split_reply(first_key="answer.math.arithmetic")  # an existing skill: not applicable
    llm = FakeLlm([bad, _split_reply(group1="group 9")])
    status, error = propose(s, split.id, llm)
    assert status == "failed" and "invalid output after 2 attempts" in error
    assert "no child stands for 'group 1'" in error
    assert "already exists" in llm.calls.records[0].error and llm.calls.records[0].outcome == "invalid"
    from sqlmodel import select

    from skillorchestra_core.db.models import LlmCall

    logged = s.exec(select(LlmCall).where(LlmCall.purpose == "refinement.proposal")).all()
    assert [c.outcome for c in logged] == ["invalid", "invalid"]
    failed = _current(s, split.id)
    assert failed.proposal is None and failed.proposal_status == "failed" and "group 1" in failed.proposal_error
    assert propose(s, split.id, FakeLlm([_split_reply()])) == ("ok", "")  # retry
    assert _current(s, split.id).proposal_error == ""


def test_call_failure_is_stored_and_offline_proposer_names_children_from_terms(demo):
    s, split, merge = demo
    status, error = propose(s, merge.id, FakeLlm([RuntimeError("provider down")]))
    assert status == "failed" and "provider down" in error
    assert propose(s, split.id, None) == ("ok", "")
    p = _current(s, split.id).proposal
    assert p.source == "offline proposal"
    keys = sorted(k.key for k in p.skills)
    assert all(k.startswith("answer.math.word_problems.") for k in keys)
    assert any("percent" in k or "interest" in k for k in keys) and any("metres" in k or "volume" in k for k in keys)


def test_proposal_through_the_real_litellm_path_against_a_loopback_server(demo):
    from support.fake_openai import FakeOpenAI

    from skillorchestra_core.llm import LiteLlmClient

    s, _, merge = demo
    with FakeOpenAI() as server:
        server.queue("```json\n{\"merged\": {\"key\": \"bad key!\", \"name\": \"x\"}}\n```",  # invalid key: re-asked
                     {"rationale": "one profile", "merged": {"key": "answer.entities.country_facts",
                                                             "name": "Country facts"}})
        client = LiteLlmClient("openai/local-model", api_base=server.base_url, api_key="sk-test", retries=0,
                               timeout_s=10)
        assert propose(s, merge.id, client) == ("ok", "")
        assert "not a dotted identifier" in server.requests[1]["messages"][-1]["content"]
    p = _current(s, merge.id).proposal
    assert p.source == "llm:openai/local-model" and p.skills[0].name == "Country facts"
