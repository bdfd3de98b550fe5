"""The machine-checkable clauses of the retail policy.

Each check runs before a write executes, against the backend as it is then, and returns why the call
breaks the rule or None. A check never raises for a missing order, item or payment method: it returns
None and lets the tool report the error, so a rule only ever speaks about the policy.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from passhat.domains.model import Call, Rule
from passhat.domains.retail.data import CANCEL_REASONS
from passhat.domains.retail.tools import TOOLS, cancellation_refunds, price_difference
from passhat.domains.toolkit import identified, one

WRITES = tuple(fn.__name__ for fn in TOOLS if fn.__passhat_tool__.write)
AUTH_TOOLS = ("find_customer_by_email", "find_customer_by_name_zip")
MODIFY_TOOLS = ("change_order_address", "change_order_payment", "change_order_items")


def _order(db: sqlite3.Connection, call: Call) -> dict[str, Any] | None:
    return one(db, "SELECT * FROM orders WHERE id = ?", call.args.get("order_id"))


def _target_customer(db: sqlite3.Connection, call: Call) -> str | None:
    """The customer a write acts on: the order's owner, or the named customer; None if it does not exist."""
    if "order_id" in call.args:
        order = _order(db, call)
        return order["customer_id"] if order else None
    found = one(db, "SELECT id FROM customers WHERE id = ?", call.args.get("customer_id"))
    return found["id"] if found else None


def authenticate_first(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    customer = _target_customer(db, call)
    if customer is None or customer in identified(history, AUTH_TOOLS):
        return None
    return f"{call.name} acts on customer {customer}, whose identity was not verified earlier in the conversation"


def one_customer(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    verified, customer = identified(history, AUTH_TOOLS), _target_customer(db, call)
    if not verified or customer is None or customer == verified[0]:
        return None
    return f"{call.name} acts on customer {customer}, but this conversation is with customer {verified[0]}"


def _status_rule(request: str, allowed: str):
    """A check that the call's order is in status ``allowed``; ``request`` names the request in the reason."""

    def check(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
        order = _order(db, call)
        if order is None or order["status"] == allowed:
            return None
        return f"{request} is only allowed for {allowed} orders; {order['id']} is {order['status']}"

    return check


def cancel_reason(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    if call.args.get("reason") in CANCEL_REASONS:
        return None
    return f"the cancellation reason must be one of {', '.join(map(repr, CANCEL_REASONS))}, not {call.args.get('reason')!r}"


def items_modified_once(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    order = _order(db, call)
    if order is None or not order["items_modified"]:
        return None
    return f"the items of order {order['id']} were already modified once"


def refund_destination(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """Refunds (a return, or a swap to cheaper items) go to the original payment method or a gift card."""
    order = _order(db, call)
    method = one(db, "SELECT * FROM payment_methods WHERE id = ?", call.args.get("payment_method_id"))
    if order is None or method is None or not _is_refund(db, call):
        return None
    if method["id"] == order["payment_method_id"]:
        return None
    if method["kind"] == "gift_card" and method["customer_id"] == order["customer_id"]:
        return None
    return (
        f"refunds for order {order['id']} go to its original payment method {order['payment_method_id']} "
        f"or a gift card of the customer, not {method['id']}"
    )


def _is_refund(db: sqlite3.Connection, call: Call) -> bool:
    """Whether the call sends money back: always for a return, for swaps only when the new items cost less."""
    if call.name == "return_items":
        return True
    difference = price_difference(
        db, call.args.get("order_id"), call.args.get("item_ids") or [], call.args.get("new_item_ids") or []
    )
    return difference is not None and difference < 0


def payment_change_different(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    order = _order(db, call)
    if order is None or call.args.get("payment_method_id") != order["payment_method_id"]:
        return None
    return f"order {order['id']} is already paid with {order['payment_method_id']}; the new method must differ"


RULES: tuple[Rule, ...] = (
    Rule(
        "authenticate-first",
        "Verify the customer's identity (email, or name and zip) before acting on their account.",
        WRITES,
        authenticate_first,
    ),
    Rule("one-customer", "Act only for the one customer authenticated in this conversation.", WRITES, one_customer),
    Rule(
        "cancel-pending-only", "Only pending orders can be cancelled.", ("cancel_order",), _status_rule("cancelling", "pending")
    ),
    Rule(
        "cancel-reason",
        "A cancellation's reason is 'no longer needed' or 'ordered by mistake'.",
        ("cancel_order",),
        cancel_reason,
    ),
    Rule(
        "modify-pending-only",
        "Only pending orders can have their address, payment or items changed.",
        MODIFY_TOOLS,
        _status_rule("changing an order", "pending"),
    ),
    Rule("items-modified-once", "An order's items can be modified only once.", ("change_order_items",), items_modified_once),
    Rule(
        "return-delivered-only",
        "Only delivered orders can be returned.",
        ("return_items",),
        _status_rule("returning items", "delivered"),
    ),
    Rule(
        "exchange-delivered-only",
        "Only delivered orders can be exchanged, and only once.",
        ("exchange_items",),
        _status_rule("exchanging items", "delivered"),
    ),
    Rule(
        "refund-destination",
        "Refunds go to the order's original payment method or a gift card of the same customer.",
        ("return_items", "exchange_items", "change_order_items"),
        refund_destination,
    ),
    Rule(
        "payment-change-different",
        "A payment change must move the order to a different payment method.",
        ("change_order_payment",),
        payment_change_different,
    ),
)


REFUND_REVIEW_THRESHOLD = 250.0  # refunds above this many dollars go to a person when the human gate is on


def large_refund(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """A return or cancellation that sends back more than the review threshold."""
    order_id = call.args.get("order_id")
    if call.name == "cancel_order":
        amount = sum(cancellation_refunds(db, order_id).values())  # what cancelling really sends back
    else:
        placeholders = ",".join("?" * len(call.args.get("item_ids") or []))
        found = one(
            db,
            f"SELECT SUM(price) AS total FROM order_items WHERE order_id = ? AND variant_id IN ({placeholders})",
            order_id,
            *(call.args.get("item_ids") or []),
        )
        amount = (found or {}).get("total") or 0.0
    if amount <= REFUND_REVIEW_THRESHOLD:
        return None
    return f"a refund of ${amount:.2f} is over the ${REFUND_REVIEW_THRESHOLD:.0f} that needs a person's approval"


GATES: tuple[Rule, ...] = (
    Rule(
        "refund-review",
        f"Refunds over ${REFUND_REVIEW_THRESHOLD:.0f} need a person's approval.",
        ("cancel_order", "return_items"),
        large_refund,
    ),
)
