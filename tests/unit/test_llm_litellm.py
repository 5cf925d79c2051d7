"""The litellm adapter against a loopback OpenAI-compatible fake server: the real litellm code path, no network."""

import pytest
from pydantic import BaseModel
from support.fake_openai import FakeOpenAI
from support.handbooks import routing_models

from skillorchestra_core.llm import LiteLlmClient, LlmError, ask_structured
from skillorchestra_core.routing.engine import RouteOptions, route


class Verdict(BaseModel):
    action: str
    score: float


@pytest.fixture
def server():
    with FakeOpenAI() as srv:
        yield srv


def _client(server, **kw):
    return LiteLlmClient("openai/local-model", api_base=server.base_url, api_key="sk-test", retries=0,
                         timeout_s=10, **kw)


def test_completion_text_usage_and_cost_from_the_price_card(server):
    client = _client(server, price_cards={"openai/local-model": (2.0, 4.0)})
    reply = client.complete([{"role": "user", "content": "hello?"}], purpose="test")
    assert reply.text == "hello from the fake server"
    assert (reply.prompt_tokens, reply.completion_tokens) == (12, 7)
    assert reply.cost_usd == pytest.approx((12 * 2.0 + 7 * 4.0) / 1e6)
    assert server.requests[0]["messages"][-1]["content"] == "hello?"
    assert server.requests[0]["model"] == "local-model"
    rec = client.calls.records[0]
    assert rec.backend == "litellm" and rec.outcome == "ok" and rec.latency_s > 0


def test_structured_output_through_litellm_reasks_after_a_bad_reply(server):
    server.queue("this is not json", {"action": "split", "score": 0.5})
    got = ask_structured(_client(server), [{"role": "user", "content": "judge"}], Verdict, purpose="test")
    assert got.ok and got.value.action == "split" and got.attempts == 2
    assert server.requests[0]["response_format"]["type"] == "json_schema"
    assert "did not validate" in server.requests[1]["messages"][-1]["content"]


def test_a_server_error_becomes_an_llm_error_and_is_logged(server):
    server.queue(500)
    client = _client(server)
    with pytest.raises(LlmError):
        client.complete([{"role": "user", "content": "x"}], purpose="test")
    assert client.calls.records[-1].outcome == "error"


def test_live_execution_and_llm_activation_through_litellm(server, db_url):
    qa, _ = routing_models(db_url)
    server.queue({"required_skills": [{"skill_id": "answer.history", "weight": 100}], "reasoning": "rome"},
                 "Septimius Severus")
    client = LiteLlmClient("openai/router-model", api_base=server.base_url, api_key="k", retries=0,
                           price_cards={"openai/big": (5.0, 15.0)})
    trace = route(qa, "Which emperor ruled Rome in the year 200?", RouteOptions(execute="live", lam=0.0), llm=client)
    step = trace.steps[0]
    assert step.activation_source == "llm:openai/router-model"
    assert step.chosen == "big" and step.execution.output == "Septimius Severus"
    assert step.execution.cost_usd == pytest.approx((12 * 5.0 + 7 * 15.0) / 1e6)
    assert server.requests[1]["model"] == "big"  # the agent's own model string, provider prefix stripped
    assert [r.purpose for r in client.calls.records] == ["routing.activation", "routing.execute"]
