"""The way from a tool call to the backend in one conversation: (gateway) ⇄ (inner) ⇄ tools, as an Event.

A trial, a task's check and its ground-truth replay all take this path, so a call gets the same
result and leaves the same event in each. ``inner`` is where a caller (the harness's fault injector)
sits in front of the tools, without the guards knowing of it. With no guards, a call goes straight
to the environment through ``inner``. The conversation's ``operator`` hears of each ticket the human gate
opens, with what the customer asked and what the agent read before it, and decides it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from passhat.domains.toolkit import ToolFailure
from passhat.env import Environment
from passhat.env.tools import validate_args
from passhat.guard import gate
from passhat.guard.confirmation import commitment_for
from passhat.guard.gate import SIMULATED, GateTicket, Operator, Verdict
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
        operator: Operator = SIMULATED,
    ):
        self.env, self.operator = env, operator
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
            if passage.guard and passage.guard["decision"] == "ticket":
                self._file(passage.guard["ticket_id"], events)
        else:
            passage = Passage(*self._inner(name, args, lambda: self.env.execute(name, args)), commitment=commitment)
        return passage.event("tool", call_id)

    def _file(self, ticket_id: str, events: Sequence[Event]) -> None:
        """Hand the operator the ticket just opened, with the customer's words and the agent's reads before it."""
        request = [e.text for e in events if e.kind == "user"]
        evidence = [
            {"tool": e.name, "args": e.args, "result": e.result}
            for e in events
            if e.kind == "tool" and e.name in self.env.tools and not self.env.tools[e.name].meta.write
        ]
        self.operator.filed(gate.ticket(self.env.db, ticket_id), request, evidence)

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
        """The tickets the operator has decided by now, closed (the simulated operator decides them all at once)."""
        if self._gateway is None:
            return []
        return [self._close(t, v) for t in self._gateway.open_tickets() if (v := self.operator.verdict(t))]

    async def settle_waiting(self) -> list[Event]:
        """After the conversation: every open ticket closed, waiting for the operator's decisions (all at once)."""
        if self._gateway is None:
            return []
        tickets = self._gateway.open_tickets()
        now = [self.operator.verdict(t) for t in tickets]
        waited = iter(await asyncio.gather(*(self.operator.wait(t) for t, v in zip(tickets, now, strict=True) if v is None)))
        return [self._close(t, v or next(waited)) for t, v in zip(tickets, now, strict=True)]

    def _close(self, ticket: GateTicket, verdict: Verdict) -> Event:
        passage = self._gateway.close_ticket(ticket, verdict)  # type: ignore[union-attr]  # only with a gateway
        if verdict.approved:
            self.operator.carried_out(ticket, passage.guard["note"])  # type: ignore[index]  # a decision's passage
        return passage.event("guard")
