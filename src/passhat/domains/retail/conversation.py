"""How retail is talked about: ids in text, proposal wording, and the lookups around a write.

The engine's scripted customer and reference agent are domain-free; these helpers are what they know
about retail. Everything here reads the backend but never writes it.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from passhat.dialogue.proposals import Term, named
from passhat.domains.model import Action, Customer, NearMiss
from passhat.domains.retail.data import CANCEL_REASONS
from passhat.domains.retail.model import Shopper
from passhat.domains.retail.tools import TOOLS, cancellation_refunds, net_paid, price_difference, variant_info
from passhat.domains.toolkit import one, rows

# Orders (also "R3042198", or its seven digits alone: no other number here has seven), customers, products, items
# (variants) and payment methods, as written in free text.
ID_PATTERN = (
    r"(?:#R\d{7}|(?<![\w#-])R\d{7}|(?<![\w#$€£.,/:-])\d{7}(?![.,/:]\d)"
    r"|(?<![\w-])(?:C-\d{6}|P-\d{3}|V-\d{5}|(?:card|gift|paypal)_\d{4,6}))(?![\w-])"
)

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
        return f'cancel order {order}{_parenthesised(db, items)} with the reason "{a.get("reason")}"' + (
            f", and refund {_and(refunds)}" if refunds else ""
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
        paid = [
            one(db, "SELECT price FROM order_items WHERE order_id = ? AND variant_id = ?", order, i)
            for i in a.get("item_ids", [])
        ]
        total = sum(p["price"] for p in paid if p)
        return (
            f"return {_and([item_label(db, i) for i in a.get('item_ids', [])])} from order {order} "
            f"and refund {_money(total)} to {a.get('payment_method_id')}"
        )
    if tool == "transfer_to_human":
        return f"transfer customer {a.get('customer_id')} to a human agent with this summary: {a.get('summary')}"
    return f"call {tool} with {a}"


def proposal_terms(db: sqlite3.Connection, action: Action) -> list[Term]:
    """What a yes to ``action`` agrees to, on the backend as it is before the call: the order, each item and
    new item, the payment method, the address (required); the amounts that move, item prices and the order's
    other details a proposal may state (optional)."""
    a, tool = action.args, action.tool
    order_id = a.get("order_id")
    terms = [Term("id", order_id, "order")] if order_id else []
    if tool == "cancel_order":
        items = _order_items(db, order_id)
        terms += [_item_term(db, i, "item", order_id, items, required=False) for i in items]
        refunds = cancellation_refunds(db, order_id)
        terms += [_payment_term(db, pm, "refunded to", required=False) for pm in refunds]
        terms += _amounts(refunds.values(), "refund")
        # the other reasons said beside it conflict: "cancel it as ordered by mistake" is not "no longer needed"
        others = tuple(r for r in CANCEL_REASONS if r != a.get("reason"))
        terms.append(Term("phrase", str(a.get("reason")), "reason", required=False, unlike=others))
    elif tool in ("change_order_address", "change_customer_address"):
        terms.append(Term("street", a.get("address1", ""), "street"))
        if a.get("address2"):
            terms.append(Term("street", a["address2"], "apartment", required=False))
        table, key = ("orders", order_id) if tool == "change_order_address" else ("customers", a.get("customer_id"))
        current = one(db, f"SELECT address1, address2 FROM {table} WHERE id = ?", key)
        if current and current["address2"]:  # "from 9 Elm St, Apt 3 to ...": its unit, said with its street
            terms.append(Term("street", f"{current['address1']} {current['address2']}", "current address", required=False))
        terms += [
            Term("phrase", a.get("city", ""), "city"),
            Term("id", a.get("zip", ""), "zip"),
            Term("phrase", a.get("state", ""), "state", required=False),
            Term("phrase", a.get("country", ""), "country", required=False),
        ]
        if tool == "change_customer_address":
            terms.append(Term("id", a.get("customer_id", ""), "customer", required=False))
    elif tool == "change_order_payment":
        current = one(db, "SELECT payment_method_id FROM orders WHERE id = ?", order_id)
        terms.append(_payment_term(db, a.get("payment_method_id", ""), "new payment method"))
        if current:
            terms.append(_payment_term(db, current["payment_method_id"], "current payment method", required=False))
            terms += _amounts([net_paid(db, order_id).get(current["payment_method_id"], 0.0)], None)
    elif tool in ("change_order_items", "exchange_items", "return_items"):
        terms += [_item_term(db, i, "item", order_id, a.get("item_ids", [])) for i in a.get("item_ids", [])]
        terms += [
            _new_item_term(db, new, old) for old, new in zip(a.get("item_ids", []), a.get("new_item_ids", []), strict=False)
        ]
        terms.append(_payment_term(db, a.get("payment_method_id", ""), "payment method"))
        terms += _amounts(_prices(db, order_id, a.get("item_ids", [])), None)
        terms += _amounts([v["price"] for v in map(lambda i: variant_info(db, i), a.get("new_item_ids", [])) if v], None)
        if tool == "return_items":
            terms += _amounts([sum(_prices(db, order_id, a.get("item_ids", [])))], "refund")
        else:
            diff = price_difference(db, order_id, a.get("item_ids", []), a.get("new_item_ids", [])) or 0.0
            terms += _amounts([abs(diff)], "charge" if diff > 0 else "refund" if diff < 0 else None)
    return terms


def _item_term(
    db: sqlite3.Connection, variant_id: str, role: str, order_id: str, called: list[str], required: bool = True
) -> Term:
    """An item of the order by its id, or by its product's name with the options that tell it from the order's
    other items of that product (none, when it is the only one). The options of those the call leaves alone may
    not be said with it; those of the call's other items may ("the 12-inch and the 8-inch skillets")."""
    v = variant_info(db, variant_id)
    others = {i: variant_info(db, i) for i in _order_items(db, order_id) if i != variant_id}
    same_product = {i: o["options"] for i, o in others.items() if o and v and o["product_id"] == v["product_id"]}
    return _described_item(
        db,
        variant_id,
        role,
        list(same_product.values()),
        required,
        unlike=[o for i, o in same_product.items() if i not in called],
    )


def _new_item_term(db: sqlite3.Connection, variant_id: str, replaced: str) -> Term:
    """A replacement by its id, or by its product's name with every option that changes from the item it replaces
    (whose options a proposal says too, as what is given up: "the white speakers for the walnut ones")."""
    old = variant_info(db, replaced)
    rivals = [old["options"]] if old else []
    return _described_item(db, variant_id, "new item", rivals, replaced=rivals)


def _described_item(
    db: sqlite3.Connection,
    variant_id: str,
    role: str,
    rivals: list[dict[str, Any]],
    required: bool = True,
    unlike: list[dict[str, Any]] = (),
    replaced: list[dict[str, Any]] = (),
) -> Term:
    """By id, or by product name with ``words``: its options that differ from the ``rivals``'; what differs in
    ``unlike`` must not be said with it, what differs in ``replaced`` only as given up."""
    v = variant_info(db, variant_id)
    if v is None:
        return Term("id", variant_id, role, required=required)
    keys = [k for k, o in v["options"].items() if any(r.get(k) != o for r in rivals)]

    def differing(others: list[dict[str, Any]]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(r[k]) for r in others for k in keys if r.get(k) not in (None, v["options"][k])))

    described = Term(
        "description",
        v["product_name"],
        role,
        words=tuple(str(v["options"][k]) for k in keys),
        unlike=differing(unlike),
        replaced=differing(replaced),
    )
    return Term("id", variant_id, role, required=required, alternatives=(described,))


def _payment_term(db: sqlite3.Connection, method_id: str, role: str, required: bool = True) -> Term:
    """A payment method by its id or as its owner knows it: a card by its ending, a gift card or PayPal
    account by name when the customer has only one such."""
    m = one(db, "SELECT customer_id, kind, brand, last_four FROM payment_methods WHERE id = ?", method_id)
    if m is None:
        return Term("id", method_id, role, required=required)
    alternatives: list[Term] = []
    if m["kind"] == "credit_card":
        alternatives.append(Term("card_ending", m["last_four"], role))
    same_kind = one(
        db, "SELECT COUNT(*) AS n FROM payment_methods WHERE customer_id = ? AND kind = ?", m["customer_id"], m["kind"]
    )
    if same_kind and same_kind["n"] == 1:
        alternatives.append(
            Term("phrase", {"gift_card": "gift card", "paypal": "PayPal"}.get(m["kind"], f"{m['brand']} card"), role)
        )
    return Term("id", method_id, role, required=required, alternatives=tuple(alternatives))


def _prices(db: sqlite3.Connection, order_id: str, item_ids: list[str]) -> list[float]:
    found = [one(db, "SELECT price FROM order_items WHERE order_id = ? AND variant_id = ?", order_id, i) for i in item_ids]
    return [f["price"] for f in found if f]


def _amounts(amounts: Any, direction: str | None) -> list[Term]:
    """Amounts a proposal may state, each optional; a total of several is one of them too."""
    values = [round(a, 2) for a in amounts]
    if len(values) > 1:
        values.append(round(sum(values), 2))
    return [Term("money", f"{v:.2f}", "amount", required=False, direction=direction) for v in dict.fromkeys(values)]  # type: ignore[arg-type]


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


def authenticate(identity: Customer, text: str) -> Action | None:
    """The identity lookup the customer's words so far allow: their email as written, else name and zip."""
    assert isinstance(identity, Shopper)
    if email := _EMAIL.search(text):
        return Action(tool="find_customer_by_email", args={"email": email.group()})
    named = all(
        re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text, re.IGNORECASE) for n in (identity.first_name, identity.last_name)
    )
    zip_code = _ZIP.search(text)
    if named and zip_code:
        return Action(
            tool="find_customer_by_name_zip",
            args={"first_name": identity.first_name, "last_name": identity.last_name, "zip": zip_code.group()},
        )
    return None


def near_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
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
    others = rows(
        db, "SELECT id, status FROM orders WHERE customer_id = ? AND id != ? ORDER BY id", order["customer_id"], order["id"]
    )
    others.sort(key=lambda o: o["status"] != order["status"])  # the mistake most likely to go through first
    for other in others:
        items = _order_items(db, other["id"])[: len(chosen)] if chosen else []
        moved = _with_items(db, {**a, "order_id": other["id"]}, items) if chosen else {**a, "order_id": other["id"]}
        if moved is not None and (not chosen or len(items) == len(chosen)):
            out.append(NearMiss("wrong_order", Action(tool=action.tool, args=moved), "wrong_entity_write"))
            break
    spare = [i for i in _order_items(db, order["id"]) if i not in chosen]
    swapped = _with_items(db, a, [*chosen[:-1], spare[0]]) if chosen and spare else None
    if swapped is not None:
        out.append(NearMiss("wrong_item", Action(tool=action.tool, args=swapped), "wrong_arguments"))
    if other_new := _other_new_item(db, a):
        out.append(NearMiss("wrong_new_item", Action(tool=action.tool, args=other_new), "wrong_arguments"))
    return out


def _other_new_item(db: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any] | None:
    """An exchange for another available option of the last new item's product than the one asked for (black, not
    walnut), neither the one asked for nor the one given back."""
    new_items, old_items = args.get("new_item_ids") or [], args.get("item_ids") or []
    if not new_items or len(old_items) != len(new_items):
        return None
    other = one(
        db,
        "SELECT v.id FROM variants v JOIN variants new ON new.product_id = v.product_id"
        " WHERE new.id = ? AND v.id NOT IN (?, ?) AND v.available = 1 ORDER BY v.id",
        new_items[-1],
        new_items[-1],
        old_items[-1],
    )
    return None if other is None else {**args, "new_item_ids": [*new_items[:-1], other["id"]]}


def _order_items(db: sqlite3.Connection, order_id: str) -> list[str]:
    return [
        i["variant_id"] for i in rows(db, "SELECT variant_id FROM order_items WHERE order_id = ? ORDER BY variant_id", order_id)
    ]


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
    pairs = zip(a.get("item_ids", []), a.get("new_item_ids", []), strict=False)
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


def names_entity(db: sqlite3.Connection, value: str, said: str) -> bool:
    """Whether the customer's words name ``value``: a payment method by its ending, or by its kind (or a
    card by its brand) when the customer has only one such."""
    return any(named(said, alt) for alt in _payment_term(db, value, "").alternatives)
