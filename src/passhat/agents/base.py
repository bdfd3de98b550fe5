"""What an agent under test is to the orchestrator: given the conversation so far, its next turn."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any, Protocol

from passhat.domains.model import Domain, Task
from passhat.trajectory import Event


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """A tool call as the agent asked for it. A str ``arguments`` is JSON text as a model wrote it: the
    orchestrator decodes it, and answers text it cannot read with an error result."""

    id: str
    name: str
    arguments: dict[str, Any] | str


@dataclasses.dataclass(frozen=True)
class AgentTurn:
    """Text for the customer, tool calls, or both. Tool calls run before the customer sees the text."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclasses.dataclass(frozen=True)
class AgentSetup:
    """Everything an agent may know at the start of a trial.

    ``task`` is there for the reference agents, which play a known plan; agents under test must not
    read it. ``db`` is the trial's backend, which the reference agents read (never write) to word
    proposals and pick their lookups and near misses.
    """

    domain: Domain
    task: Task
    tool_schemas: list[dict[str, Any]]
    policy: str
    rng: random.Random
    db: Any


class Agent(Protocol):
    async def act(self, events: list[Event]) -> AgentTurn:
        """The next turn, given every event so far (messages and tool results)."""
        ...


# What the orchestrator is given to make each trial's agent: ``--agent``'s choice, resolved by ``resolve_agent``
AgentFactory = Callable[[AgentSetup], Agent]


class AgentFailed(Exception):
    """The agent under test failed in a way its conversation cannot go on from: its code raised what is not an
    Exception (SystemExit, a KeyboardInterrupt of its own), or its service refused passhat's request (an HTTP
    4xx). The conversation ends there (``agent_error``, the message its cause) and the trial is judged: the
    failure is the agent's, as a customer left without an answer would see it."""
