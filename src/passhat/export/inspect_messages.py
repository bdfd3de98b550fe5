"""A trial's conversation as Inspect AI chat messages: the customer is the user, the agent the assistant.

Events do not say which tool calls one model answer carried together, so each call becomes an assistant
message of its own, followed by the tool message holding the result the agent saw: the export never claims
that calls were made in parallel. What passhat adds to a call (the policy rules it broke, an injected
fault, a guard's decision, the terms a customer's yes agreed to) goes in the tool message's metadata.
Events after the conversation (a human operator resolving tickets) are no message: the agent never saw them.
"""

from __future__ import annotations

import json
from typing import Any

Message = dict[str, Any]
CALL_ANNOTATIONS = ("violations", "fault", "guard", "commitment")  # Event fields Inspect's schema has no place for


def chat_messages(events: list[dict[str, Any]]) -> list[Message]:
    """The messages of a stored trial's events, in order; ids are the event's position, unique in the trial."""
    messages: list[Message] = []
    for n, event in enumerate(events):
        if event["kind"] == "user":
            messages.append({"id": f"e{n}", "role": "user", "content": event["text"]})
        elif event["kind"] == "agent":
            messages.append({"id": f"e{n}", "role": "assistant", "content": event["text"]})
        elif event["kind"] == "tool":
            messages += _tool_exchange(event, f"e{n}")
    return messages


def last_agent_text(events: list[dict[str, Any]]) -> str:
    """What the agent said last: Inspect's "output" of a sample."""
    return next((e["text"] for e in reversed(events) if e["kind"] == "agent"), "")


def _tool_exchange(event: dict[str, Any], message_id: str) -> list[Message]:
    """The assistant message carrying one tool call, and the tool message with its result."""
    call_id = event.get("call_id") or f"{message_id}-call"
    call: dict[str, Any] = {"id": call_id, "function": event["name"], "type": "function"}
    args = event.get("args")
    if isinstance(args, dict):
        call["arguments"] = args
    else:  # arguments a model sent that are no JSON object: Inspect's place for them is a parse error
        call.update(arguments={}, parse_error=f"the arguments are not a JSON object: {json.dumps(args)}")
    result = event.get("result") or {}
    tool: Message = {
        "id": f"{message_id}-result",
        "role": "tool",
        "tool_call_id": call_id,
        "function": event["name"],
        "content": json.dumps(result),
    }
    if result.get("status") == "error":
        tool["error"] = {"type": "unknown", "message": str(result.get("error", {}).get("message", ""))}
    annotations = {key: event[key] for key in CALL_ANNOTATIONS if event.get(key)}
    if annotations:
        tool["metadata"] = annotations
    return [{"id": message_id, "role": "assistant", "content": "", "tool_calls": [call]}, tool]
