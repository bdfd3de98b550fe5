"""The protocol between passhat and a team's own agent, plugged in as Python code (``--agent python:...``)
or served over HTTP (``--agent http://...``): what passhat hands the agent and what it takes back.

Both ways speak the same shapes, versioned as ``passhat.agent/1``: the conversation so far as OpenAI-style
chat messages (``user``, ``assistant`` with ``tool_calls``, ``tool`` with ``tool_call_id``), the tools as
OpenAI-style function schemas, and an answer holding a message for the customer, tool calls, or both.
Answers are validated here (pydantic, unknown fields refused): one that does not fit is the agent's own
failure, its turn with a note, and the trial is judged like any other. docs/agents.md is the reference.

The public part is ``AgentAnswer`` and ``ToolCallRequest`` (the answer), ``Trial``, ``ExternalAgent``
and ``AgentSession`` (the Python way) and ``AgentUnavailable``. ``Transcript`` is passhat's side: it keeps
the conversation an external agent is shown, as the LLM agent keeps its own.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from passhat.agents.base import AgentTurn, ToolCall
from passhat.trajectory import Event
from passhat.untrusted import escape_text, storable

PROTOCOL = "passhat.agent/1"
Message = dict[str, Any]  # one OpenAI-style chat message
NOTED_PROBLEMS = 3  # validation problems named in the note of an answer that does not fit


class ToolCallRequest(BaseModel):
    """One tool call of an answer. ``arguments``: an object, or JSON text as a model wrote it (passhat
    decodes it; text it cannot read gets an error result). ``id`` may be left out: passhat numbers it."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class AgentAnswer(BaseModel):
    """What an agent answers: a message for the customer, tool calls, or both (the calls run first, then the
    customer reads the message). No message and no calls is an empty message. ``protocol``, when given,
    must be the version passhat speaks."""

    model_config = ConfigDict(extra="forbid")

    protocol: Literal["passhat.agent/1"] | None = None
    message: str | None = None
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)


class AgentUnavailable(Exception):
    """Raise it from a Python agent that cannot answer for a reason that is not its own fault (its model's
    API is down): the trial is an infra error, not judged, and runs again on ``passhat run --resume``. Any
    other exception is the agent's own failure, and its trial is judged."""


ToolResult = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Trial:
    """One trial as a Python agent sees it. ``id`` is opaque and new for every trial; ``seed`` is the
    trial's own (derived from the run's seed: use it for the agent's sampling to make runs repeatable);
    ``tools`` are the function schemas ``respond`` is also given.

    ``call_tool(name, arguments)`` runs a tool from inside ``respond`` and returns its result (``{"status":
    "ok", "data": ...}`` or ``{"status": "error", "error": {...}}``): the call is recorded, guarded,
    fault-injected and graded exactly like a call the answer asks for. ``functions`` holds the same as one
    async callable per tool, taking its arguments by keyword.
    """

    id: str
    seed: int
    tools: list[dict[str, Any]]
    call_tool: Callable[[str, dict[str, Any] | str], Awaitable[ToolResult]]

    @property
    def functions(self) -> dict[str, Callable[..., Awaitable[ToolResult]]]:
        return {name: self._function(name) for name in (t["function"]["name"] for t in self.tools)}

    def _function(self, name: str) -> Callable[..., Awaitable[ToolResult]]:
        async def call(**arguments: Any) -> ToolResult:
            return await self.call_tool(name, arguments)

        call.__name__ = name
        return call


class AgentSession(Protocol):
    """An agent's state for one conversation (one trial)."""

    async def respond(self, conversation: list[Message], tools: list[dict[str, Any]]) -> AgentAnswer | dict[str, Any]:
        """The answer to the conversation so far, which ends with the customer's message or tool results."""
        ...


class ExternalAgent(Protocol):
    """What ``--agent python:module:factory`` names: ``factory()`` is called once per run and returns this."""

    def new_conversation(self, trial: Trial) -> AgentSession | Awaitable[AgentSession]:
        """A fresh session for each trial (return ``self`` if the agent keeps no state)."""
        ...


def function_schemas(tool_schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The domain's tool schemas ({name, description, parameters}) as OpenAI-style function schemas."""
    return [{"type": "function", "function": schema} for schema in tool_schemas]


class Transcript:
    """The conversation as an external agent is shown it: the customer's messages and the tool results
    from the trial's events, and the agent's own answers as it gave them."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._seen = 0
        self._numbered = 0

    def update(self, events: list[Event]) -> list[Event]:
        """Add what is new in ``events`` (the customer's messages, tool results); returns the new tool events."""
        new = [e for e in events[self._seen :] if e.kind in ("user", "tool")]
        self._seen = len(events)
        for e in new:
            if e.kind == "user":
                self.messages.append({"role": "user", "content": escape_text(e.text)})
            else:
                self.messages.append({"role": "tool", "tool_call_id": e.call_id, "content": json.dumps(e.result)})
        return [e for e in new if e.kind == "tool"]

    def answer(self, raw: Any) -> AgentTurn:
        """The agent's answer (an AgentAnswer or its dict) as its turn; one that does not fit the protocol is
        a turn with a note saying why."""
        try:
            answer = raw if isinstance(raw, AgentAnswer) else AgentAnswer.model_validate(raw)
        except ValidationError as exc:
            return self.note(f"the agent's answer does not fit {PROTOCOL}: {problems(exc)}")
        return self._turn(answer)

    def answer_json(self, body: bytes) -> AgentTurn:
        """As ``answer``, for JSON text (an HTTP body): text that is not JSON is a turn with a note too."""
        try:
            answer = AgentAnswer.model_validate_json(body)
        except ValidationError as exc:
            return self.note(f"the agent's answer does not fit {PROTOCOL}: {problems(exc)}")
        return self._turn(answer)

    def note(self, what: str) -> AgentTurn:
        """The agent's turn when it gave no usable answer: the customer reads passhat's note of what happened."""
        return self.add(AgentTurn(f"[passhat: {what}]"))

    def add(self, turn: AgentTurn) -> AgentTurn:
        """Put the agent's turn into the conversation, as the assistant message it is."""
        message: Message = {"role": "assistant", "content": turn.text}
        if turn.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments_text(c.arguments)}}
                for c in turn.tool_calls
            ]
        self.messages.append(message)
        return turn

    def _turn(self, answer: AgentAnswer) -> AgentTurn:
        calls = tuple(
            ToolCall(escape_text(c.id or "") or self.new_call_id(), escape_text(c.name), _escaped(c.arguments))
            for c in answer.tool_calls
        )
        return self.add(AgentTurn(None if answer.message is None else escape_text(answer.message), calls))

    def new_call_id(self) -> str:
        """An id for a call the agent gave none (unique within the trial)."""
        self._numbered += 1
        return f"passhat_call_{self._numbered}"


def problems(exc: ValidationError) -> str:
    """The first few problems of an answer, each with where it is (never the values, which may be huge)."""
    errors = exc.errors(include_input=False, include_url=False)
    named = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in errors[:NOTED_PROBLEMS])
    more = len(errors) - NOTED_PROBLEMS
    return escape_text(f"{named} (and {more} more)" if more > 0 else named)


def _escaped(arguments: dict[str, Any] | str) -> dict[str, Any] | str:
    """JSON text is escaped as the LLM agent escapes a model's (an object is checked by the orchestrator)."""
    return escape_text(arguments) if isinstance(arguments, str) else arguments


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(storable(arguments))
