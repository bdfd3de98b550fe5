"""How retail is talked about: ids in text, proposal wording, and the lookups around a write.

The engine's scripted customer and reference agent are domain-free; these helpers are what they know
about retail. Everything here reads the backend but never writes it.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from passhat.domains.model import Action, Identity
from passhat.domains.retail.tools import TOOLS, cancellation_refunds, net_paid, one, price_difference, rows, variant_info

# Orders, customers, products, items (variants) and payment methods, as written in free text.
ID_PATTERN = r"(?:#R\d{7}|(?<![\w-])(?:C-\d{6}|P-\d{3}|V-\d{5}|(?:card|gift|paypal)_\d{4,6}))(?![\w-])"

# A proposal for a goal of this kind must use one of these words (informational goals propose nothing).
_WORDS = {fn.__name__: fn.__passhat_tool__.confirm_words for fn in TOOLS}
PROPOSAL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "cancel": _WORDS["cancel_order"],
    "change_order_address": _WORDS["change_order_address"],
    "change_order_payment": _WORDS["change_order_payment"],
    "change_order_items": _WORDS["change_order_items"],
    "change_customer_address": _WORDS["change_customer_address"],
    "return": _WORDS["return_items"],
    "exchange": _WORDS["exchange_items"],
    "info": (),
    "transfer": ("transfer", "human", "specialist", "representative"),
}

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_ZIP = re.compile(r"(?<![\w$#.-])\d{5}(?![\w]|[.,]\d)")  # not part of an id, a price or a longer number


def item_label(db: sqlite3.Connection, variant_id: str) -> str:
    """``V-10233 (Desk Lamp, color: black, bulb: LED)``: the id with what it is, as customers recognise items."""
    v = variant_info(db, variant_id)
    if v is None:
        return variant_id
    return f"{variant_id} ({', '.join([v['product_name'], *(f'{k}: {o}' for k, o in v['options'].items())])})"


def describe_action(db: sqlite3.Connection, action: Action) -> str:
    """One sentence proposing a write, naming every id, item, amount and payment method the customer must confirm."""
    a, tool = action.args, action.tool
    order = a.get("order_id")
    if tool == "cancel_order":
        items = _order_items(db, order)
        refunds = [f"{_money(amount)} to {pm}" for pm, amount in cancellation_refunds(db, order).items()]
        return (
            f"cancel order {order}{_parenthesised(db, items)} with the reason \"{a.get('reason')}\""
            + (f", and refund {_and(refunds)}" if refunds else "")
        )
    if tool == "change_order_address":
        return f"change the shipping address of order {order} to {_address(a)}"
    if tool == "change_customer_address":
        return f"change the default address of customer {a.get('customer_id')} to {_address(a)}"
    if tool == "change_order_payment":
        current = one(db, "SELECT payment_method_id FROM orders WHERE id = ?", order)
        moved = net_paid(db, order).get(current["payment_method_id"], 0.0) if current else 0.0
        source = f" from {current['payment_method_id']}" if current else ""
        return f"change the payment method of order {order}{source} to {a.get('payment_method_id')}, moving {_money(moved)}"
    if tool == "change_order_items":
        return f"modify order {order} by replacing {_swaps(db, a)}, and {_settlement(db, a)}"
    if tool == "exchange_items":
        return f"exchange {_swaps(db, a, 'for')} in order {order}, and {_settlement(db, a)}"
    if tool == "return_items":
        paid = [one(db, "SELECT price FROM order_items WHERE order_id = ? AND variant_id = ?", order, i) for i in a.get("item_ids", [])]
        total = sum(p["price"] for p in paid if p)
        return (
            f"return {_and([item_label(db, i) for i in a.get('item_ids', [])])} from order {order} "
            f"and refund {_money(total)} to {a.get('payment_method_id')}"
        )
    if tool == "transfer_to_human":
        return f"transfer customer {a.get('customer_id')} to a human agent with this summary: {a.get('summary')}"
    return f"call {tool} with {a}"


def lookups(db: sqlite3.Connection, action: Action) -> list[Action]:
    """The reads a careful agent makes before proposing ``action``.

    The order (what it holds, its status); the products of new items (which options are in stock, at
    what price); and the customer's profile for customer-level writes or when money moves to a payment
    method other than the order's own (to check it exists and, for a gift card, its balance).
    """
    a = action.args
    if "order_id" not in a:
        return [Action(tool="get_customer", args={"customer_id": a["customer_id"]})] if "customer_id" in a else []
    calls = [Action(tool="get_order", args={"order_id": a["order_id"]})]
    new_items = [variant_info(db, i) for i in a.get("new_item_ids", [])]
    products = dict.fromkeys(v["product_id"] for v in new_items if v)  # distinct, in order
    calls += [Action(tool="get_product", args={"product_id": p}) for p in products]
    order = one(db, "SELECT customer_id, payment_method_id FROM orders WHERE id = ?", a["order_id"])
    if order and a.get("payment_method_id") not in (None, order["payment_method_id"]):
        calls.append(Action(tool="get_customer", args={"customer_id": order["customer_id"]}))
    return calls


def authenticate(identity: Identity, text: str) -> Action | None:
    """The identity lookup the customer's words so far allow: their email as written, else name and zip."""
    if email := _EMAIL.search(text):
        return Action(tool="find_customer_by_email", args={"email": email.group()})
    named = all(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text, re.IGNORECASE) for n in (identity.first_name, identity.last_name))
    zip_code = _ZIP.search(text)
    if named and zip_code:
        return Action(
            tool="find_customer_by_name_zip",
            args={"first_name": identity.first_name, "last_name": identity.last_name, "zip": zip_code.group()},
        )
    return None


def near_misses(db: sqlite3.Connection, action: Action) -> list[tuple[str, Action]]:
    """Plausible wrong versions of ``action``: the same call on another order of the customer, or on another item.

    Item calls are re-aimed at items that really are in the order (with new items of the matching product), so
    each miss is a mistake the backend would accept rather than one it rejects.
    """
    a = action.args
    order = one(db, "SELECT id, customer_id, status FROM orders WHERE id = ?", a.get("order_id"))
    if order is None:
        return []
    out = []
    chosen = a.get("item_ids") or []
    others = rows(db, "SELECT id, status FROM orders WHERE customer_id = ? AND id != ? ORDER BY id", order["customer_id"], order["id"])
    others.sort(key=lambda o: o["status"] != order["status"])  # the mistake most likely to go through first
    for other in others:
        items = _order_items(db, other["id"])[: len(chosen)] if chosen else []
        moved = _with_items(db, {**a, "order_id": other["id"]}, items) if chosen else {**a, "order_id": other["id"]}
        if moved is not None and (not chosen or len(items) == len(chosen)):
            out.append(("wrong_order", Action(tool=action.tool, args=moved)))
            break
    spare = [i for i in _order_items(db, order["id"]) if i not in chosen]
    swapped = _with_items(db, a, [*chosen[:-1], spare[0]]) if chosen and spare else None
    if swapped is not None:
        out.append(("wrong_item", Action(tool=action.tool, args=swapped)))
    return out


def _order_items(db: sqlite3.Connection, order_id: str) -> list[str]:
    return [i["variant_id"] for i in rows(db, "SELECT variant_id FROM order_items WHERE order_id = ? ORDER BY variant_id", order_id)]


def _with_items(db: sqlite3.Connection, args: dict[str, Any], items: list[str]) -> dict[str, Any] | None:
    """``args`` acting on ``items``; new items, if the call has them, re-chosen as another option of each item's product."""
    if "new_item_ids" not in args:
        return {**args, "item_ids": items}
    new_items = []
    for item in items:
        sibling = one(
            db,
            "SELECT v.id FROM variants v JOIN variants old ON old.product_id = v.product_id"
            " WHERE old.id = ? AND v.id != old.id AND v.available = 1 ORDER BY v.id",
            item,
        )
        if sibling is None:
            return None
        new_items.append(sibling["id"])
    return {**args, "item_ids": items, "new_item_ids": new_items}


# -- wording ----------------------------------------------------------------------------------------


def _money(amount: float) -> str:
    return f"${amount:.2f}"


def _and(parts: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else "".join(parts)


def _parenthesised(db: sqlite3.Connection, items: list[str]) -> str:
    return f" ({_and([item_label(db, i) for i in items])})" if items else ""


def _address(a: dict[str, Any]) -> str:
    street = ", ".join(p for p in (a.get("address1"), a.get("address2")) if p)
    return f"{street}, {a.get('city')}, {a.get('state')} {a.get('zip')}, {a.get('country')}"


def _swaps(db: sqlite3.Connection, a: dict[str, Any], joiner: str = "with") -> str:
    pairs = zip(a.get("item_ids", []), a.get("new_item_ids", []))
    return _and([f"{item_label(db, old)} {joiner} {item_label(db, new)}" for old, new in pairs])


def _settlement(db: sqlite3.Connection, a: dict[str, Any]) -> str:
    """How the price difference of a swap is settled, in words."""
    diff = price_difference(db, a.get("order_id"), a.get("item_ids", []), a.get("new_item_ids", []))
    method = a.get("payment_method_id")
    if diff is None:
        return f"settle any price difference with {method}"
    if diff > 0:
        return f"charge the price difference of {_money(diff)} to {method}"
    if diff < 0:
        return f"refund the price difference of {_money(-diff)} to {method}"
    return f"the price difference is $0.00, so nothing is charged to {method}"
