"""Learning through the real litellm code path, against the loopback OpenAI-compatible fake server."""

import json

from support.fake_openai import FakeOpenAI
from support.learning import NAME, build_contrast

from skillorchestra_core.db import session
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning.pipeline import LearnOptions
from skillorchestra_core.learning.run import run_learning
from skillorchestra_core.llm import LiteLlmClient

TAXONOMY = {"categories": [
    {"name": "Arithmetic", "description": "Numbers", "skills": [
        {"skill_id": "arithmetic.sums", "name": "Sums and products", "description": "Combine numbers",
         "indicators": ["sum", "product"]}]},
    {"name": "Geography", "description": "Places", "skills": [
        {"skill_id": "geography.capitals", "name": "Capitals", "description": "Capital cities and rivers",
         "indicators": ["capital", "river"]}]}]}


def test_learn_with_a_litellm_model_discovers_attributes_and_commits(db_url):
    with session(db_url) as s:
        build_contrast(s)
        s.commit()
    with FakeOpenAI() as server:
        attributions = {"attributions": [{"query": f"Q{i}", "skills": [{"skill_id": "answer.geography.capitals",
                                                                        "weight": 1}]} for i in range(1, 4)]}
        insights = {"insights": [{"content": "Send capital questions to geo.", "confidence": 0.7}]}
        server.queue("not json at all", json.dumps(TAXONOMY), json.dumps(attributions), json.dumps(insights))
        client = LiteLlmClient("openai/local-model", api_base=server.base_url, api_key="sk-test", retries=0,
                               timeout_s=10)
        report = run_learning(db_url, NAME, LearnOptions(llm="openai/local-model", max_queries=3), client=client)
        asked = [r["messages"] for r in server.requests]
    assert len(asked) == 4 and "did not validate" in asked[1][-1]["content"]
    assert "succeeded:" in asked[0][1]["content"]
    assert report.method == "llm:openai/local-model" and report.created
    keys = {k["key"]: k["provenance"] for k in report.skills_added["answer"]}
    assert keys["answer.geography.capitals"]["source"] == "llm" and keys["answer.geography.capitals"]["model"]
    assert report.attributed == {"llm:openai/local-model": 3, "offline:tfidf-centroid": 67}
    with session(db_url) as s:
        content = load_version(s, NAME).content
        from sqlmodel import select

        from skillorchestra_core.db.models import LlmCall
        calls = s.exec(select(LlmCall.purpose, LlmCall.outcome)).all()
    assert content.modes["answer"].insights[-1]["content"] == "Send capital questions to geo."
    assert ("learning.discovery", "invalid") in calls and ("learning.attribution", "ok") in calls
    by = {b for (_q, _m, _k), (_w, b) in content.attributions.items()}
    assert "offline:tfidf-centroid" in by and any(b.startswith("llm:") for b in by)
