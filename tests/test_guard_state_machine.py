"""Idempotent writes as a state machine: gateways interleaved on one database, each call's effect exactly once.

Five gateways share one SQLite file, each on its own connection: two instances of conversation c1 with
every money guard (a restarted process), one of conversation c2, and two instances of c1 without the
idempotency guard. Calls carry no key, a null key, a fresh key, a key reused with the same arguments or
with others (a key first used in another conversation is a fresh one here); refunds over $100 become
tickets, which any gateway's operator may resolve. A model of what should have happened says, after
every step, which refund rows, ledger totals and tickets the database must hold, and each call's answer:
the first result again, a conflict exactly when the arguments differ, or a new effect.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Literal

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from passhat.domains import payments
from passhat.domains.model import Rule
from passhat.domains.payments import Movement
from passhat.domains.toolkit import tool
from passhat.guard import Gateway
from passhat.guard.payments import totals

CHARGED = 300.0  # each order's original charge, in dollars
ORDERS = ("#O1", "#O2")
AMOUNTS = (20.0, 50.0, 150.0, 250.0)
GATED_OVER = 100.0
WITH_KEYS = ["idempotency", "payments", "human_gate"]
WITHOUT_KEYS = ["payments", "human_gate"]
GATEWAYS = (("c1", WITH_KEYS), ("c1", WITH_KEYS), ("c2", WITH_KEYS), ("c1", WITHOUT_KEYS), ("c1", WITHOUT_KEYS))
KeyChoice = Literal["missing", "null", "fresh", "reused", "reused_other_arguments"]


@tool(write=True, needs_confirmation=False, target="order")
def refund_order(db: sqlite3.Connection, order: str, amount: float) -> dict:
    """Refund part of an order's charge through the payment provider; a replayed movement records nothing.

    Args:
        order: the order
        amount: dollars
    """
    earlier = [("card_1", -r[0]) for r in db.execute("SELECT amount FROM refunds WHERE order_id = ?", (order,))]
    movement = Movement("refund", order, "C-1", "card_1", "C-1", amount, "USD", (("card_1", CHARGED), *earlier))
    channel = payments.current_channel()
    if channel is None or not channel.move(db, movement).replayed:
        db.execute("INSERT INTO refunds (order_id, amount) VALUES (?, ?)", (order, amount))
    return {"order": order, "amount": amount}


BIG = Rule(
    "big-refund",
    "refunds over $100 need a person",
    ("refund_order",),
    lambda db, call, history: "over $100" if call.args["amount"] > GATED_OVER else None,
)


class InterleavedGateways(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp())
        self.connections = [self._connect() for _ in GATEWAYS]
        with self.connections[0] as db:
            db.execute("CREATE TABLE refunds (id INTEGER PRIMARY KEY, order_id TEXT NOT NULL, amount REAL NOT NULL)")
        self.gateways = [
            Gateway.over([refund_order], db, guards=guards, gates=(BIG,), conversation_id=conversation)
            for db, (conversation, guards) in zip(self.connections, GATEWAYS, strict=False)
        ]
        # the model: what the database must hold, and each (conversation, key)'s first arguments and answer
        self.rows: list[tuple[str, float]] = []
        self.tickets: list[dict[str, Any]] = []
        self.first_use: dict[tuple[str, Any], tuple[dict[str, Any], dict[str, Any]]] = {}
        self.key_arguments: dict[str, dict[str, Any]] = {}  # every key handed out, with the arguments it first went with

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.folder / "backend.sqlite", timeout=30)
        db.execute("PRAGMA synchronous = OFF")
        return db

    def teardown(self) -> None:
        for db in self.connections:
            db.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def refunded(self, order: str) -> float:
        return sum(amount for o, amount in self.rows if o == order)

    @rule(
        gateway=st.integers(0, len(GATEWAYS) - 1),
        order=st.sampled_from(ORDERS),
        amount=st.sampled_from(AMOUNTS),
        choice=st.sampled_from(["missing", "null", "fresh", "reused", "reused_other_arguments"]),
        pick=st.integers(0, 50),
        key_in_arguments=st.booleans(),
    )
    def call(self, gateway: int, order: str, amount: float, choice: KeyChoice, pick: int, key_in_arguments: bool) -> None:
        args, key = self._arguments(order, amount, choice, pick)
        order, amount = args["order"], args["amount"]
        sent = {**args, "idempotency_key": key} if key_in_arguments and choice != "missing" else args
        passage = self.gateways[gateway].call("refund_order", sent, idempotency_key=None if key_in_arguments else key)
        result = passage.execution.result
        conversation, guards = GATEWAYS[gateway]
        if "idempotency" in guards:
            scope_key = (conversation, key if key is not None else ("derived", order, amount))
            if scope_key in self.first_use:
                first_args, first_result = self.first_use[scope_key]
                if first_args == args:
                    assert passage.guard is not None and passage.guard["decision"] == "replayed"
                    assert result == first_result
                else:
                    assert result["status"] == "error" and result["error"]["type"] == "idempotency_conflict"
                return
        else:
            scope_key = None
        expected = self._effect(order, amount, passage.guard)
        assert result["status"] == expected, result
        if expected == "ok" and scope_key is not None:
            self.first_use[scope_key] = (args, result)

    def _arguments(self, order: str, amount: float, choice: KeyChoice, pick: int) -> tuple[dict[str, Any], str | None]:
        """The call's arguments and key: a reused key comes from any conversation, with its first arguments
        or with another amount."""
        args = {"order": order, "amount": amount}
        if choice in ("missing", "null"):
            return args, None
        if choice == "fresh" or not self.key_arguments:
            key = f"k{len(self.key_arguments)}"
            self.key_arguments[key] = args
            return args, key
        key = sorted(self.key_arguments)[pick % len(self.key_arguments)]
        first = self.key_arguments[key]
        if choice == "reused":
            return dict(first), key
        other = next(a for a in AMOUNTS if a != first["amount"])
        return {**first, "amount": other}, key

    def _effect(self, order: str, amount: float, guard: dict[str, Any] | None) -> str:
        """A new action: a ticket for a person, or a refund if the order has that much left to refund."""
        if amount > GATED_OVER:
            assert guard is not None and guard["decision"] == "ticket"
            self.tickets.append({"order": order, "amount": amount, "status": "open"})
            return "ok"
        assert guard is None
        if self.refunded(order) + amount > CHARGED:
            return "error"
        self.rows.append((order, amount))
        return "ok"

    @rule(gateway=st.integers(0, len(GATEWAYS) - 1))
    def operator_resolves_tickets(self, gateway: int) -> None:
        """Any gateway's operator carries out every open ticket the money allows, and rejects the rest."""
        expected = []
        for ticket in self.tickets:
            if ticket["status"] != "open":
                continue
            allowed = self.refunded(ticket["order"]) + ticket["amount"] <= CHARGED
            ticket["status"] = "done" if allowed else "rejected"
            if allowed:
                self.rows.append((ticket["order"], ticket["amount"]))
            expected.append(ticket["status"])
        assert [p.guard["status"] for p in self.gateways[gateway].resolve_tickets()] == expected

    @invariant()
    def every_effect_happened_exactly_once(self) -> None:
        db = self.connections[0]
        assert db.execute("SELECT order_id, amount FROM refunds ORDER BY id").fetchall() == self.rows
        statuses = [r[0] for r in db.execute("SELECT status FROM _passhat_tickets ORDER BY id")]
        assert statuses == [t["status"] for t in self.tickets]
        ledger = totals(db)
        for order in ORDERS:  # the provider's books hold exactly the money the backend moved
            if order in ledger or self.refunded(order):
                assert ledger[order] == (round(CHARGED * 100), round(self.refunded(order) * 100))


InterleavedGateways.TestCase.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
test_interleaved_gateways = InterleavedGateways.TestCase
