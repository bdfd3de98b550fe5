"""What a simulated customer is to the orchestrator: it reads the agent's words and answers in words."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Protocol

from passhat.customers.personas import Persona
from passhat.domains.model import Domain, Task
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


# What the orchestrator is given to make each trial's customer: ``--customer``'s choice, resolved by ``resolve_user``
UserFactory = Callable[[Domain, Task, Persona, random.Random], UserSimulator]
