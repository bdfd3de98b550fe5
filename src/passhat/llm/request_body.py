"""The JSON body of a chat-completions request, put together from text written once where it can be.

A domain's tool schemas are the same objects in every trial of a run and make about three quarters of
an agent's request (16 retail tools: 9 KB of JSON, 0.2 ms to write each time), so their JSON text is
written once per set of schemas and reused. The messages come as JSON text already, each written once when
it joined the conversation (``conversation.py``).
"""

from __future__ import annotations

from typing import Any

from passhat.llm.conversation import Conversation, dumps
from passhat.llm.model import Sampling, ToolSchema

MAX_TOOL_SETS = 64  # distinct sets of schemas remembered: a run has one per domain and guard set, this is a bound


class RequestBody:
    """Writes the bodies of one model's requests."""

    def __init__(self, model: str):
        self._head = '{"model":' + dumps(model) + ',"messages":'
        self._tools: dict[tuple[int, ...], tuple[list[ToolSchema], str]] = {}

    def encode(self, conversation: Conversation, tools: list[ToolSchema], sampling: Sampling) -> bytes:
        parts = [self._head, conversation.json()]
        for name, value in sampling.params().items():
            parts.append(f',"{name}":{dumps(value)}')
        if tools:
            parts.append(',"tools":' + self._tool_text(tools))
        parts.append("}")
        return "".join(parts).encode()

    def _tool_text(self, tools: list[ToolSchema]) -> str:
        """The schemas as chat-completions tools, written once per set of schema objects (the schemas are
        kept with their text, so the identities that key it cannot be reused by other objects)."""
        key = tuple(map(id, tools))
        if (known := self._tools.get(key)) is not None:
            return known[1]
        if len(self._tools) >= MAX_TOOL_SETS:
            self._tools.clear()
        text = dumps(function_tools(tools))
        self._tools[key] = (list(tools), text)
        return text


def function_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    """The domain's tool schemas as chat-completions tools."""
    return [{"type": "function", "function": schema} for schema in tools]
