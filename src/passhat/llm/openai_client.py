"""Chat completions with tools over plain HTTP: OpenAI itself, and through ``base_url`` every server that
speaks the same protocol (vLLM, Ollama, llama.cpp's server, OpenRouter…).

This is a run's hot path, so it does without the ``openai`` SDK, which re-validates and re-serializes
every request's messages and tool schemas (about 2.5 ms of CPU per request, most of a trial's cost):
one pooled ``httpx2`` client, a request body whose tool schemas are JSON text written once per run
(``request_body.py``), and an answer of which only what is used is read. What the SDK did that a run can observe is kept as it was: its
default base URL and environment variables, its error texts, no retries of its own (retrying is
``retry.py``'s job, so that every provider retries alike).

The answer is read field by field: a broken envelope (no choices, no message, tool calls that are not a
list) is the endpoint's failure; any value the model wrote (text, tool names, ids, arguments) is taken as
text, whatever its JSON type.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx2

from passhat.llm.errors import TransientError, classify_status, header_wait, undecodable_answer
from passhat.llm.model import Completion, Message, ModelToolCall, Sampling, ToolSchema, as_text, token_count
from passhat.llm.request_body import RequestBody

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# what the SDK also sent when set: the organization and project a key is billed to
OPTIONAL_HEADERS = {"OpenAI-Organization": "OPENAI_ORG_ID", "OpenAI-Project": "OPENAI_PROJECT_ID"}


class OpenAIClient:
    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float):
        self.model = model
        base = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        headers = {"authorization": f"Bearer {api_key}", "content-type": "application/json", "accept": "application/json"}
        headers |= {name: os.environ[var] for name, var in OPTIONAL_HEADERS.items() if os.environ.get(var)}
        self._url = f"{base}/chat/completions"
        self._body = RequestBody(model)
        self._http = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(timeout),
            # the hub's limit per endpoint (--max-connections) bounds requests in flight; the pool keeps them all open
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=None),
        )

    @classmethod
    def check(cls, model: str, flag: str) -> None:
        """Nothing to check before a run: a server may serve any model name."""

    async def complete(self, messages: list[Message], tools: list[ToolSchema], sampling: Sampling) -> Completion:
        content = self._body.encode(messages, tools, sampling)
        try:
            response = await self._http.post(self._url, content=content)
        except httpx2.TimeoutException:
            raise TransientError("APITimeoutError: Request timed out.") from None
        except httpx2.HTTPError:  # refused, reset, a broken or undecodable body: the connection's failure
            raise TransientError("APIConnectionError: Connection error.") from None
        if response.status_code >= 400:
            raise status_failure(response)
        try:
            answer = json.loads(response.content)
        except (ValueError, RecursionError) as exc:
            raise (undecodable_answer(exc) or exc) from None
        return chat_completion(answer)

    async def aclose(self) -> None:
        await self._http.aclose()


def status_failure(response: httpx2.Response) -> Exception:
    """An HTTP error answer, worded as the openai SDK words it (``Error code: 429 - {…}``) and classified by its
    status and the ``code`` of its error object, with the wait its headers ask for."""
    text = response.text.strip()
    try:
        body: Any = json.loads(text)
        message = f"Error code: {response.status_code} - {body}"
    except (ValueError, RecursionError):
        body, message = text, text or f"Error code: {response.status_code}"
    error = body.get("error", body) if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return classify_status(response.status_code, message, code if isinstance(code, str) else None, header_wait(response.headers))


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
