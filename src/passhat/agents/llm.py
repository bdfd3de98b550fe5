"""The LLM agent: a model behind an OpenAI-compatible or Anthropic endpoint, given the domain's written
policy and tools, talking to the customer in plain text.

It keeps its own transcript and adds only what is new at each turn: the customer's messages and
the results of its tool calls, each written as JSON once, when added. Whatever the model writes is its
own responsibility and is judged: tool calls go to the orchestrator as the model wrote them, and
arguments that are not JSON, that Python cannot read, or that do not fit the tool's schema come back as
an error result, so the model can read what was wrong and call again. Characters that are not text are escaped visibly before the
answer goes anywhere, and an answer that cannot be read at all is the agent's turn, with a note
saying so.
"""

from __future__ import annotations

import dataclasses
import json

from passhat.agents.base import AgentSetup, AgentTurn, ToolCall
from passhat.llm import Completion, Conversation, Endpoint, Message, ModelHub, ModelRef, UnreadableAnswer
from passhat.trajectory import Event
from passhat.untrusted import escape_text

INSTRUCTIONS = """\
You are a customer support agent in a live chat. The customer sees only the plain text you write; \
your tool calls and their results stay hidden from them, so tell them in words what you found or did.
Use the tools to look things up and to make changes. Do not make up facts, ids or amounts: state \
only what a tool returned or what the policy says. A tool result marked as an error explains what \
went wrong; fix the call and try again when that makes sense.
When the customer's request is handled, or cannot be, say so and close the conversation politely."""


def system_prompt(policy: str | None) -> str:
    """Our short instructions, then the domain's policy unless it is left out (``--no-policy``)."""
    if not policy:
        return INSTRUCTIONS
    return f"{INSTRUCTIONS}\n\nThe business's policy, which you must follow:\n\n{policy.strip()}"


def event_messages(events: list[Event]) -> list[Message]:
    """What the model has not seen yet: customer messages and tool results (its own words it has)."""
    messages: list[Message] = []
    for e in events:
        if e.kind == "user":
            messages.append({"role": "user", "content": escape_text(e.text)})
        elif e.kind == "tool":
            messages.append({"role": "tool", "tool_call_id": e.call_id, "content": json.dumps(e.result)})
    return messages


class LLMAgent:
    def __init__(self, setup: AgentSetup, endpoint: Endpoint, with_policy: bool):
        self._endpoint = endpoint
        self._tools = setup.tool_schemas
        self._conversation = Conversation([{"role": "system", "content": system_prompt(setup.policy if with_policy else None)}])
        self._seen = 0
        self._seed = setup.rng.getrandbits(31)  # the trial's own: sent to the model and part of the cache key

    async def act(self, events: list[Event]) -> AgentTurn:
        self._conversation.extend(event_messages(events[self._seen :]))
        self._seen = len(events)
        try:
            completion = (await self._endpoint.complete(self._conversation, self._tools, self._seed)).escaped()
        except UnreadableAnswer as exc:
            completion = Completion(f"[passhat: the agent's model sent an answer that cannot be read: {exc}]")
        self._conversation.append(completion.as_message())
        calls = tuple(
            ToolCall(c.id, c.name, c.arguments) for c in completion.tool_calls
        )  # JSON text: the orchestrator decodes it
        return AgentTurn(completion.text, calls)


@dataclasses.dataclass(frozen=True)
class LLMAgentFactory:
    """Makes one LLMAgent per trial. ``hub`` is None only while a configuration is being checked."""

    ref: ModelRef
    hub: ModelHub | None
    with_policy: bool = True

    def __call__(self, setup: AgentSetup) -> LLMAgent:
        if self.hub is None:
            raise RuntimeError("an LLM agent was started without the run's model hub")
        return LLMAgent(setup, self.hub.endpoint("agent"), self.with_policy)
