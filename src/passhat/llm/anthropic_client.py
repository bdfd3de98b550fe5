"""Claude through the native ``anthropic`` SDK (the optional extra ``passhat[anthropic]``).

The interface speaks the OpenAI chat shape; this module translates at the edge: system messages
become the ``system`` parameter, tool calls become ``tool_use`` blocks, tool results become
``tool_result`` blocks in a user turn, and consecutive turns of one role are merged, as the
Messages API requires alternating roles. As with the OpenAI client, the answer is read field by
field: a broken envelope is the endpoint's failure, any value the model wrote is taken as text.
"""

from __future__ import annotations

import json
from typing import Any

from passhat.llm.conversation import Conversation
from passhat.llm.errors import TransientError, asked_wait, classify_status, undecodable_answer
from passhat.llm.extras import import_extra
from passhat.llm.model import Completion, Message, ModelToolCall, Sampling, ToolSchema, as_text, json_text, token_count
from passhat.untrusted import storable

DEFAULT_MAX_TOKENS = 4096  # the Messages API requires a bound on the answer's length


class AnthropicClient:
    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float, connections: int):
        """``connections`` is bounded by the hub already; the SDK's pool (1,000 connections) holds as many."""
        self.model = model
        self._sdk_module = import_extra("anthropic")
        self._sdk = self._sdk_module.AsyncAnthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    @classmethod
    def check(cls, model: str, flag: str) -> None:
        """The SDK is an optional extra: say it is missing before the run, not in every trial."""
        import_extra("anthropic")

    async def complete(self, conversation: Conversation, tools: list[ToolSchema], sampling: Sampling) -> Completion:
        sdk = self._sdk_module
        try:
            response = await self._sdk.messages.create(**self._request(conversation.messages, tools, sampling))
        except sdk.APIConnectionError as exc:  # includes timeouts
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        except sdk.APIStatusError as exc:
            raise classify_status(exc.status_code, exc.message, retry_after=asked_wait(exc)) from None
        except (ValueError, RecursionError) as exc:
            raise (undecodable_answer(exc) or exc) from None
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
            {
                "type": "tool_use",
                "id": call["id"],
                "name": call["function"]["name"],
                "input": _input(call["function"]["arguments"]),
            }
        )
    return blocks


def _input(arguments: str) -> dict[str, Any]:
    """tool_use input must be an object: a call whose arguments are not one (the model's own malformed
    call, already answered with an error result) goes back with none. Text that is not text (a lone
    surrogate the model wrote as a JSON escape) goes back escaped: the SDK cannot encode it."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return {}
    return storable(value) if isinstance(value, dict) else {}


def _completion(response: Any) -> Completion:
    content = getattr(response, "content", None)
    if not isinstance(content, list):
        raise TransientError("the endpoint's answer is not a message (its content is not a list of blocks)")
    blocks = [(getattr(block, "type", None), block) for block in content]
    text = "".join(as_text(getattr(block, "text", None)) or "" for kind, block in blocks if kind == "text")
    calls = tuple(_tool_call(block, i) for i, (kind, block) in enumerate(blocks) if kind == "tool_use")
    usage = getattr(response, "usage", None)
    return Completion(
        text=text or None,
        tool_calls=calls,
        input_tokens=token_count(getattr(usage, "input_tokens", None)),
        output_tokens=token_count(getattr(usage, "output_tokens", None)),
    )


def _tool_call(block: Any, i: int) -> ModelToolCall:
    """A tool_use block as a call whose arguments are the JSON text of its input, whatever it holds."""
    return ModelToolCall(
        as_text(getattr(block, "id", None)) or f"toolu_{i}",
        as_text(getattr(block, "name", None)) or "",
        "" if (arguments := getattr(block, "input", None)) is None else json_text(arguments),
    )
