"""The way from a tool call to the backend in one conversation: (gateway) ⇄ (inner) ⇄ tools, as an Event.

A trial, a task's check and its ground-truth replay all take this path, so a call gets the same
result and leaves the same event in each. ``inner`` is where a caller (the harness's fault injector)
sits in front of the tools, without the guards knowing of it. With no guards, a call goes straight
to the environment through ``inner``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passhat.domains.toolkit import ToolFailure
from passhat.env import Environment
from passhat.env.tools import validate_args
from passhat.guard.confirmation import commitment_for
from passhat.guard.gateway import Gateway, Inner, Passage, _direct
from passhat.trajectory import Event


class ToolPath:
    def __init__(
        self,
        env: Environment,
        guards: Sequence[str] = (),
        *,
        run_id: str = "run",
        conversation_id: str = "conversation",
        inner: Inner | None = None,
    ):
        self.env = env
        self.audit: list[dict[str, Any]] = []  # the conversation's audit records, with the audit guard on
        self._inner = inner or _direct
        self._gateway = None
        if guards:
            self._gateway = Gateway(
                env,
                guards,
                run_id=run_id,
                conversation_id=conversation_id,
                gates=env.domain.gates,
                id_pattern=env.domain.id_pattern,
                audit=self.audit,
                inner=self._inner,
            )

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self._gateway.tool_schemas() if self._gateway else self.env.tool_schemas()

    def execute(self, name: str, args: Any, events: Sequence[Event] = (), call_id: str | None = None) -> Event:
        """One call; ``events`` is the conversation so far, whose messages the confirmation guard reads."""
        commitment = self._commitment(name, args)
        if self._gateway:
            messages = [(e.kind, e.text) for e in events if e.kind in ("user", "agent")]
            passage = self._gateway.call(name, args, messages, commitment=commitment)
        else:
            passage = Passage(*self._inner(name, args, lambda: self.env.execute(name, args)), commitment=commitment)
        return passage.event("tool", call_id)

    def _commitment(self, name: str, args: Any):
        """What a yes to this write agrees to, in the domain's terms, before it runs (None for other calls)."""
        spec = self.env.tools.get(name)
        if spec is None or not spec.meta.needs_confirmation:
            return None
        try:
            return commitment_for(spec, validate_args(spec, args), self.env.db, self.env.domain)
        except ToolFailure:
            return None

    def settle(self) -> list[Event]:
        """After the conversation: the simulated operator resolves the tickets the human gate opened."""
        if self._gateway is None:
            return []
        return [p.event("guard") for p in self._gateway.resolve_tickets() if p.guard]
