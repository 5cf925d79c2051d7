"""Skill discovery and attribution: fake-LLM prompts and parsing, offline clusters, key clashes, weighted counts."""

import json
import re

import pytest
from support.learning import NAME, build_contrast

from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.learning import attribution as attr
from skillorchestra_core.learning.discovery import discover_offline, place_skills
from skillorchestra_core.learning.inputs import read_inputs
from skillorchestra_core.learning.llm_discovery import discover_llm
from skillorchestra_core.learning.pipeline import LearnOptions, learn_content
from skillorchestra_core.llm import FakeLlm

GOOD = {"categories": [
    {"name": "Arithmetic", "description": "Numbers", "skills": [
        {"skill_id": "arithmetic.multi_step", "name": "Multi-step arithmetic", "description": "Chained operations",
         "indicators": ["sum", "product"], "examples": ["add two numbers then multiply"], "confidence": 0.9}]},
    {"name": "Geography", "skills": [
        {"skill_id": "geography.capitals", "name": "Capitals and rivers", "description": "Places",
         "indicators": ["capital", "river"]}]}]}


@pytest.fixture
def inputs(db_session):
    build_contrast(db_session)
    db_session.commit()
    return read_inputs(db_session, NAME)


def _content(inputs):
    import copy
    return copy.deepcopy(inputs.loaded.content)


def test_discovery_prompt_contrasts_successes_and_failures_from_train_text_only(inputs):
    llm = FakeLlm([GOOD])
    found = discover_llm(llm, _content(inputs), inputs, "answer")
    prompt = llm.prompts[0]
    assert "succeeded:" in prompt and "failed:" in prompt and "Existing skills" in prompt
    held = inputs.heldout_texts
    shown = set(re.findall(r"^Q\d+: (.*)$", prompt, re.M))
    assert held and shown and shown <= set(inputs.texts.values()) and not shown & set(held.values())
    said = re.findall(r"^  tau([+-]) (\w+) said: reply of \2 to (\w+-\d+)$", prompt, re.M)
    assert {t for t, _a, _q in said} == {"+", "-"}
    train_refs = set(inputs.ext_ids.values())
    assert all(ref in train_refs for _t, _a, ref in said)  # no held-out output reaches the prompt
    n_mixed = int(inputs.contrast("answer")["mixed"].sum())
    assert len(re.findall(r"^Q\d+: ", prompt, re.M)) == n_mixed == found.stats["contrast_queries"]
    keys = [s.key for s in found.skills]
    assert keys == ["answer.arithmetic", "answer.arithmetic.multi_step", "answer.geography",
                    "answer.geography.capitals"]
    leaf = found.skills[1]
    assert leaf.parent_key == "answer.arithmetic" and leaf.indicators == ["sum", "product"]
    assert leaf.provenance["source"] == "llm" and leaf.provenance["model"] == "fake/model"
    assert leaf.provenance["queries"] and all(q in inputs.ext_ids.values() for q in leaf.provenance["queries"])


@pytest.mark.parametrize("bad", [
    "this is not json", "", {"categories": []},
    {"categories": [{"name": "X", "skills": [{"skill_id": "x.y", "name": "Y"}]}]},  # no description
])
def test_a_bad_discovery_reply_is_reasked_once_then_the_batch_is_skipped(inputs, bad):
    fixed = discover_llm(FakeLlm([bad, GOOD]), _content(inputs), inputs, "answer")
    assert len(fixed.skills) == 4 and not fixed.notes
    llm = FakeLlm([bad, bad])
    failed = discover_llm(llm, _content(inputs), inputs, "answer")
    assert failed.skills == [] and "discovery batch 1/1 failed" in failed.notes[0]
    assert "did not validate" in llm.prompts[1]
    assert [r.outcome for r in llm.calls.records] == ["invalid", "invalid"]


def test_discovery_batches_fit_the_budget_and_later_batches_see_earlier_skills(inputs):
    second = {"categories": [{"name": "Arithmetic", "skills": [
        {"skill_id": "arithmetic.multi_step", "name": "dup", "description": "dup"},
        {"skill_id": "arithmetic.remainders", "name": "Remainders", "description": "mod"}]}]}
    llm = FakeLlm([GOOD] + [second] * 50)
    found = discover_llm(llm, _content(inputs), inputs, "answer", budget=1500)
    assert len(llm.requests) == found.stats["batches"] > 2
    assert all(len(p) < 1500 + 3000 for p in llm.prompts)
    assert "answer.arithmetic.multi_step" in llm.prompts[1]
    keys = [s.key for s in found.skills]
    assert keys.count("answer.arithmetic.multi_step") == 1 and "answer.arithmetic.remainders" in keys


def _attribution_reply(messages):
    text = messages[1]["content"]  # the original question, also when re-asked
    refs = re.findall(r"^(Q\d+): (.*)$", text, re.M)
    return json.dumps({"attributions": [
        {"query": ref, "skills": [{"skill_id": "answer.arithmetic.multi_step" if "sum" in q or "plus" in q
                                   else "answer.geography.capitals", "weight": 3},
                                  {"skill_id": "Capitals and rivers", "weight": 1}]} for ref, q in refs]})


def test_llm_attribution_parses_weights_and_reasks_unknown_ids(inputs):
    content = _content(inputs)
    found = discover_llm(FakeLlm([GOOD]), content, inputs, "answer")
    place_skills(content, found)
    ids = sorted(inputs.texts)[:6]
    unknown = {"attributions": [{"query": "Q1", "skills": [{"skill_id": "answer.nope", "weight": 1}]}]}
    stranger = {"attributions": [{"query": "Q99", "skills": [{"skill_id": "answer.geography.capitals",
                                                               "weight": 1}]}]}
    llm = FakeLlm([unknown, _attribution_reply, stranger, "{}"])
    assert attr.attribute_llm(llm, content, inputs, "answer", ids[:3]) == []
    assert "unknown skill id(s) answer.nope" in llm.prompts[1]
    for q in ids[:3]:
        got = {k: w for (qq, m, k), (w, by) in content.attributions.items() if qq == q}
        assert sum(got.values()) == pytest.approx(1.0) and all(w > 0 for w in got.values())
        assert {by for (qq, _m, _k), (_w, by) in content.attributions.items() if qq == q} == {"llm:fake/model"}
    arith = [q for q in ids[:3] if "sum" in inputs.texts[q] or "plus" in inputs.texts[q]]
    if arith:
        assert content.attributions[(arith[0], "answer", "answer.arithmetic.multi_step")][0] == pytest.approx(0.75)
    notes = attr.attribute_llm(llm, content, inputs, "answer", ids[3:])
    assert "attribution batch 1/1 failed" in notes[0] and "unknown query ref(s) Q99" in llm.prompts[3]
    assert not any(qq in ids[3:] for (qq, _m, _k) in content.attributions)


def test_offline_discovery_clusters_text_and_names_clusters_by_their_terms(inputs):
    found = discover_offline(_content(inputs), inputs, "answer", task_labels=False)
    assert found.method == "tfidf-kmeans" and 2 <= found.stats["categories"] <= 4
    assert found.stats["criterion_by_k"][found.stats["categories"]] == max(found.stats["criterion_by_k"].values())
    tops = [s for s in found.skills if s.parent_key is None]
    assert {s.provenance["method"] for s in found.skills} == {"tfidf-kmeans"}
    names = " ".join(s.name for s in tops)
    assert any(w in names for w in ("capital", "river", "country")) and any(
        w in names for w in ("sum", "product", "compute", "multiplied", "squared", "remainder"))
    kinds = {}
    for q, w in found.placement.items():
        kinds.setdefault(next(iter(w)).split(".")[1], set()).add(inputs.ext_ids[q].split("-")[0])
    assert {len(v) for v in kinds.values()} == {1}  # every cluster holds one kind of question
    labelled = discover_offline(_content(inputs), inputs, "answer")
    assert labelled.method == "label" and sorted(s.key for s in labelled.skills) == ["answer.arith", "answer.geo"]


def test_an_existing_key_is_never_overwritten(inputs):
    content = _content(inputs)
    content.skills["answer.arithmetic"] = SkillSpec("answer.arithmetic", "answer", "Mine", "hand-written")
    found = discover_llm(FakeLlm([GOOD]), content, inputs, "answer")
    found.placement = {1: {"answer.arithmetic.multi_step": 1.0}}
    added = place_skills(content, found)
    assert content.skills["answer.arithmetic"].name == "Mine"
    assert "answer.arithmetic_2" in content.skills and "answer.arithmetic_2.multi_step" in content.skills
    assert content.skills["answer.arithmetic_2.multi_step"].parent_key == "answer.arithmetic_2"
    assert "already taken" in content.skills["answer.arithmetic_2"].provenance["note"]
    assert found.placement == {1: {"answer.arithmetic_2.multi_step": 1.0}} and len(added) == 4


def test_weighted_attributions_enter_the_beta_counts_exactly(inputs):
    content, report = learn_content(inputs, LearnOptions(task_labels=False))
    q = sorted(inputs.texts)[0]
    keys = attr.leaves(content, "answer")[:2]
    for k in list(content.skills):
        content.attributions.pop((q, "answer", k), None)
    content.attributions[(q, "answer", keys[0])] = (0.7, "human")
    content.attributions[(q, "answer", keys[1])] = (0.3, "human")
    from skillorchestra_core.learning import profile
    frames = profile.frames_from_content(content, inputs.frames.evidence)
    comp = profile.competence(frames).set_index(["agent", "skill"])
    out = inputs.frames.outcomes
    for key, w in ((keys[0], 0.7), (keys[1], 0.3)):
        members = [qq for (qq, m, k), (ww, _b) in content.attributions.items() if k == key and qq in inputs.texts]
        for agent in ("calc", "geo"):
            rows = out[(out["agent"] == agent) & out["query_id"].isin(members)]
            ws = rows["query_id"].map(lambda qq: content.attributions[(qq, "answer", key)][0])
            assert comp.loc[(agent, key), "S"] == pytest.approx(float((ws * rows["score"]).sum()), abs=1e-12)
            assert comp.loc[(agent, key), "F"] == pytest.approx(float((ws * (1 - rows["score"])).sum()), abs=1e-12)
    assert report.attributed == {"offline:tfidf-kmeans": len(inputs.texts)}
    held = [k for (qq, _m, k), (_w, by) in content.attributions.items() if qq in inputs.heldout_texts]
    assert held and report.heldout_attributed == len(inputs.heldout_texts)
