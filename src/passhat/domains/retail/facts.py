"""The facts a retail task may ask the agent to tell, each derived from the backend.

A task names one of these with its arguments and states the value it expects; ``passhat check`` derives
it on the backend as the goal leaves it and fails the task when the two disagree. Each returns a typed
``Fact`` so the graders match it by meaning: an amount with its direction, a status with its rivals.
"""

from __future__ import annotations

import sqlite3

from passhat.dialogue.facts import Fact
from passhat.domains.model import FactSource
from passhat.domains.retail.tools import net_paid, price_difference
from passhat.domains.toolkit import one, rows

# Other words a customer hears as the same status ("shipped" is what the shop calls processed).
STATUS_WORDS: dict[str, tuple[str, ...]] = {
    "pending": ("awaiting shipment", "being prepared"),
    "processed": ("shipped", "dispatched", "on its way", "in transit", "left our warehouse", "left the warehouse"),
    "delivered": ("arrived", "has been delivered", "was delivered"),
    "cancelled": ("canceled",),
    "return requested": (
        "return was requested",
        "return has been requested",
        "return is already requested",
        "return already requested",
    ),
    "exchange requested": (
        "exchange was requested",
        "exchange has been requested",
        "exchange is already requested",
        "exchange already requested",
        "already has an exchange",
    ),
}


class UnknownEntity(LookupError):
    """A fact's arguments name something the backend does not have: the task is wrong."""


def _money(amount: float, direction: str | None = None, about: tuple[str, ...] = ()) -> Fact:
    return Fact("money", f"{abs(amount):.2f}", direction=direction, about=about)  # type: ignore[arg-type]


def order_status(db: sqlite3.Connection, order_id: str) -> Fact:
    order = one(db, "SELECT status FROM orders WHERE id = ?", order_id)
    if order is None:
        raise UnknownEntity(f"no order {order_id}")
    status = order["status"]
    rivals = tuple(s for s in STATUS_WORDS if s != status)
    return Fact("status", status, synonyms=STATUS_WORDS[status], rivals=rivals, about=(order_id,))


def gift_card_balance(db: sqlite3.Connection, payment_method_id: str) -> Fact:
    card = one(db, "SELECT balance FROM payment_methods WHERE id = ? AND kind = 'gift_card'", payment_method_id)
    if card is None:
        raise UnknownEntity(f"no gift card {payment_method_id}")
    return _money(card["balance"], about=(payment_method_id,))


def paid_for(db: sqlite3.Connection, order_ids: list[str]) -> Fact:
    """What the orders hold in all: every payment, refunds deducted."""
    for order_id in order_ids:
        if one(db, "SELECT id FROM orders WHERE id = ?", order_id) is None:
            raise UnknownEntity(f"no order {order_id}")
    return _money(sum(sum(net_paid(db, o).values()) for o in order_ids))


def return_refund(db: sqlite3.Connection, order_id: str, item_ids: list[str]) -> Fact:
    """What returning the items would send back: what was paid for them."""
    prices = [one(db, "SELECT price FROM order_items WHERE order_id = ? AND variant_id = ?", order_id, i) for i in item_ids]
    if None in prices:
        raise UnknownEntity(f"order {order_id} does not hold all of {item_ids}")
    return _money(sum(p["price"] for p in prices if p), "refund")


def swap_difference(db: sqlite3.Connection, order_id: str, item_ids: list[str], new_item_ids: list[str]) -> Fact:
    """What swapping the items would cost the customer (a charge) or give back (a refund)."""
    difference = price_difference(db, order_id, item_ids, new_item_ids)
    if difference is None:
        raise UnknownEntity(f"order {order_id} cannot swap {item_ids} for {new_item_ids}")
    return _money(difference, "charge" if difference > 0 else "refund" if difference < 0 else None)


def card_ending(db: sqlite3.Connection, payment_method_id: str) -> Fact:
    card = one(db, "SELECT last_four FROM payment_methods WHERE id = ? AND kind = 'credit_card'", payment_method_id)
    if card is None:
        raise UnknownEntity(f"no credit card {payment_method_id}")
    return Fact("card_ending", card["last_four"], about=(payment_method_id,))


def tracking_number(db: sqlite3.Connection, order_id: str) -> Fact:
    shipment = rows(db, "SELECT tracking_id FROM shipments WHERE order_id = ?", order_id)
    if not shipment:
        raise UnknownEntity(f"order {order_id} has no shipment")
    return Fact("identifier", shipment[0]["tracking_id"], about=(order_id,))


FACTS: dict[str, FactSource] = {
    "order_status": FactSource("the status of order {order_id} is {value}", order_status),
    "gift_card_balance": FactSource("the balance of gift card {payment_method_id} is {value}", gift_card_balance),
    "paid_for": FactSource("you have paid {value} for {order_ids}", paid_for),
    "return_refund": FactSource("returning {item_ids} from order {order_id} would give you {value}", return_refund),
    "swap_difference": FactSource("swapping {item_ids} for {new_item_ids} would mean {value}", swap_difference),
    "card_ending": FactSource("card {payment_method_id} ends in {value}", card_ending),
    "tracking_number": FactSource("the tracking number of order {order_id} is {value}", tracking_number),
}
