"""A loopback OpenAI-compatible server for tests (stdlib only): queue replies, inspect the requests it received.

    with FakeOpenAI() as server:
        server.queue("hello", {"required_skills": [...]}, 503)      # text, a JSON object, an HTTP error status
        litellm.completion(model="openai/x", api_base=server.base_url, api_key="k", messages=[...])
        server.requests[-1]["messages"]
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self, default: str = "hello from the fake server", prompt_tokens: int = 12,
                 completion_tokens: int = 7, delay_s: float = 0.0, responder=None):
        self.default = default
        self.delay_s = delay_s  # each reply waits this long (a model that takes time)
        self.responder = responder  # request body -> reply, instead of the queue
        self.keys: list[str] = []  # the API key of each request, in the order of `requests`
        self.usage = (prompt_tokens, completion_tokens)
        self.replies: deque = deque()
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def queue(self, *replies) -> "FakeOpenAI":
        with self._lock:
            self.replies.extend(replies)
        return self

    def _next(self):
        with self._lock:
            return self.replies.popleft() if self.replies else self.default

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client was killed (crash tests)
                    pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with fake._lock:
                    fake.requests.append(body)
                    fake.keys.append(self.headers.get("authorization", "").removeprefix("Bearer "))
                if fake.delay_s:
                    time.sleep(fake.delay_s)
                reply = fake.responder(body) if fake.responder else fake._next()
                if isinstance(reply, int):
                    self._send(reply, {"error": {"message": f"fake error {reply}", "type": "server_error"}})
                    return
                content = reply if isinstance(reply, str) else json.dumps(reply)
                pt, ct = fake.usage
                self._send(200, {
                    "id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
                })

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
