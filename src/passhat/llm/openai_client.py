"""Chat completions with tools over the official ``openai`` SDK: OpenAI itself, and through ``base_url``
every server that speaks the same protocol (vLLM, Ollama, llama.cpp's server, OpenRouter…).

The SDK's own retries are off: retrying is ``retry.py``'s job, so that every provider retries alike.
"""

from __future__ import annotations

from typing import Any

import openai

from passhat.llm.errors import TransientError, classify_status
from passhat.llm.model import Completion, Message, ModelToolCall, Sampling, ToolSchema

class OpenAIClient:
    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float):
        self.model = model
        self._sdk = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    async def complete(self, messages: list[Message], tools: list[ToolSchema], sampling: Sampling) -> Completion:
        try:
            response = await self._sdk.chat.completions.create(**self._request(messages, tools, sampling))
        except openai.APIConnectionError as exc:  # includes timeouts
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        except openai.APIStatusError as exc:
            code = exc.code if isinstance(getattr(exc, "code", None), str) else None
            raise classify_status(exc.status_code, exc.message, code) from None
        return _completion(response)

    def _request(self, messages: list[Message], tools: list[ToolSchema], sampling: Sampling) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = [{"type": "function", "function": schema} for schema in tools]
        for name in ("temperature", "seed", "max_tokens"):
            if (value := getattr(sampling, name)) is not None:
                request[name] = value
        return request

    async def aclose(self) -> None:
        await self._sdk.close()


def _completion(response: Any) -> Completion:
    if not response.choices:
        raise TransientError("the endpoint answered with no choices")
    message = response.choices[0].message
    calls = tuple(
        ModelToolCall(call.id or f"call_{i}", call.function.name, call.function.arguments or "")
        for i, call in enumerate(message.tool_calls or ())
    )
    usage = response.usage
    return Completion(
        text=message.content,
        tool_calls=calls,
        input_tokens=(usage.prompt_tokens or 0) if usage else 0,
        output_tokens=(usage.completion_tokens or 0) if usage else 0,
    )
