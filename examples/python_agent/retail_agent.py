"""A small rule-following support agent for passhat's retail domain, plugged in as Python code.

It does one job, the way the store's policy asks: cancel a pending order. It verifies the customer by
email, looks the order up, makes sure it is theirs and still pending, asks for one of the two accepted
reasons, proposes the exact cancellation, and cancels only after a clear yes. Anything else it declines
politely, so trials of other tasks fail: that is what passhat is there to show.

``decide(conversation)`` is the whole agent, a pure function of the conversation so far (OpenAI-style
messages), so the same rules can also be served over HTTP (examples/http_agent). The Python session
below runs the lookups itself, inside its turn, through ``trial.call_tool``, and leaves the write to its
answer: passhat records, guards and grades both kinds of call alike.

    passhat run --agent python:examples.python_agent.retail_agent:create_agent --tasks retail-001,retail-026
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ORDER_ID = re.compile(r"#R\d+")
YES = re.compile(r"\b(yes|yep|yeah|sure|go ahead|please do|do it|confirm(?:ed)?|correct|ok(?:ay)?)\b", re.I)
NO = re.compile(r"\b(no|nope|not|don'?t|do not|wait|stop|cancel that)\b", re.I)
REASONS = {
    "no longer needed": re.compile(r"no longer need|(?:don'?t|do not) need|not needed", re.I),
    "ordered by mistake": re.compile(r"by (?:mistake|accident)|accidental", re.I),
}
PROPOSAL_END = "Shall I go ahead? Please answer yes or no."
ASK_REASON = 'What is the reason for the cancellation? I can record either "no longer needed" or "ordered by mistake".'
ONLY_REASONS = (
    'I\'m sorry, I can only cancel an order with the reason "no longer needed" or "ordered by mistake"; I can\'t record '
    "another reason. Would one of these fit?"
)
READS = frozenset({"find_customer_by_email", "get_order"})
MAX_LOOKUPS = 8  # lookups one turn runs before it answers


@dataclass
class Facts:
    """What the conversation has established so far."""

    said: str = ""  # everything the customer wrote
    last_user: str = ""
    last_assistant: str = ""
    customer_id: str | None = None
    emails_tried: set[str] = field(default_factory=set)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)  # order id -> get_order's result
    cancelled: dict[str, Any] | None = None  # cancel_order's result


def read(conversation: list[dict[str, Any]]) -> Facts:
    facts = Facts()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for message in conversation:
        if message["role"] == "user":
            facts.said += " " + message["content"]
            facts.last_user = message["content"]
        elif message["role"] == "assistant":
            facts.last_assistant = message.get("content") or facts.last_assistant
            for call in message.get("tool_calls") or ():
                calls[call["id"]] = (call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"))
        elif message["role"] == "tool" and message["tool_call_id"] in calls:
            name, args = calls[message["tool_call_id"]]
            result = json.loads(message["content"])
            if name == "find_customer_by_email":
                facts.emails_tried.add(args.get("email", ""))
                facts.customer_id = result.get("data") if result["status"] == "ok" else facts.customer_id
            elif name == "get_order":
                facts.orders[args.get("order_id", "")] = result
            elif name == "cancel_order":
                facts.cancelled = result
    return facts


def decide(conversation: list[dict[str, Any]]) -> dict[str, Any]:
    """The next answer: ``{"message": ..., "tool_calls": [...]}``."""
    facts = read(conversation)
    if facts.cancelled is not None:
        return _after_cancelling(facts)
    if facts.customer_id is None:
        return _verify(facts)
    order_ids = ORDER_ID.findall(facts.said)
    if not order_ids:
        return say("Which order would you like to cancel? Please tell me its order number (it starts with #R).")
    order_id = order_ids[-1]
    if order_id not in facts.orders:
        return call("get_order", order_id=order_id)
    result = facts.orders[order_id]
    if result["status"] != "ok" or result["data"]["customer_id"] != facts.customer_id:
        return say(f"I could not find order {order_id} on your account. Could you check the order number?")
    order = result["data"]
    if "cancel" not in facts.said.lower():
        return say("I'm sorry, in this chat I can only help with cancelling a pending order.")
    if order["status"] != "pending":
        return say(
            f"I'm sorry, order {order_id} is {order['status']}, and only pending orders can be cancelled. "
            "If it has been delivered, I can help you return or exchange its items instead."
        )
    reason = next((r for r, words in REASONS.items() if words.search(facts.said)), None)
    if reason is None:
        return say(ONLY_REASONS if facts.last_assistant in (ASK_REASON, ONLY_REASONS) else ASK_REASON)
    proposal = _proposal(order, reason)
    if facts.last_assistant.endswith(PROPOSAL_END) and _is_yes(facts.last_user):
        return call("cancel_order", order_id=order_id, reason=reason)
    if facts.last_assistant.endswith(PROPOSAL_END):
        return say("All right, I have not changed anything. Is there anything else I can help you with?")
    return say(proposal)


def _is_yes(text: str) -> bool:
    """A clear yes: yes-words, no no-words, and no question."""
    return bool(YES.search(text)) and not NO.search(text) and "?" not in text


def _verify(facts: Facts) -> dict[str, Any]:
    emails = EMAIL.findall(facts.said)
    if emails and emails[-1] not in facts.emails_tried:
        return call("find_customer_by_email", email=emails[-1])
    if emails:
        return say("I could not find an account with that email address. Could you check it and tell me again?")
    return say("I can help with that. First I need to verify your identity: what is the email address on your account?")


def _proposal(order: dict[str, Any], reason: str) -> str:
    items = " and ".join(
        f"{i['item_id']} ({i['product_name']}, {', '.join(f'{k}: {v}' for k, v in i['options'].items())})" for i in order["items"]
    )
    refunds = " and ".join(f"${p['amount']:.2f} to {p['payment_method_id']}" for p in order["payments"] if p["kind"] == "payment")
    return f'I can cancel order {order["order_id"]} ({items}) with the reason "{reason}", and refund {refunds}. {PROPOSAL_END}'


def _after_cancelling(facts: Facts) -> dict[str, Any]:
    result = facts.cancelled or {}
    if result.get("status") != "ok":
        problem = result.get("error", {}).get("message", "it did not go through")
        return say(f"I'm sorry, I could not cancel the order: {problem}.")
    if "has been cancelled" in facts.last_assistant:
        return say("You're welcome. Have a nice day!")
    return say(
        f"Done: order {result['data']['order_id']} has been cancelled. Gift card refunds arrive at once; card and PayPal "
        "refunds take 5 to 7 business days. Is there anything else I can help you with?"
    )


def say(message: str) -> dict[str, Any]:
    return {"message": message, "tool_calls": []}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"message": None, "tool_calls": [{"name": name, "arguments": arguments}]}


# --- the Python way: passhat calls create_agent() once per run, new_conversation() once per trial ---------


class RetailConversation:
    """One conversation. Lookups run here, through the trial's callable; the write goes into the answer."""

    def __init__(self, trial: Any):
        self.trial = trial

    async def respond(self, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        for _ in range(MAX_LOOKUPS):
            answer = decide(conversation)
            lookups = [c for c in answer["tool_calls"] if c["name"] in READS]
            if not lookups:
                return answer
            for number, lookup in enumerate(lookups):
                result = await self.trial.call_tool(lookup["name"], lookup["arguments"])
                conversation = [*conversation, *_as_messages(f"lookup-{len(conversation)}-{number}", lookup, result)]
        return say("I'm sorry, I could not find what I was looking for. Could you tell me again what you need?")


class RetailAgent:
    def new_conversation(self, trial: Any) -> RetailConversation:
        return RetailConversation(trial)


def create_agent() -> RetailAgent:
    return RetailAgent()


def _as_messages(call_id: str, lookup: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    """A lookup and its result as the two chat messages passhat will also show in the next conversation."""
    function = {"name": lookup["name"], "arguments": json.dumps(lookup["arguments"])}
    return [
        {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": function}]},
        {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)},
    ]
