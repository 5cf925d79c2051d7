"""API keys never reach a stored or printed error: a loopback provider that quotes the key in its error reply, driven
through the real litellm client, the routing engine, the decision store and the `route --json` CLI."""

import json
import logging
import os
import subprocess
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlmodel import select
from support.handbooks import MINI_QA, routing_models

from skillorchestra_core.llm import LiteLlmClient, LlmError
from skillorchestra_core.llm.redact import MASK, RedactingFilter, redact

# A key with no provider shape: only the client's own knowledge of it can remove it.
PLAIN_KEY = "live-7f3Kq9ZzW1xYb42"
SHAPED_KEY = "sk-proj-Abc123Def456Ghi789Jkl"
QUERY = "Which emperor ruled Rome in the year 200?"


class EchoingProvider:
    """An OpenAI-compatible server that rejects every call quoting the caller's credentials, as some providers and
    proxies do ("Incorrect API key provided: ...", the Authorization header echoed back)."""

    def __enter__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                auth = self.headers.get("authorization", "")
                key = auth.removeprefix("Bearer ").strip()
                body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}. Sent headers: "
                                                        f"{{'Authorization': '{auth}'}}; retry with api_key={key}",
                                             "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        host, port = self.server.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def provider():
    with EchoingProvider() as p:
        yield p


def _client(provider, key):
    return LiteLlmClient("openai/local-model", api_base=provider.base_url, api_key=key, retries=0, timeout_s=10)


@pytest.mark.parametrize("key", [PLAIN_KEY, SHAPED_KEY])
def test_the_provider_error_is_stored_and_raised_without_the_key(provider, key):
    client = _client(provider, key)
    with pytest.raises(LlmError) as info:
        client.complete([{"role": "user", "content": "hi"}], purpose="test")
    printed = "".join(traceback.format_exception(info.value))
    assert "Incorrect API key provided" in str(info.value) and MASK in str(info.value)  # still says what went wrong
    assert key not in printed
    assert key not in client.calls.records[-1].error and client.calls.records[-1].outcome == "error"


def test_the_server_really_echoes_the_key(provider):
    """Without redaction the key would be there: the provider's raw reply quotes it."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(provider.base_url + "/chat/completions", data=b"{}", method="POST",
                                 headers={"Authorization": f"Bearer {PLAIN_KEY}"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert PLAIN_KEY in info.value.read().decode()


def test_a_live_route_stores_no_key_in_the_trace_or_llm_call(provider, db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import DecisionTrace, LlmCall
    from skillorchestra_core.routing.engine import RouteOptions
    from skillorchestra_core.routing.service import route_query

    routing_models(db_url)
    client = _client(provider, PLAIN_KEY)
    with session(db_url) as s:
        trace = route_query(s, MINI_QA, None, QUERY, RouteOptions(execute="live", activation="offline"), llm=client,
                            store=True)
        s.commit()
        calls = s.exec(select(LlmCall)).all()
        stored = s.exec(select(DecisionTrace)).all()
    assert trace.steps[0].execution.status == "error"
    assert calls and all(c.outcome == "error" and PLAIN_KEY not in c.error and MASK in c.error for c in calls)
    assert stored
    for row in stored:
        assert PLAIN_KEY not in json.dumps({k: v for k, v in vars(row).items() if not k.startswith("_")},
                                           default=str)
    assert PLAIN_KEY not in trace.to_json()


def test_route_json_prints_no_key(provider, db_url):
    routing_models(db_url)
    env = {**os.environ, "SKILLORCHESTRA_DB_URL": db_url, "SKILLORCHESTRA_LLM_BACKEND": "litellm",
           "SKILLORCHESTRA_LLM_MODEL": "openai/local-model", "SKILLORCHESTRA_LLM_API_BASE": provider.base_url,
           "SKILLORCHESTRA_LLM_API_KEY": PLAIN_KEY, "SKILLORCHESTRA_LLM_RETRIES": "0",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    code = "from skillorchestra_core.cli import main; main()"
    out = subprocess.run([sys.executable, "-c", code, "route", MINI_QA, QUERY, "--execute", "live", "--activation",
                          "offline", "--json"], capture_output=True, text=True, env=env, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    trace = json.loads(out.stdout)
    details = [st["execution"]["detail"] for st in trace["steps"] if st.get("execution")]
    assert details and all("Incorrect API key provided" in d for d in details)  # the live call did fail
    assert PLAIN_KEY not in out.stdout and PLAIN_KEY not in out.stderr


def test_patterns_and_configured_values(monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "acme-plain-secret-42")
    text = ("key sk-ant-api03-AAAABBBBCCCC and Authorization: Bearer abc.def.ghi-123 "
            "api_key=hunter2hunter2 \"apiKey\": \"q1w2e3r4t5\" env acme-plain-secret-42 AKIAABCDEFGHIJKLMNOP")
    out = redact(text)
    for secret in ("sk-ant-api03-AAAABBBBCCCC", "abc.def.ghi-123", "hunter2hunter2", "q1w2e3r4t5",
                   "acme-plain-secret-42", "AKIAABCDEFGHIJKLMNOP"):
        assert secret not in out
    assert out.count(MASK) == 6 and redact(out) == out  # idempotent: a mask is never masked again
    assert redact("basic arithmetic, token counts, 401 Unauthorized") == "basic arithmetic, token counts, " \
                                                                        "401 Unauthorized"
    assert redact(None) == "" and redact("x", secrets=[None, "", "ab"]) == "x"


def test_logging_filter_redacts_message_args_and_tracebacks(caplog):
    log = logging.getLogger("skillorchestra.test.redact")
    log.addFilter(RedactingFilter())
    try:
        with caplog.at_level(logging.INFO, logger=log.name):
            log.info("calling with %s", f"api_key={SHAPED_KEY}")
            try:
                raise RuntimeError(f"refused {SHAPED_KEY}")
            except RuntimeError:
                log.exception("failed")
    finally:
        log.filters.clear()
    assert SHAPED_KEY not in caplog.text and caplog.text.count(MASK) >= 2


def test_provider_loggers_are_filtered(caplog):
    import skillorchestra_core.llm.base  # noqa: F401  (installs the filters)

    with caplog.at_level(logging.DEBUG, logger="LiteLLM"):
        logging.getLogger("LiteLLM").debug("POST headers %s", {"Authorization": f"Bearer {PLAIN_KEY}"})
    assert "Authorization" in caplog.text and PLAIN_KEY not in caplog.text
