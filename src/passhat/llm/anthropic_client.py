"""Claude through the native ``anthropic`` SDK (the optional extra ``passhat[anthropic]``).

The interface speaks the OpenAI chat shape; this module translates at the edge: system messages
become the ``system`` parameter, tool calls become ``tool_use`` blocks, tool results become
``tool_result`` blocks in a user turn, and consecutive turns of one role are merged, as the
Messages API requires alternating roles.
"""

from __future__ import annotations

import json
from typing import Any

from passhat.errors import UserError
from passhat.llm.errors import TransientError, classify_status
from passhat.llm.model import Completion, Message, ModelToolCall, Sampling, ToolSchema

DEFAULT_MAX_TOKENS = 4096  # the Messages API requires a bound on the answer's length


def load_sdk() -> Any:
    """The SDK module, imported only when a run names an anthropic model."""
    try:
        import anthropic
    except ImportError:
        raise UserError(
            "llm:anthropic/... models need the anthropic SDK, which is an optional extra: "
            "pip install 'passhat[anthropic]'."
        ) from None
    return anthropic


class AnthropicClient:
    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float):
        self.model = model
        self._sdk_module = load_sdk()
        self._sdk = self._sdk_module.AsyncAnthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    async def complete(self, messages: list[Message], tools: list[ToolSchema], sampling: Sampling) -> Completion:
        sdk = self._sdk_module
        try:
            response = await self._sdk.messages.create(**self._request(messages, tools, sampling))
        except sdk.APIConnectionError as exc:  # includes timeouts
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        except sdk.APIStatusError as exc:
            raise classify_status(exc.status_code, exc.message) from None
        return _completion(response)

    def _request(self, messages: list[Message], tools: list[ToolSchema], sampling: Sampling) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": sampling.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": to_anthropic(messages),
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [
                {"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]} for t in tools
            ]
        if sampling.temperature is not None:
            request["extra_body"] = {"temperature": sampling.temperature}
        return request

    async def aclose(self) -> None:
        await self._sdk.close()


def to_anthropic(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat-shape messages (without system ones) as alternating Messages-API turns of content blocks."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        role = "assistant" if message["role"] == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:  # an answer with no content (Claude sometimes ends a turn so): the API refuses empty turns
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message["role"] == "tool":
        return [{"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": message["content"]}]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    for call in message.get("tool_calls", ()):
        blocks.append(
            {"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": _input(call["function"]["arguments"])}
        )
    return blocks


def _input(arguments: str) -> dict[str, Any]:
    """tool_use input must be an object; Claude's own calls always are, so this only guards odd history."""
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _completion(response: Any) -> Completion:
    text = "".join(block.text for block in response.content if block.type == "text")
    calls = tuple(
        ModelToolCall(block.id, block.name, json.dumps(block.input)) for block in response.content if block.type == "tool_use"
    )
    return Completion(
        text=text or None,
        tool_calls=calls,
        input_tokens=response.usage.input_tokens or 0,
        output_tokens=response.usage.output_tokens or 0,
    )
