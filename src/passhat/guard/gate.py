"""The human gate: writes a gate rule marks become tickets in a queue kept in the backend.

A gate rule has the shape of a policy rule (``domains.model.Rule``): its check returns why a call
needs a person (a refund over a threshold) or None. A gated call is not executed: it becomes a
ticket with an owner, a priority, a status and a history, and the agent is told who has it. In
simulation, ``resolve_tickets`` plays the operator: it carries out each open ticket that the domain's
policy rules allow and rejects the others, so a trial still reaches its outcome.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from passhat.domains.model import Call, Rule
from passhat.env import Execution, ToolRunner

TABLE = "_passhat_tickets"
OWNERS = ("Dana Whitfield", "Sam Okafor", "Priya Raman")  # the simulated review team, assigned in turn


def ensure_table(db: sqlite3.Connection) -> None:
    with db:
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (id INTEGER PRIMARY KEY, tool TEXT NOT NULL, args TEXT NOT NULL,"
            " rule TEXT NOT NULL, reason TEXT NOT NULL, owner TEXT NOT NULL, priority TEXT NOT NULL,"
            " status TEXT NOT NULL, history TEXT NOT NULL)"
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


def open_ticket(db: sqlite3.Connection, name: str, args: dict[str, Any], rule: Rule, reason: str) -> dict[str, Any]:
    """File the call as an open ticket; returns the ticket as the agent and the audit see it."""
    with db:
        number = db.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {TABLE}").fetchone()[0]
        owner = OWNERS[(number - 1) % len(OWNERS)]
        history = [{"status": "open", "by": "gateway", "note": reason}]
        db.execute(
            f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (number, name, json.dumps(args), rule.id, reason, owner, "high", "open", json.dumps(history)),
        )
    return {"ticket_id": f"T-{number}", "owner": owner, "priority": "high", "status": "open", "rule": rule.id}


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


def resolve_tickets(runner: ToolRunner) -> list[tuple[dict[str, Any], Execution | None]]:
    """The simulated operator: each open ticket carried out if the policy allows it, else rejected."""
    out = []
    for number, name, raw_args, owner in runner.db.execute(f"SELECT id, tool, args, owner FROM {TABLE} WHERE status = 'open' ORDER BY id").fetchall():
        args = json.loads(raw_args)
        violations = runner.check_rules(name, args)
        done = None if violations else runner.execute(name, args)
        status = "done" if done is not None and done.result["status"] == "ok" else "rejected"
        note = "; ".join(v.reason for v in violations) or (done.result.get("error", {}).get("message", "carried out") if done else "")
        _close(runner.db, number, owner, status, note)
        out.append(({"ticket_id": f"T-{number}", "owner": owner, "status": status, "note": note, "tool": name}, done))
    return out


def _close(db: sqlite3.Connection, number: int, owner: str, status: str, note: str) -> None:
    with db:
        history = json.loads(db.execute(f"SELECT history FROM {TABLE} WHERE id = ?", (number,)).fetchone()[0])
        history.append({"status": status, "by": owner, "note": note})
        db.execute(f"UPDATE {TABLE} SET status = ?, history = ? WHERE id = ?", (status, json.dumps(history), number))
