"""Hostile JSON (deep nesting, huge integers, lone surrogates) gives the one-line error in every JSON importer."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Handbook, HandbookVersion, Query, Trajectory
from skillorchestra_core.errors import StudioError
from skillorchestra_core.formats import json_safe
from skillorchestra_core.formats.canonical import import_handbook
from skillorchestra_core.formats.exploration import import_exploration
from skillorchestra_core.formats.llmrouter import import_llmrouter
from skillorchestra_core.formats.outcomes import import_outcomes

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000
HOSTILE = {
    "deep": ('{"query_id": "q", "query": "t", "agent": "a", "score": 1, "x": ' + DEEP + "}",
             "JSON nested deeper than"),
    "huge int": ('{"query_id": "q", "query": "t", "agent": "a", "score": 1, "prompt_tokens": ' + HUGE_INT + "}",
                 "a number with more than 4300 digits"),
    "lone surrogate": ('{"query_id": "q", "query": "t\\ud800", "agent": "a", "score": 1}', "lone surrogate"),
    "lone low surrogate key": ('{"query_id": "q", "query": "t", "agent": "a", "score": 1, "\\udc00": 1}',
                               "lone surrogate"),
    "token count": ('{"query_id": "q", "query": "t", "agent": "a", "score": 1, "prompt_tokens": 1' + "0" * 30 + "}",
                    "prompt_tokens"),
}
GOOD = '{"query_id": "ok", "query": "fine", "agent": "a", "score": 1}'


def counts(url: str) -> tuple[int, ...]:
    with session(url) as s:
        return tuple(s.exec(select(func.count()).select_from(m)).one()
                     for m in (Handbook, HandbookVersion, Query, Trajectory))


def attempt(url: str, fn, *args, **kwargs) -> str:
    """Run an import expected to fail; the message, after checking it is one line and nothing was written."""
    before = counts(url)
    with pytest.raises(StudioError) as err:
        with session(url) as s:
            fn(s, *args, **kwargs)
            s.commit()
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    assert counts(url) == before
    return message


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_outcomes_jsonl(db_url, tmp_path, case):
    line, reason = HOSTILE[case]
    path = tmp_path / "x.jsonl"
    path.write_text(GOOD + "\n\n" + line + "\n", encoding="utf-8")
    message = attempt(db_url, import_outcomes, path, "hb")
    assert f"{path}:3: " in message and reason in message


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_exploration(db_url, tmp_path, case):
    line, reason = HOSTILE[case]
    path = tmp_path / "inference_results.jsonl"
    path.write_text(line.replace('"query_id"', '"sample_id"') + "\n", encoding="utf-8")
    message = attempt(db_url, import_exploration, path, "hb")
    assert f"{path}:1: " in message


@pytest.mark.parametrize("case", ["deep", "huge int", "lone surrogate"])
def test_canonical_handbook(db_url, tmp_path, case):
    payload = {"deep": DEEP, "huge int": HUGE_INT, "lone surrogate": '"\\ud800"'}[case]
    path = tmp_path / "hb.json"
    path.write_text('{"metadata": {},\n "modes": {"x": ' + payload + "}}", encoding="utf-8")
    message = attempt(db_url, import_handbook, path, "hb")
    assert message.startswith(f"{path}:2: ")


@pytest.mark.parametrize("case", ["deep", "huge int", "lone surrogate"])
@pytest.mark.parametrize("target", ["dcrouter_train.json", "default_llm.json"])
def test_llmrouter(db_url, tmp_path, case, target):
    payload = {"deep": DEEP, "huge int": HUGE_INT, "lone surrogate": '"\\ud800"'}[case]
    folder = tmp_path / "llmrouter"
    folder.mkdir()
    (folder / "dcrouter_train.json").write_text(json.dumps([{"question": "q1", "scores": {"m": 1}}]))
    (folder / "dcrouter_test.json").write_text("[]")
    (folder / target).write_text('[\n{"question": "q2", "scores": {"m": 1}, "x": ' + payload + "}]")
    message = attempt(db_url, import_llmrouter, folder, "hb")
    assert f"{folder / target}:2: " in message


# --- json_safe itself ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, reason", [
    ("{\n\n" + '"a": ' + DEEP + "}", 3, "nested deeper than"),
    ("[" * (json_safe.MAX_DEPTH + 1) + "]" * (json_safe.MAX_DEPTH + 1), 1, "nested deeper than"),
    ("\n" + HUGE_INT, 2, "more than 4300 digits"),
    ('["ok",\n"\\udfff"]', 2, "lone surrogate"),
    ('{"a": 1,}', 1, "invalid JSON at column 9"),
])
def test_loads_refuses_with_reason_and_line(text, line, reason):
    with pytest.raises(json_safe.JsonProblem) as err:
        json_safe.loads(text)
    assert err.value.line == line and reason in str(err.value)


def test_loads_keeps_paired_surrogates_and_moderate_nesting():
    assert json_safe.loads('"\\ud83d\\ude00"') == "\U0001F600"
    depth = json_safe.MAX_DEPTH
    value = json_safe.loads("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('{}[]",:0123456789.eE-+ \\utrfalsn\n'), max_size=200))
def test_loads_of_json_like_noise_is_a_value_or_json_problem(text):
    try:
        json_safe.loads(text)
    except json_safe.JsonProblem as exc:
        assert "\n" not in str(exc)


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=30))
def test_loads_round_trips_valid_documents(value):
    text = json.dumps(value)
    try:
        assert json_safe.loads(text) == value
    except json_safe.JsonProblem as exc:  # only generated lone surrogates may be refused
        assert "lone surrogate" in str(exc)
