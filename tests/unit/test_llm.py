"""The LLM layer: the fake and offline clients, structured output with one re-ask, the call log."""

import subprocess
import sys

import pytest
from pydantic import BaseModel

from skillorchestra_core.llm import (
    FakeLlm,
    LiteLlmClient,
    LlmError,
    LlmUnavailable,
    OfflineLlm,
    ask_structured,
    client_from_settings,
    extract_json,
    register_offline_handler,
)
from skillorchestra_core.llm.log import save_calls

MSGS = [{"role": "user", "content": "hi"}]


class Answer(BaseModel):
    value: int
    why: str = ""


def test_fake_replays_outputs_in_order_and_records_prompts():
    llm = FakeLlm(["one", {"value": 2}, ValueError("boom")])
    assert llm.complete(MSGS, purpose="p").text == "one"
    assert llm.complete([{"role": "user", "content": "again"}], purpose="q", model="m2").text == '{"value": 2}'
    with pytest.raises(LlmError, match="boom"):
        llm.complete(MSGS, purpose="r")
    with pytest.raises(LlmError, match="no queued output"):
        llm.complete(MSGS, purpose="s")
    assert llm.prompts[:2] == ["hi", "again"] and llm.requests[1].model == "m2"
    recs = llm.calls.records
    assert [(r.purpose, r.outcome) for r in recs] == [("p", "ok"), ("q", "ok"), ("r", "error"), ("s", "error")]
    assert recs[0].prompt_tokens == 10 and recs[0].prompt_hash and recs[0].prompt_hash != recs[1].prompt_hash


def test_structured_output_validates_and_reasks_once():
    ok = ask_structured(FakeLlm(['```json\n{"value": 3}\n```']), MSGS, Answer, purpose="t")
    assert ok.ok and ok.value.value == 3 and ok.attempts == 1
    llm = FakeLlm(['{"value": "three"}', 'Sure! {"value": 3, "why": "fixed"} hope that helps'])
    fixed = ask_structured(llm, MSGS, Answer, purpose="t")
    assert fixed.value.why == "fixed" and fixed.attempts == 2
    assert "did not validate" in llm.prompts[1] and "value" in llm.prompts[1]
    assert [r.outcome for r in llm.calls.records] == ["invalid", "ok"]
    bad = ask_structured(FakeLlm(["nope", "still nope"]), MSGS, Answer, purpose="t")
    assert not bad.ok and "invalid output after 2 attempts" in bad.error and bad.raw == "still nope"


def test_a_semantic_check_counts_as_a_validation_failure():
    def check(a: Answer) -> None:
        if a.value < 0:
            raise ValueError("value must be positive")

    got = ask_structured(FakeLlm(['{"value": -1}', '{"value": 4}']), MSGS, Answer, purpose="t", check=check)
    assert got.value.value == 4


def test_a_failed_call_is_not_reasked():
    llm = FakeLlm([LlmError("timeout")])
    got = ask_structured(llm, MSGS, Answer, purpose="t")
    assert not got.ok and "call failed" in got.error and len(llm.requests) == 1


def test_extract_json():
    assert extract_json('text {"a": {"b": 1}} tail') == '{"a": {"b": 1}}'
    assert extract_json("no braces") == "no braces"


def test_offline_client_serves_registered_purposes_only():
    llm = OfflineLlm()
    assert not llm.configured
    with pytest.raises(LlmUnavailable, match="no stand-in"):
        llm.complete(MSGS, purpose="unknown.purpose")
    register_offline_handler("test.echo", lambda messages, schema: '{"value": 7}')
    assert ask_structured(llm, MSGS, Answer, purpose="test.echo").value.value == 7
    assert llm.calls.records[-1].backend == "offline" and llm.calls.records[-1].cost_usd == 0.0


def test_client_from_settings():
    from skillorchestra_core.settings import Settings

    assert isinstance(client_from_settings(Settings(llm_backend="offline")), OfflineLlm)
    client = client_from_settings(Settings(llm_backend="litellm", llm_model="openai/local",
                                           llm_api_base="http://127.0.0.1:9/v1", llm_retries=0))
    assert isinstance(client, LiteLlmClient) and client.model == "openai/local" and client.configured


def test_calls_are_persisted(db_session):
    from sqlmodel import select

    from skillorchestra_core.db.models import LlmCall

    llm = FakeLlm(["a", ValueError("x")])
    llm.complete(MSGS, purpose="p")
    with pytest.raises(LlmError):
        llm.complete(MSGS, purpose="p")
    assert save_calls(db_session, llm.calls.records) == 2
    db_session.commit()
    rows = db_session.exec(select(LlmCall).order_by(LlmCall.id)).all()
    assert [(r.purpose, r.backend, r.outcome) for r in rows] == [("p", "fake", "ok"), ("p", "fake", "error")]
    assert rows[1].error.startswith("ValueError")


def test_a_sink_sees_every_call():
    seen = []
    llm = FakeLlm(["a"], sink=seen.append)
    llm.complete(MSGS, purpose="p")
    assert [r.purpose for r in seen] == ["p"]


def test_importing_the_llm_layer_does_not_import_litellm():
    code = "import sys, skillorchestra_core.llm, skillorchestra_core.routing.api; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
