"""Chat completions with tools over plain HTTP: OpenAI itself, and through ``base_url`` every server that
speaks the same protocol (vLLM, Ollama, llama.cpp's server, OpenRouter…).

This is a run's hot path, so it does without the ``openai`` SDK, which re-validates and re-serializes
every request's messages and tool schemas (about 2.5 ms of CPU per request, most of a trial's cost). It
sends with one ``aiohttp`` session per model client, which keeps its connections alive up to the role's
connection limit: its HTTP parser is C and it does far less per request than an httpx-style stack (about
130 µs of CPU per request against 1 ms for httpx2 with 32 requests in flight, whose pool cost grew with
the requests in flight). The request body is JSON text written once where it can be (``request_body.py``),
and only what is used is read from the answer. What the SDK did that a run can observe is kept as it was:
its default base URL and environment variables (HTTP(S)_PROXY too), its error texts, no retries of its own
(retrying is ``retry.py``'s job, so that every provider retries alike).

The answer is read field by field: a broken envelope (no choices, no message, tool calls that are not a
list) is the endpoint's failure; any value the model wrote (text, tool names, ids, arguments) is taken as
text, whatever its JSON type.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Mapping
from typing import Any

import aiohttp
from yarl import URL

from passhat.llm.conversation import Conversation
from passhat.llm.errors import TransientError, classify_status, header_wait, undecodable_answer
from passhat.llm.model import Completion, ModelToolCall, Sampling, ToolSchema, as_text, token_count
from passhat.llm.request_body import RequestBody

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# what the SDK also sent when set: the organization and project a key is billed to
OPTIONAL_HEADERS = {"OpenAI-Organization": "OPENAI_ORG_ID", "OpenAI-Project": "OPENAI_PROJECT_ID"}


class OpenAIClient:
    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float, connections: int):
        """``timeout`` bounds getting a connection and each wait for the server's next bytes (as httpx's did);
        ``connections`` is the role's limit of requests in flight, so every one of them keeps its connection."""
        self.model = model
        base = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        headers = {"authorization": f"Bearer {api_key}", "content-type": "application/json", "accept": "application/json"}
        headers |= {name: os.environ[var] for name, var in OPTIONAL_HEADERS.items() if os.environ.get(var)}
        self._url = URL(f"{base}/chat/completions")
        self._proxy = environment_proxy(self._url)
        self._body = RequestBody(model)
        self._http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=connections),
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=None, connect=timeout, sock_read=timeout),
        )

    @classmethod
    def check(cls, model: str, flag: str) -> None:
        """Nothing to check before a run: a server may serve any model name."""

    async def complete(self, conversation: Conversation, tools: list[ToolSchema], sampling: Sampling) -> Completion:
        content = self._body.encode(conversation, tools, sampling)
        try:
            # no redirects followed, as the SDK followed none (aiohttp would re-send some as GETs)
            async with self._http.post(self._url, data=content, proxy=self._proxy, allow_redirects=False) as response:
                status, headers, raw = response.status, response.headers, await response.read()
        except TimeoutError:  # aiohttp's own timeouts are TimeoutErrors too
            raise TransientError("APITimeoutError: Request timed out.") from None
        except aiohttp.ClientError:  # refused, reset, a broken or undecodable body: the connection's failure
            raise TransientError("APIConnectionError: Connection error.") from None
        if status >= 400:
            raise status_failure(status, headers, raw)
        try:
            answer = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise (undecodable_answer(exc) or exc) from None
        return chat_completion(answer)

    async def aclose(self) -> None:
        await self._http.close()


def environment_proxy(url: URL) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``ALL_PROXY``… less ``NO_PROXY``), as the
    SDK honoured it: read once per client, since aiohttp's own reading of it costs a thread hop per request."""
    if url.host is None or urllib.request.proxy_bypass_environment(url.host):
        return None
    proxies = urllib.request.getproxies_environment()
    return proxies.get(url.scheme) or proxies.get("all")


def status_failure(status: int, headers: Mapping[str, str], raw: bytes) -> Exception:
    """An HTTP error answer, worded as the openai SDK words it (``Error code: 429 - {…}``) and classified by its
    status and the ``code`` of its error object, with the wait its headers ask for."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        body: Any = json.loads(text)
        message = f"Error code: {status} - {body}"
    except (ValueError, RecursionError):
        body, message = text, text or f"Error code: {status}"
    error = body.get("error", body) if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return classify_status(status, message, code if isinstance(code, str) else None, header_wait(headers))


def chat_completion(answer: Any) -> Completion:
    """A chat completion's decoded JSON, read for what a run uses."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not choices or not isinstance(choices, list):
        raise TransientError("the endpoint answered with no choices")
    message = _field(choices[0], "message")
    calls = _field(message, "tool_calls") or []
    if not isinstance(message, dict) or not isinstance(calls, list):
        raise TransientError("the endpoint's answer is not a chat completion (no message, or tool_calls not a list)")
    usage = answer.get("usage")
    return Completion(
        text=as_text(message.get("content")),
        tool_calls=tuple(_tool_call(call, i) for i, call in enumerate(calls)),
        input_tokens=token_count(_field(usage, "prompt_tokens")),
        output_tokens=token_count(_field(usage, "completion_tokens")),
    )


def _field(value: Any, name: str) -> Any:
    """``value[name]`` when ``value`` is a JSON object; None otherwise."""
    return value.get(name) if isinstance(value, dict) else None


def _tool_call(call: Any, i: int) -> ModelToolCall:
    """A call as the model wrote it; a missing id gets one, missing name or arguments are empty."""
    function = _field(call, "function")
    return ModelToolCall(
        as_text(_field(call, "id")) or f"call_{i}",
        as_text(_field(function, "name")) or "",
        as_text(_field(function, "arguments")) or "",
    )
