"""The Gateway: guardrails in front of a set of tools, each switchable, inside or outside the harness.

For each write it applies, in order: bound confirmation, pre-write policy checks, idempotency (a
replay or a conflict answers without running anything), the human gate (a ticket, keeping the write's
idempotency key like any write); then runs the tool, with the idempotency record in the write's own
transaction and, with ``payments`` on, every charge and refund the tool makes passed through the
payment provider. Keys, the caller's or derived, belong to the conversation; payment keys derive from
the write's idempotency key, the ticket an operator carries out, or the call's number in its
conversation counted in the backend, never from anything one gateway instance keeps, so gateways
sharing a backend never share a key. Every call and every decision goes to the audit trail. Refusals
are error results the agent can act on, never exceptions. ``inner`` is where a caller (the harness's
fault injector) sits between the gateway and the tools.
"""

from __future__ import annotations

import copy
import dataclasses
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, TypeVar

from passhat.dialogue import Message
from passhat.dialogue.proposals import Commitment
from passhat.domains.model import Rule
from passhat.domains.payments import paying_through
from passhat.domains.toolkit import ToolFailure
from passhat.env import Execution, ToolRunner
from passhat.env.tools import Within, error, spec_for, validate_args
from passhat.guard import gate, idempotency
from passhat.guard.audit import AuditLog
from passhat.guard.confirmation import commitment_for, unconfirmed
from passhat.guard.payments import KeyedChannel, PaymentProvider, count_calls, next_call, provider_for
from passhat.trajectory import Event

GUARDS: tuple[str, ...] = ("idempotency", "confirmation", "policy", "payments", "human_gate", "audit")
KEY_ARG = "idempotency_key"

T = TypeVar("T")
Fault = dict[str, Any]
AuditSink = AuditLog | list[dict[str, Any]]  # anything with append(record)
Inner = Callable[[str, Any, Callable[[], Execution]], tuple[Execution, Fault | None]]


def _direct(name: str, args: Any, run: Callable[[], Execution]) -> tuple[Execution, Fault | None]:
    return run(), None


@dataclasses.dataclass(frozen=True)
class Passage:
    """One call through the gateway: what the agent gets (``execution.result``), and why."""

    execution: Execution
    fault: Fault | None = None
    guard: dict[str, Any] | None = None  # set when a guard answered instead of the tool
    commitment: Commitment | None = None  # what a yes to this write agrees to, as the backend stood before it

    def event(self, kind: Literal["tool", "guard"] = "tool", call_id: str | None = None) -> Event:
        """The passage as a trial event; an operator's decision (``guard``) says which ticket it closed."""
        ex, g = self.execution, self.guard or {}
        text = (
            f"ticket {g['ticket_id']} {g['status']} by {g.get('by', g['owner'])}" if kind == "guard" and "ticket_id" in g else ""
        )
        violations = tuple({"rule": v.rule, "reason": v.reason} for v in ex.violations)
        commitment = self.commitment.to_dict() if self.commitment else None
        return Event(
            kind,
            text,
            call_id=call_id,
            name=ex.name,
            args=ex.args,
            result=ex.result,
            violations=violations,
            fault=self.fault,
            guard=self.guard,
            commitment=commitment,
        )


class Gateway:
    def __init__(
        self,
        runner: ToolRunner,
        guards: Iterable[str] = GUARDS,
        *,
        run_id: str = "run",
        conversation_id: str = "conversation",
        gates: tuple[Rule, ...] = (),
        id_pattern: str | None = None,
        audit: AuditSink | None = None,
        inner: Inner | None = None,
        payments: PaymentProvider | None = None,
    ):
        self.enabled = frozenset(guards)
        if unknown := self.enabled - set(GUARDS):
            raise ValueError(f"unknown guards {sorted(unknown)}; the guards are {', '.join(GUARDS)}")
        self.runner, self.gates, self.inner = runner, gates, inner or _direct
        self.id_pattern = id_pattern  # entity ids in text, so a proposal naming another entity binds nothing
        self.run_id, self.conversation_id = run_id, conversation_id
        self.audit = (AuditLog() if audit is None else audit) if "audit" in self.enabled else None
        self._lock = threading.RLock()  # re-entered by resolve_tickets
        self._made: list[Commitment] = []  # the confirmed writes that went through, which later proposals may report
        self.payments = (payments or provider_for("sandbox")) if "payments" in self.enabled else None
        if self.payments is not None:
            self.payments.open(runner.db)
            count_calls(runner.db)
        if "idempotency" in self.enabled:
            idempotency.ensure_table(runner.db)
        if "human_gate" in self.enabled:
            gate.ensure_table(runner.db)

    @classmethod
    def over(
        cls, functions: Iterable[Callable[..., Any]], db: sqlite3.Connection, rules: Iterable[Rule] = (), **options: Any
    ) -> Gateway:
        """A gateway over plain ``@tool`` functions and a SQLite connection of your own."""
        specs = {spec.name: spec for spec in map(spec_for, functions)}
        return cls(ToolRunner(specs, db, tuple(rules)), **options)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools' schemas; with idempotency on, each write takes an optional idempotency key."""
        schemas = self.runner.tool_schemas()
        if "idempotency" not in self.enabled:
            return schemas
        out = []
        for schema in schemas:
            if self.runner.tools[schema["name"]].meta.write:
                schema = copy.deepcopy(schema)
                schema["parameters"].setdefault("properties", {})[KEY_ARG] = {
                    "type": "string",
                    "description": "Optional: a key that makes retrying this exact call safe.",
                }
            out.append(schema)
        return out

    def call(
        self,
        name: str,
        args: Any,
        messages: Sequence[Message] = (),
        idempotency_key: str | None = None,
        commitment: Commitment | None = None,
    ) -> Passage:
        """One tool call; ``messages`` is the conversation so far as (role, text), for confirmation.

        ``commitment``: what a yes to this write agrees to, when the caller knows better than the tool's
        confirm keys (the harness asks the domain); it is recorded on the passage either way.
        """
        with self._lock:
            if isinstance(args, dict) and KEY_ARG in args:
                args = dict(args)
                in_args = args.pop(KEY_ARG)
                idempotency_key = idempotency_key or in_args
            try:
                key = idempotency.given_key(idempotency_key)
            except TypeError as exc:
                passage = Passage(Execution(name, args, error("invalid_arguments", str(exc))))
                self._audit(passage)
                return passage
            spec = self.runner.tools.get(name)
            if commitment is None and spec is not None and spec.meta.needs_confirmation:
                try:
                    commitment = commitment_for(spec, validate_args(spec, args))
                except ToolFailure:
                    pass  # the runner reports the bad arguments
            passage = dataclasses.replace(self._call(name, args, messages, key, commitment), commitment=commitment)
            if commitment and passage.execution.result.get("status") == "ok":
                self._made.append(commitment)
            self._audit(passage)
            return passage

    def _call(self, name: str, args: Any, messages: Sequence[Message], key: str | None, commitment: Commitment | None) -> Passage:
        spec = self.runner.tools.get(name)
        if spec is None or not spec.meta.write:
            return self._run(name, args, None)
        try:
            clean = validate_args(spec, args)
        except ToolFailure:
            return self._run(name, args, None)  # the runner reports the bad arguments
        if (
            "confirmation" in self.enabled
            and commitment
            and (refusal := unconfirmed(commitment, messages, self.id_pattern, self._made))
        ):
            return self._refused("confirmation", name, clean, refusal)
        if "policy" in self.enabled and (broken := self.runner.check_rules(name, clean)):
            reason = error("policy_violation", f"refused under policy rule {broken[0].rule}: {broken[0].reason}")
            return self._refused("policy", name, clean, reason, rule=broken[0].rule)
        if "idempotency" not in self.enabled:
            return self._gated_or_run(name, clean, None, None)
        key = key or idempotency.derive_key(self.run_id, self.conversation_id, name, clean)
        stored_as = idempotency.scoped(self.run_id, self.conversation_id, key)
        if (earlier := idempotency.stored(self.runner.db, stored_as)) is not None:
            return self._replayed(name, clean, key, earlier)
        try:
            return self._gated_or_run(
                name, clean, stored_as, idempotency.remember(stored_as, idempotency.fingerprint(name, clean))
            )
        except sqlite3.IntegrityError:  # a concurrent call with this key committed first: this one rolled back
            if (earlier := idempotency.stored(self.runner.db, stored_as)) is None:
                raise
            return self._replayed(name, clean, key, earlier)

    def _gated_or_run(self, name: str, args: dict[str, Any], stored_as: str | None, within: Within | None) -> Passage:
        """A ticket when a gate rule marks the call, else the call itself; ``within`` keeps the key of either."""
        if "human_gate" in self.enabled and (hit := gate.gated_by(self.runner, self.gates, name, args)):
            ticket = gate.open_ticket(self.runner.db, name, args, *hit, within)
            return Passage(
                Execution(name, args, gate.shown(ticket)), guard={"guard": "human_gate", "decision": "ticket", **ticket}
            )
        return self._run(name, args, within, stored_as)

    def _run(self, name: str, args: Any, within: Within | None, payment_key: str | None = None) -> Passage:
        execution, fault = self.inner(
            name, args, lambda: self._paid(lambda: self.runner.execute(name, args, within), payment_key)
        )
        return Passage(execution, fault)

    def _paid(self, run: Callable[[], T], payment_key: str | None = None) -> T:
        """``run()`` with its money movements routed through the payment provider, when payments are on;
        keyed by ``payment_key``, else by the call's number in its conversation."""
        if self.payments is None:
            return run()
        with paying_through(KeyedChannel(self.payments, lambda db: payment_key or self._numbered_call(db))):
            return run()

    def _numbered_call(self, db: sqlite3.Connection) -> str:
        scope = idempotency.scoped(self.run_id, self.conversation_id)
        return f"{scope}/call/{next_call(db, scope)}"

    def _refused(self, guard: str, name: str, args: dict[str, Any], result: dict[str, Any], **detail: str) -> Passage:
        return Passage(Execution(name, args, result), guard={"guard": guard, "decision": "refused", **detail})

    def _replayed(self, name: str, args: dict[str, Any], key: str, earlier: idempotency.Stored) -> Passage:
        if earlier.fingerprint != idempotency.fingerprint(name, args):
            return self._refused("idempotency", name, args, idempotency.conflict(key, name), decision="conflict", key=key)
        return Passage(Execution(name, args, earlier.result), guard={"guard": "idempotency", "decision": "replayed", "key": key})

    def open_tickets(self) -> list[gate.GateTicket]:
        """The human gate's open tickets, in filing order (none with the gate off)."""
        if "human_gate" not in self.enabled:
            return []
        with self._lock:
            return gate.open_tickets(self.runner.db)

    def close_ticket(self, ticket: gate.GateTicket, verdict: gate.Verdict) -> Passage:
        """An operator's verdict carried out (see ``gate.close``), as the passage of its decision."""
        with self._lock:
            done, execution = gate.close(self.runner, ticket, verdict, self._carry_out)
            execution = execution or Execution(ticket.tool, None, error("rejected", done["note"]))
            passage = Passage(execution, guard={"guard": "human_gate", "decision": f"operator_{done['status']}", **done})
            self._audit(passage)
            return passage

    def resolve_tickets(self) -> list[Passage]:
        """The simulated operator's pass over the open tickets, in one hold of the gateway."""
        with self._lock:
            return [self.close_ticket(t, gate.SIMULATED.verdict(t)) for t in self.open_tickets()]

    def _carry_out(self, number: int, name: str, args: dict[str, Any]) -> Execution:
        """The operator runs ticket ``number``: its money is keyed by the ticket, which the backend numbered."""
        return self._paid(lambda: self.runner.execute(name, args), f"ticket/{number}")

    def _audit(self, passage: Passage) -> None:
        if self.audit is None:
            return
        ex = passage.execution
        self.audit.append(
            {
                "conversation": self.conversation_id,
                "tool": ex.name,
                "args": ex.args,
                "status": ex.result["status"],
                "decision": (passage.guard or {}).get("decision", "called"),
                "guard": (passage.guard or {}).get("guard"),
                "fault": (passage.fault or {}).get("class"),
            }
        )
