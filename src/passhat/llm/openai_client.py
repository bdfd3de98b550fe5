"""Chat completions with tools over the official ``openai`` SDK: OpenAI itself, and through ``base_url``
every server that speaks the same protocol (vLLM, Ollama, llama.cpp's server, OpenRouter…).

The SDK's own retries are off: retrying is ``retry.py``'s job, so that every provider retries alike.
The SDK does not check the types of what it decodes, so the answer is read field by field: a broken
envelope (no choices, no message, tool calls that are not a list) is the endpoint's failure; any
value the model wrote (text, tool names, ids, arguments) is taken as text, whatever its JSON type.
"""

from __future__ import annotations

from typing import Any

import openai

from passhat.llm.errors import TransientError, asked_wait, classify_status, undecodable_answer
from passhat.llm.model import Completion, Message, ModelToolCall, Sampling, ToolSchema, as_text, token_count


class OpenAIClient:
    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float):
        self.model = model
        self._sdk = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    @classmethod
    def check(cls, model: str, flag: str) -> None:
        """Nothing to check before a run: the SDK is a dependency, and a server may serve any model name."""

    async def complete(self, messages: list[Message], tools: list[ToolSchema], sampling: Sampling) -> Completion:
        try:
            response = await self._sdk.chat.completions.create(**self._request(messages, tools, sampling))
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            raise sdk_failure(exc) from None
        except (ValueError, RecursionError) as exc:
            raise (undecodable_answer(exc) or exc) from None
        return chat_completion(response)

    def _request(self, messages: list[Message], tools: list[ToolSchema], sampling: Sampling) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": messages, **sampling.params()}
        if tools:
            request["tools"] = function_tools(tools)
        return request

    async def aclose(self) -> None:
        await self._sdk.close()


def function_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    """The domain's tool schemas as chat-completions tools."""
    return [{"type": "function", "function": schema} for schema in tools]


def sdk_failure(exc: openai.APIError) -> Exception:
    """What an exception of the openai SDK means (litellm's derive from them too): a lost connection or a
    timeout is transient, an HTTP error is classified by its status, with the wait its headers ask for."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APIConnectionError) or not isinstance(status, int):
        return TransientError(f"{type(exc).__name__}: {exc}")
    code = exc.code if isinstance(getattr(exc, "code", None), str) else None
    return classify_status(status, exc.message, code, asked_wait(exc))


def chat_completion(response: Any, cost_usd: float | None = None) -> Completion:
    """A chat completion (the openai SDK's, or litellm's of the same shape) read field by field."""
    choices = getattr(response, "choices", None)
    if not choices or not isinstance(choices, list):
        raise TransientError("the endpoint answered with no choices")
    message = getattr(choices[0], "message", None)
    calls = getattr(message, "tool_calls", None) or []
    if message is None or not isinstance(calls, list):
        raise TransientError("the endpoint's answer is not a chat completion (no message, or tool_calls not a list)")
    usage = getattr(response, "usage", None)
    return Completion(
        text=as_text(getattr(message, "content", None)),
        tool_calls=tuple(_tool_call(call, i) for i, call in enumerate(calls)),
        input_tokens=token_count(getattr(usage, "prompt_tokens", None)),
        output_tokens=token_count(getattr(usage, "completion_tokens", None)),
        cost_usd=cost_usd,
    )


def _tool_call(call: Any, i: int) -> ModelToolCall:
    """A call as the model wrote it; a missing id gets one, missing name or arguments are empty."""
    function = getattr(call, "function", None)
    return ModelToolCall(
        as_text(getattr(call, "id", None)) or f"call_{i}",
        as_text(getattr(function, "name", None)) or "",
        as_text(getattr(function, "arguments", None)) or "",
    )
