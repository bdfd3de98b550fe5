"""What a simulated customer is to the orchestrator: it reads the agent's words and answers in words."""

from __future__ import annotations

import dataclasses
from typing import Protocol

from passhat.trajectory import UserStop


@dataclasses.dataclass(frozen=True)
class UserTurn:
    """A customer message; ``stop`` set when the customer ends the conversation with it."""

    text: str
    stop: UserStop | None = None


class UserSimulator(Protocol):
    async def respond(self, agent_text: str | None) -> UserTurn:
        """The customer's next message; ``agent_text`` is None for the opening message."""
        ...
