"""The way from an agent's tool call to the backend in one trial: (guard) ⇄ (faults) ⇄ tools.

The orchestrator composes the two layers here, so ``guard`` and ``faults`` stay unaware of each
other and of agents. With neither switched on, a call goes straight to the environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passhat.env import Environment
from passhat.faults import FaultInjector
from passhat.guard import Gateway, Passage
from passhat.trajectory import Event


class ToolPath:
    def __init__(
        self, env: Environment, seed: int, faults: dict[str, float], guards: Sequence[str], run_id: str, conversation_id: str
    ):
        self.env = env
        self.audit: list[dict[str, Any]] = []  # this trial's audit records, chained into the run's log by the runner
        self._faults = FaultInjector(faults, seed, env) if faults else None
        self._gateway = None
        if guards:
            self._gateway = Gateway(
                env, guards, run_id=run_id, conversation_id=conversation_id, gates=env.domain.gates,
                audit=self.audit if "audit" in guards else None, inner=self._faults.execute if self._faults else None,
            )

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self._gateway.tool_schemas() if self._gateway else self.env.tool_schemas()

    def execute(self, call_id: str, name: str, args: Any, events: list[Event]) -> Event:
        if self._gateway:
            messages = [(e.kind, e.text) for e in events if e.kind in ("user", "agent")]
            passage = self._gateway.call(name, args, messages)
        elif self._faults:
            passage = Passage(*self._faults.execute(name, args, lambda: self.env.execute(name, args)))
        else:
            passage = Passage(self.env.execute(name, args))
        return passage.event("tool", call_id)

    def settle(self) -> list[Event]:
        """After the conversation: the simulated operator resolves the tickets the human gate opened."""
        if self._gateway is None:
            return []
        return [p.event("guard") for p in self._gateway.resolve_tickets() if p.guard]
