"""A real HTTP server speaking the OpenAI chat-completions protocol, scripted per test.

It listens on 127.0.0.1 on a port the OS picks, answers each POST /v1/chat/completions with the
next scripted Reply (a completion, an HTTP error, or either after a delay), and records every
request body so tests can read what the client sent. Nothing here knows passhat.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclasses.dataclass(frozen=True)
class Reply:
    status: int = 200
    body: dict[str, Any] = dataclasses.field(default_factory=dict)
    delay: float = 0.0


def say(text: str | None = None, *calls: dict[str, Any], tokens: tuple[int, int] = (1000, 100), delay: float = 0.0) -> Reply:
    """A completion with text and/or tool calls, reporting ``tokens`` (prompt, completion)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = list(calls)
    body = {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)},
    }  # fmt: skip
    return Reply(200, body, delay)


def call(name: str, arguments: dict[str, Any] | str, call_id: str) -> dict[str, Any]:
    """A tool call; a str ``arguments`` is sent as is (so it may be invalid JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def fail(status: int, message: str, code: str | None = None) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "fake_error", "code": code}})


class FakeOpenAI:
    """``with FakeOpenAI(replies) as server:`` — ``server.url`` is the base URL for the SDK.

    ``replies`` is consumed in order; once exhausted, ``then`` (default: an HTTP 418 that names the
    problem) answers every further request.
    """

    def __init__(self, replies: Iterable[Reply] = (), then: Callable[[dict[str, Any]], Reply] | None = None):
        self._replies = list(replies)
        self._then = then or (lambda _: fail(418, "fake server: no reply scripted for this request"))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._replies.pop(0) if self._replies else self._then(body)

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                try:
                    reply = server._next(body, dict(self.headers))
                    time.sleep(reply.delay)
                    payload = json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)
                finally:
                    server._done()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> FakeOpenAI:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
