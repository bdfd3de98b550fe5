"""The human gate: writes a gate rule marks become tickets in a queue kept in the backend.

A gate rule has the shape of a policy rule (``domains.model.Rule``): its check returns why a call
needs a person (a refund over a threshold) or None. A gated call is not executed: it becomes a
ticket with an owner, a priority, a status, an internal note and a history, and the agent is told who
has it and how urgent it is. An ``Operator`` decides the tickets: the simulated one (the default)
approves each at once, as its owner; the inbox's (``passhat.guard.inbox``) files each where people decide
it. ``close`` then carries out an approved ticket that the domain's policy rules still allow and rejects
the others, so a trial still reaches its outcome, whoever decided.

A domain's policy may say how urgent a ticket is (by amount, by a member's tier) and what the person
taking it should know: its gate rule then returns a ``Review`` (``passhat.domains.toolkit``), a reason that
carries the ticket's priority and internal note. A plain reason gets the default priority and no note.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable
from typing import Any, Protocol

from passhat.domains.model import Call, Rule
from passhat.domains.toolkit import Review
from passhat.env import Execution, ToolRunner
from passhat.env.tools import Within, ok

TABLE = "_passhat_tickets"
TICKET_COLUMNS = "id, tool, args, rule, reason, owner, priority, note"  # what an operator takes of a ticket
OWNERS = ("Dana Whitfield", "Sam Okafor", "Priya Raman")  # the simulated review team, assigned in turn
DEFAULT_PRIORITY = "high"  # a gate rule that says nothing of urgency: a person is waiting
CarryOut = Callable[[int, str, dict[str, Any]], Execution]  # (ticket number, tool, args) -> what running it did


def ensure_table(db: sqlite3.Connection) -> None:
    with db:
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (id INTEGER PRIMARY KEY, tool TEXT NOT NULL, args TEXT NOT NULL,"
            " rule TEXT NOT NULL, reason TEXT NOT NULL, owner TEXT NOT NULL, priority TEXT NOT NULL,"
            " note TEXT NOT NULL, status TEXT NOT NULL, history TEXT NOT NULL)"
        )


def gated_by(runner: ToolRunner, gates: tuple[Rule, ...], name: str, args: dict[str, Any]) -> tuple[Rule, str] | None:
    """The first gate rule the call meets, with its reason."""
    for gate in gates:
        if gate.tools and name not in gate.tools:
            continue
        reason = gate.check(runner.db, Call(name, args), runner.history)
        if reason:
            return gate, reason
    return None


def open_ticket(
    db: sqlite3.Connection, name: str, args: dict[str, Any], rule: Rule, reason: str, within: Within | None = None
) -> dict[str, Any]:
    """File the call as an open ticket; returns the ticket as the agent and the audit see it (its internal
    note stays in the queue, for the person who takes it).

    ``within`` (the idempotency record) is given the agent's answer (``shown``) in the ticket's own
    transaction. The row goes in first, so its number comes from the insert itself and two connections
    filing at once get two numbers.
    """
    priority, note = (reason.priority, reason.note) if isinstance(reason, Review) else (DEFAULT_PRIORITY, "")
    with db:
        history = [{"status": "open", "by": "gateway", "note": str(reason)}]
        number = db.execute(
            f"INSERT INTO {TABLE} (tool, args, rule, reason, owner, priority, note, status, history)"
            " VALUES (?, ?, ?, ?, '', ?, ?, ?, ?)",
            (name, json.dumps(args), rule.id, str(reason), priority, note, "open", json.dumps(history)),
        ).lastrowid
        owner = OWNERS[(number - 1) % len(OWNERS)]
        db.execute(f"UPDATE {TABLE} SET owner = ? WHERE id = ?", (owner, number))
        ticket = {"ticket_id": f"T-{number}", "owner": owner, "priority": priority, "status": "open", "rule": rule.id}
        if within is not None:
            within(db, shown(ticket))
    return ticket


def shown(ticket: dict[str, Any]) -> dict[str, Any]:
    """What the agent gets for a call filed as a ticket: a success saying who has it."""
    return ok({**ticket, "message": handoff_message(ticket)})


def owners(db: sqlite3.Connection) -> list[str]:
    """Who has each ticket, in ticket order; empty when the gate never filed one here."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone() is None:
        return []
    return [r[0] for r in db.execute(f"SELECT owner FROM {TABLE} ORDER BY id")]


def handoff_message(ticket: dict[str, Any]) -> str:
    return (
        f"This request needs a person's approval ({ticket['rule']}), so it was not carried out now: it is with "
        f"{ticket['owner']} (ticket {ticket['ticket_id']}), who will complete it. Tell the customer so."
    )


@dataclasses.dataclass(frozen=True)
class GateTicket:
    """A ticket of the gate's queue, as an operator takes it."""

    number: int
    tool: str
    args: dict[str, Any]
    rule: str
    reason: str
    owner: str
    priority: str
    note: str  # internal, for whoever takes it


@dataclasses.dataclass(frozen=True)
class Verdict:
    """An operator's decision on a ticket: who decided, and why not when it is a rejection."""

    approved: bool
    by: str
    note: str = ""


class Operator(Protocol):
    """Who decides the gate's tickets of one conversation."""

    def filed(self, ticket: GateTicket, request: list[str], evidence: list[dict[str, Any]]) -> None:
        """The gate just opened ``ticket``; ``request`` is what the customer said so far, ``evidence`` the reads made."""

    def verdict(self, ticket: GateTicket) -> Verdict | None:
        """The decision on ``ticket`` if there is one now (never waits)."""

    async def wait(self, ticket: GateTicket) -> Verdict:
        """The decision on ``ticket``, waiting for it as long as this operator waits."""

    def carried_out(self, ticket: GateTicket, outcome: str) -> None:
        """What carrying out an approved ticket did ("carried out", or why it was not)."""


class SimulatedOperator:
    """Approves every ticket at once, as its owner: carrying it out then rejects what the policy forbids."""

    def filed(self, ticket: GateTicket, request: list[str], evidence: list[dict[str, Any]]) -> None:
        pass

    def verdict(self, ticket: GateTicket) -> Verdict:
        return Verdict(True, ticket.owner)

    async def wait(self, ticket: GateTicket) -> Verdict:
        return self.verdict(ticket)

    def carried_out(self, ticket: GateTicket, outcome: str) -> None:
        pass


SIMULATED = SimulatedOperator()


def open_tickets(db: sqlite3.Connection) -> list[GateTicket]:
    """The open tickets, in the order they were filed."""
    return [_ticket(row) for row in db.execute(f"SELECT {TICKET_COLUMNS} FROM {TABLE} WHERE status = 'open' ORDER BY id")]


def ticket(db: sqlite3.Connection, ticket_id: str) -> GateTicket:
    """The ticket the agent was told of as ``ticket_id`` ("T-<number>")."""
    row = db.execute(f"SELECT {TICKET_COLUMNS} FROM {TABLE} WHERE id = ?", (int(ticket_id.removeprefix("T-")),)).fetchone()
    return _ticket(row)


def _ticket(row: tuple[Any, ...]) -> GateTicket:
    number, tool, args, *rest = row
    return GateTicket(number, tool, json.loads(args), *rest)


def close(
    runner: ToolRunner, ticket: GateTicket, verdict: Verdict, carry_out: CarryOut | None = None
) -> tuple[dict[str, Any], Execution | None]:
    """Close ``ticket`` by ``verdict``: approved, it is carried out if the policy allows it, else rejected with
    the rules it breaks; rejected, with the operator's note. Returns the ticket as the trial's event shows it
    (``by`` names whoever decided, when that is not the owner) and what carrying it out did.

    ``carry_out(number, tool, args)`` runs a ticket's call (the gateway's pays through the payment provider,
    keyed by the ticket); by default the runner runs it.
    """
    carry_out = carry_out or (lambda number, name, args: runner.execute(name, args))
    violations = runner.check_rules(ticket.tool, ticket.args) if verdict.approved else []
    done = carry_out(ticket.number, ticket.tool, ticket.args) if verdict.approved and not violations else None
    status = "done" if done is not None and done.result["status"] == "ok" else "rejected"
    if not verdict.approved:
        note = verdict.note
    else:
        note = "; ".join(v.reason for v in violations) or (
            done.result.get("error", {}).get("message", "carried out") if done else ""
        )
    _close(runner.db, ticket.number, verdict.by, status, note)
    closed = {"ticket_id": f"T-{ticket.number}", "owner": ticket.owner, "status": status, "note": note, "tool": ticket.tool}
    return (closed if verdict.by == ticket.owner else {**closed, "by": verdict.by}), done


def _close(db: sqlite3.Connection, number: int, by: str, status: str, note: str) -> None:
    with db:
        history = json.loads(db.execute(f"SELECT history FROM {TABLE} WHERE id = ?", (number,)).fetchone()[0])
        history.append({"status": status, "by": by, "note": note})
        db.execute(f"UPDATE {TABLE} SET status = ?, history = ? WHERE id = ?", (status, json.dumps(history), number))
