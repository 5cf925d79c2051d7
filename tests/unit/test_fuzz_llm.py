"""Property-based fuzzing of every LLM output parser: a reply is a value or the documented one-line error.

`ask_structured` (and `llm_proposal` above it) never raises on what a model writes: it returns a value that passed
validation and the semantic check, or `Structured.error` / the proposal error as one line.
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillorchestra_core.handbook.content import HandbookContent, SkillSpec
from skillorchestra_core.learning import llm_prompts as lp
from skillorchestra_core.learning.attribution import _checker
from skillorchestra_core.learning.insights import InsightsReply
from skillorchestra_core.llm import ask_structured, parse_reply
from skillorchestra_core.llm.fake import FakeLlm
from skillorchestra_core.refinement.proposals import llm_proposal
from skillorchestra_core.refinement.records import AgentEvidence, CandidateRecord, GroupEvidence

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

HOSTILE_SNIPPETS = [
    "[" * 100_000 + "]" * 100_000, "9" * 5000, '"\\ud800"', '"\\udc00x"', "\ud800", "Infinity", "-Infinity", "NaN",
    "1e999", "-1e999", "null", "{}", "[]", '""', "```json\n{}\n```", "{" * 3, "}" * 3, "\x00", "\u2028", "Q1\nQ2",
]
KEYS = ["attributions", "query", "skills", "skill_id", "weight", "categories", "name", "description", "insights",
        "content", "confidence", "insight_type", "children", "key", "group", "moves", "merged", "rationale",
        "indicators", "examples"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["Q1", "Q2", "q3", "m.a", "m.b", "group 1", "group 2", "1", "2", "3", "m.a.x", "m.a.y",
                     "9" * 5000, "", " ", "\n"]),
)
shaped = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=5), max_leaves=25)


def _dump(value) -> str:
    try:
        return json.dumps(value)  # Infinity and NaN as the bare literals some models write
    except ValueError:  # an int past the digit limit
        return "{}"


replies = st.one_of(
    st.text(max_size=200),
    shaped.map(_dump),
    st.tuples(shaped.map(_dump), st.integers(min_value=0, max_value=200), st.sampled_from(HOSTILE_SNIPPETS)).map(
        lambda t: t[0][:t[1]] + t[2] + t[0][t[1]:]),
    st.tuples(st.text(max_size=30), shaped.map(_dump), st.text(max_size=30)).map("```json\n{0[1]}\n```{0[2]}".format),
)


def _one_line(text: str) -> bool:
    return bool(text) and "\n" not in text and "\r" not in text


def _finite(data) -> bool:
    if isinstance(data, float):
        return math.isfinite(data)
    if isinstance(data, dict):
        return all(_finite(v) for v in data.values())
    if isinstance(data, (list, tuple)):
        return all(_finite(v) for v in data)
    return True


RESOLVE = {"m.a": "m.a", "m.b": "m.b"}
REFS = {"Q1": 1, "Q2": 2}
SCHEMAS = [(lp.AttributionReply, _checker(REFS, RESOLVE)), (lp.DiscoveryReply, None), (InsightsReply, None)]


@FUZZ
@given(first=replies, second=replies, which=st.integers(min_value=0, max_value=len(SCHEMAS) - 1))
def test_structured_replies(first, second, which):
    schema, check = SCHEMAS[which]
    got = ask_structured(FakeLlm([first, second]), [{"role": "user", "content": "x"}], schema, purpose="fuzz",
                         check=check)
    if got.ok:
        assert isinstance(got.value, schema) and _finite(got.value.model_dump())
        assert got.error == ""
    else:
        assert got.value is None and _one_line(got.error) and got.error.startswith("invalid output after 2 attempts")


@FUZZ
@given(reply=replies, which=st.integers(min_value=0, max_value=len(SCHEMAS) - 1))
def test_parse_reply_raises_only_value_errors(reply, which):
    schema, check = SCHEMAS[which]
    try:
        value = parse_reply(reply, schema, check)
    except ValueError:  # pydantic's ValidationError is one
        return
    assert _finite(value.model_dump())


def _content() -> HandbookContent:
    c = HandbookContent()
    for key in ("m.a", "m.b"):
        c.skills[key] = SkillSpec(key, "m", key.upper(), f"skill {key}")
    return c


SPLIT = CandidateRecord(kind="split", detector="bayes", mode="m", skills=["m.a"], statistic=3.0, threshold=1.0,
                        groups=[GroupEvidence(label="group 1", query_ids=[1, 2], examples=["x", "y"]),
                                GroupEvidence(label="group 2", query_ids=[3], examples=["z"])],
                        agents=[AgentEvidence(agent="a", successes=[1, 0], failures=[0, 1])])
MERGE = CandidateRecord(kind="merge", detector="bayes", mode="m", skills=["m.a", "m.b"], statistic=2.0,
                        threshold=1.0, groups=[GroupEvidence(label="m.a"), GroupEvidence(label="m.b")],
                        agents=[AgentEvidence(agent="a", successes=[1, 1], failures=[0, 0])])
split_like = st.fixed_dictionaries({
    "rationale": scalars,
    "children": st.lists(st.fixed_dictionaries({"key": st.sampled_from(["m.a.x", "m.a.y", "m.b", "bad key", ""]),
                                                "name": scalars, "group": st.sampled_from(["group 1", "group 2",
                                                                                           "Group 1", "x"])}),
                         max_size=5),
    "moves": st.dictionaries(st.sampled_from(["1", "2", "3", "4", "x", "9" * 5000, "²", " 1"]),
                             st.sampled_from(["m.a.x", "m.a.y", "zz"]), max_size=3),
}).map(_dump)


@FUZZ
@given(first=st.one_of(replies, split_like), second=st.one_of(replies, split_like), merge=st.booleans())
def test_refinement_proposal_replies(first, second, merge):
    proposal, error = llm_proposal(FakeLlm([first, second]), MERGE if merge else SPLIT, _content())
    if proposal is None:
        assert _one_line(error)
    else:
        assert error == "" and proposal.skills and proposal.source.startswith("llm:")
