"""Real HTTP servers speaking model APIs, scripted per test: the OpenAI chat-completions protocol
(``FakeOpenAI``) and the Anthropic Messages API (``FakeAnthropic``).

Each listens on 127.0.0.1 on a port the OS picks, answers each POST to its endpoint with the next
scripted Reply (a completion, an HTTP error, or either after a delay, with any extra headers), and
records every request body, its headers, its path and when it arrived, so tests can read what the
client sent and how long it waited between tries. Both are scripted the same
way: a list of Replies consumed in order, then ``then(body)`` for every further request. The
reply builders of each protocol are below its server. Nothing here knows passhat.

A hostile endpoint is scripted too: a Reply's ``raw`` body is sent byte for byte (for what
``json.dumps`` cannot write, such as a 5,000-digit number or 10,000-deep nesting), and every
``ECHO_KEY`` in an answer is replaced by the API key the request carried, as an endpoint that echoes
its key would. A Reply's ``transfer`` says how the body goes over the wire: as is, gzip-compressed,
in small chunks, cut off halfway by a connection reset, or stalled halfway for ``STALL`` seconds.

A request in absolute form (``POST http://host/v1/...``, as a client sends it to a proxy) is served as if
it had come direct, so a test can name this server as the proxy; ``paths`` keeps the form it came in.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import socket
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

ECHO_KEY = "{{api-key}}"  # in an answer: replaced by the key the request carried
Transfer = Literal["plain", "gzip", "chunked", "reset", "stall"]
CHUNK = 7  # bytes per chunk of a chunked answer: small, so a body spans many
STALL = 1.0  # seconds a stalled answer waits between its halves


@dataclasses.dataclass(frozen=True)
class Reply:
    status: int = 200
    body: dict[str, Any] = dataclasses.field(default_factory=dict)
    delay: float = 0.0
    raw: str | None = None  # sent instead of body's JSON when set
    headers: dict[str, str] = dataclasses.field(default_factory=dict)  # sent besides content-type and -length
    transfer: Transfer = "plain"


def request_key(headers: dict[str, str]) -> str:
    """The API key a request carried: a bearer token (OpenAI) or x-api-key (Anthropic)."""
    lower = {k.lower(): v for k, v in headers.items()}
    return lower.get("x-api-key") or lower.get("authorization", "").removeprefix("Bearer ")


class FakeServer:
    """``with Server(replies) as server:`` — ``server.url`` is the base URL for the SDK.

    ``replies`` is consumed in order; once exhausted, ``then`` (default: an HTTP 418 that names the
    problem) answers every further request. A request to another path, or one the protocol refuses
    (``refusal``), is answered with an error without consuming a reply.
    """

    endpoint = ""  # the path the protocol's one endpoint is served at
    url_path = ""  # what follows host:port in the base URL the SDK is given

    def __init__(self, replies: Iterable[Reply] = (), then: Callable[[dict[str, Any]], Reply] | None = None):
        self._replies = list(replies)
        self._then = then or (lambda _: self.error(418, "fake server: no reply scripted for this request"))
        self.requests: list[dict[str, Any]] = []
        self.arrivals: list[float] = []  # time.monotonic() of each request, to check the waits between them
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{self.url_path}"

    def error(self, status: int, message: str) -> Reply:
        """The protocol's error answer."""
        raise NotImplementedError

    def refusal(self, body: dict[str, Any], headers: dict[str, str]) -> str | None:
        """Why the real API would refuse this well-routed request, or None."""
        return None

    def _next(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            self.headers.append(headers)
            self.paths.append(path)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if urllib.parse.urlsplit(path).path != self.endpoint:
                return self.error(404, f"fake server: no endpoint at {path}; this one serves {self.endpoint}")
            if why := self.refusal(body, {k.lower(): v for k, v in headers.items()}):
                return self.error(400, why)
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
                    reply = server._next(self.path, body, dict(self.headers))
                    time.sleep(reply.delay)
                    text = json.dumps(reply.body) if reply.raw is None else reply.raw
                    payload = text.replace(ECHO_KEY, request_key(dict(self.headers))).encode()
                finally:
                    server._done()  # before the answer goes out: a client that has read it may send its next request at once
                try:
                    self._send(reply, payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

            def _send(self, reply: Reply, payload: bytes) -> None:
                if reply.transfer == "chunked":
                    self.protocol_version = "HTTP/1.1"  # chunks are HTTP/1.1's; the connection closes after
                    self.close_connection = True
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.transfer == "gzip":
                    payload = gzip.compress(payload)
                    self.send_header("content-encoding", "gzip")
                if reply.transfer == "chunked":
                    self.send_header("transfer-encoding", "chunked")
                    self.send_header("connection", "close")
                    self.end_headers()
                    for i in range(0, len(payload), CHUNK):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload[i : i + CHUNK]), payload[i : i + CHUNK]))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                if reply.transfer == "reset":  # half the body, then a TCP reset (linger 0) instead of the rest
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                if reply.transfer == "stall":  # half the body, a pause, then the rest
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    time.sleep(STALL)
                    payload = payload[len(payload) // 2 :]
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> FakeServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# --- OpenAI chat completions -------------------------------------------------------------------------


class FakeOpenAI(FakeServer):
    endpoint = "/v1/chat/completions"
    url_path = "/v1"

    def error(self, status: int, message: str) -> Reply:
        return fail(status, message)

    def __enter__(self) -> FakeOpenAI:
        super().__enter__()
        return self


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


def say_raw(message: str) -> Reply:
    """A completion whose assistant message is ``message``, JSON text sent as is (it may hold what
    ``json.dumps`` cannot write)."""
    return Reply(
        200,
        raw=f'{{"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake", '
        f'"choices": [{{"index": 0, "message": {message}, "finish_reason": "stop"}}]}}',
    )


def fail(status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None) -> Reply:
    """An error answer; ``headers`` e.g. {"retry-after": "2"}."""
    return Reply(status, {"error": {"message": message, "type": "fake_error", "code": code}}, headers=headers or {})


# --- Anthropic Messages API --------------------------------------------------------------------------


class FakeAnthropic(FakeServer):
    """POST /v1/messages. Like the real API it refuses (HTTP 400, invalid_request_error) a request
    without the version header, ``model`` or ``max_tokens``, whose turns do not alternate from the
    user's, that holds an empty turn or text block, or whose tool_use blocks are not each answered by
    a tool_result at the start of the next user turn (and no tool_result answers anything else)."""

    endpoint = "/v1/messages"
    url_path = ""  # the SDK adds /v1/messages itself

    def error(self, status: int, message: str) -> Reply:
        return claude_fail(status, "invalid_request_error" if status == 400 else "not_found_error", message)

    def __enter__(self) -> FakeAnthropic:
        super().__enter__()
        return self

    def refusal(self, body: dict[str, Any], headers: dict[str, str]) -> str | None:
        if "anthropic-version" not in headers:
            return "anthropic-version: header is required"
        for field in ("model", "max_tokens", "messages"):
            if field not in body:
                return f"{field}: Field required"
        if not isinstance(body.get("system", ""), (str, list)):
            return "system: Input should be a string or a list of text blocks"
        return _turns_refusal(body["messages"])


def _turns_refusal(turns: list[dict[str, Any]]) -> str | None:
    if not turns:
        return "messages: at least one message is required"
    pending: set[str] = set()  # tool_use ids of the previous assistant turn, to be answered now
    for i, turn in enumerate(turns):
        role, content = turn.get("role"), turn.get("content")
        if role != ("user" if i % 2 == 0 else "assistant"):
            return f"messages.{i}: roles must alternate between user and assistant, starting with user"
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not blocks:
            return f"messages.{i}: all messages must have non-empty content"
        if any(b["type"] == "text" and not b.get("text") for b in blocks):
            return f"messages.{i}: text content blocks must be non-empty"
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if role == "user":
            if any(b["type"] == "tool_result" for b in blocks[len(results) :]):
                return f"messages.{i}: tool_result blocks must come first in the user turn"
            if set(results) != pending or len(results) != len(pending):
                return f"messages.{i}: tool_use ids {sorted(pending)} must be answered by tool_result blocks immediately after, got {results}"
            pending = set()
        else:
            if results:
                return f"messages.{i}: tool_result blocks belong in user turns"
            uses = [b for b in blocks if b["type"] == "tool_use"]
            if any(not isinstance(b.get("input"), dict) for b in uses):
                return f"messages.{i}: tool_use input must be an object"
            pending = {b["id"] for b in uses}
    return None


def claude_says(
    text: str | None = None, *uses: dict[str, Any], tokens: tuple[int, int] = (1000, 100), delay: float = 0.0
) -> Reply:
    """A Messages-API answer of a text block and/or tool_use blocks, reporting ``tokens`` (input, output)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += uses
    body = {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake", "content": content,
        "stop_reason": "tool_use" if uses else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]},
    }  # fmt: skip
    return Reply(200, body, delay)


def claude_says_raw(content: str) -> Reply:
    """A Messages-API answer whose content blocks are ``content``, JSON text sent as is."""
    return Reply(
        200,
        raw=f'{{"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake", '
        f'"content": {content}, "stop_reason": "tool_use", "stop_sequence": null, '
        f'"usage": {{"input_tokens": 1000, "output_tokens": 100}}}}',
    )


def tool_use(name: str, arguments: dict[str, Any], use_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": arguments}


def claude_fail(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    """An error answer: ``kind`` is the API's error type, e.g. rate_limit_error, overloaded_error."""
    return Reply(status, {"type": "error", "error": {"type": kind, "message": message}}, headers=headers or {})
