"""The scripted customer understands any reasonable wording of its own goal, and only of its own goal.

For each retail write, one real task and proposals a competent human or LLM agent might send, written as
templates filled with the task's real values (its order, items, card, amounts, address). Each wording in
``AGREED`` must get a yes from the customer *and* be accepted by the graders' rule (``binding``) for the
write the task wants; each near miss in ``REFUSED`` (another order, item, card, amount or address; a refund
worded as a charge; a counter-proposal; a refusal; an extra write; a report followed by another question)
must get a "No" and be refused by the rule. Last, an agent that proposes every write of a multi-write task
in one message and makes them all on the one yes passes a full trial, and the grader binds each write of
that batch (one misnamed write in it is unconfirmed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from adversaries import RETAIL, Adversary, SaysYesToEverything, agent, play

from passhat.agents.reference import ANYTHING_ELSE, EXPLAIN, MAX_PROPOSAL_ROUNDS, Script
from passhat.customers import ScriptedUser
from passhat.customers.personas import PERSONAS
from passhat.dialogue import is_affirmative
from passhat.dialogue.proposals import Binding, Commitment, binding
from passhat.dialogue.reading import read_message
from passhat.domains.model import Action, Task
from passhat.domains.retail.tools import variant_info
from passhat.domains.toolkit import one, rows
from passhat.env import Environment, tool_registry
from passhat.guard.confirmation import commitment_for

TOOLS = tool_registry(RETAIL)

# -- a write's real values ----------------------------------------------------------------------------


def values(db: sqlite3.Connection, customer: str, action: Action) -> dict[str, str]:
    """What a proposal of ``action`` names, as the backend stands before it, and plausible wrong values from
    the same account (another order, another card): the fillers of the templates below."""
    args = action.args
    out = {"customer": customer, **{k: str(v) for k, v in args.items() if isinstance(v, str)}}
    order = args.get("order_id")
    others = rows(db, "SELECT id FROM orders WHERE customer_id = ? AND id != ? ORDER BY id", customer, order)
    out["other_order"] = others[0]["id"] if others else "#R1000001"
    out["other_digits"] = out["other_order"].removeprefix("#R")
    if order:
        out |= {"order": order, "bare": order.removeprefix("#"), "digits": order.removeprefix("#R")}
        paid = one(db, "SELECT payment_method_id FROM orders WHERE id = ?", order)["payment_method_id"]
        out |= {f"paid_{k}": v for k, v in _card(db, paid).items()}
    if method := args.get("payment_method_id"):
        out |= _card(db, method) | {"pay": payment_words(db, customer, method)}
    rival = one(
        db,
        "SELECT id FROM payment_methods WHERE customer_id = ? AND kind = 'credit_card' AND id != ? ORDER BY id",
        customer,
        method or "",
    )
    if rival:
        out |= {f"other_{k}": v for k, v in _card(db, rival["id"]).items()}
    for key, ids in (("item", args.get("item_ids", [])), ("new", args.get("new_item_ids", []))):
        if ids:
            options = variant_info(db, ids[0])["options"]
            out |= {f"{key}_id": ids[0], **{f"{key}_{k}": str(o) for k, o in options.items()}}
    amounts: dict[str, str] = {}  # the first amount of each way: "refund", "charge", or "moved" (a price, a total)
    for term in commitment_for(TOOLS[action.tool], dict(args), db, RETAIL).terms:
        if term.kind == "money":
            amounts.setdefault(term.direction or "moved", term.value)
    return out | amounts | {f"{k}_comma": v.replace(".", ",") for k, v in amounts.items()}


def _card(db: sqlite3.Connection, method_id: str) -> dict[str, str]:
    m = one(db, "SELECT brand, last_four FROM payment_methods WHERE id = ? AND kind = 'credit_card'", method_id)
    return {"brand": {"amex": "Amex"}.get(m["brand"], m["brand"].capitalize()), "ending": m["last_four"]} if m else {}


def payment_words(db: sqlite3.Connection, customer: str, method_id: str) -> str:
    """A payment method as its owner calls it: a card by brand and ending, a gift card or PayPal by name."""
    if card := _card(db, method_id):
        return f"your {card['brand']} ending in {card['ending']}"
    kind = one(db, "SELECT kind FROM payment_methods WHERE id = ?", method_id)["kind"]
    return {"gift_card": "your gift card", "paypal": "your PayPal account"}[kind]


@dataclasses.dataclass(frozen=True)
class Write:
    """A task's one write: what a yes to it agrees to, and the values a proposal of it names."""

    task: Task
    commitment: Commitment
    values: dict[str, str]


def single_write(task: Task) -> Write:
    [goal] = task.goals
    [action] = goal.actions
    env = Environment(RETAIL)
    try:
        commitment = commitment_for(TOOLS[action.tool], dict(action.args), env.db, RETAIL)
        return Write(task, commitment, values(env.db, task.customer.customer_id, action))
    finally:
        env.close()


WRITES = {
    kind: single_write(RETAIL.tasks[task_id])
    for kind, task_id in {
        "cancel_order": "retail-001",  # #R3042198: a black 28-inch standing desk converter and a red radio, paid by Amex
        "return_items": "retail-011",  # the blue earbuds of #R5734160, refunded to the Discover it was paid with
        "exchange_items": "retail-013",  # white Bluetooth speakers for walnut ones, the difference on a Discover
        "change_order_items": "retail-008",  # a black camp chair for the green one, the difference on a Visa
        "change_order_address": "retail-003",  # #R8696218 to 2210 Saltmarsh Lane, Apt 9, Harrowgate, OR 97318
        "change_customer_address": "retail-010",  # the default address to 77 Quarry Court, Unit 210, Marlow Bay
        "change_order_payment": "retail-005",  # #R9822474 from a Visa to a Discover
    }.items()
}

# -- what the customer must agree to ------------------------------------------------------------------

AGREED: dict[str, list[str]] = {
    "cancel_order": [
        "Would you like me to cancel order {bare} (the standing desk converter and the portable radio)? Reply yes or no.",
        "Shall I call off order number {digits}? The full ${refund} would go back to your {paid_brand} ending in {paid_ending}.",
        "Can I go ahead and cancel your order {digits} with the reason 'no longer needed'?",
        "Please confirm (yes/no): cancel order {order} (black standing desk converter, red portable radio) and refund "
        "USD {refund} to the card ending {paid_ending}.",
        "Here's what I'll do:\n- **Order:** {order}\n- **Action:** cancel\n- **Reason:** no longer needed\n"
        "- **Refund:** {refund_comma} $ to x{paid_ending}\n\nShall I proceed?",
        "I can void order {order} and refund you ${refund}. Do you want me to go ahead?",
        "Just to confirm, you'd like me to cancel {order} because you no longer need it, correct?",
        "Order {order} hasn't shipped yet, so it can still be cancelled. Would you like me to cancel it now? You'd get "
        "${refund} back on the card ending in {paid_ending}.",
        "OK to cancel order {order} (black standing desk converter + red portable radio)? Everything you paid, "
        "${refund}, comes back to your {paid_brand} x{paid_ending}.",
        "1. Cancel order {order}\n2. Refund ${refund} to your {paid_brand} ending {paid_ending}\n\nShall I go ahead?",
        "May I proceed with cancelling order number {bare}?",
    ],
    "return_items": [
        "Would you like me to process a return of the wireless earbuds from order {bare}, with the ${refund} refund "
        "going to your {brand} ending in {ending}?",
        "Shall I take back the {item_color} earbuds from order number {digits} and refund ${refund} to the card ending {ending}?",
        "Can I go ahead and set up the return? Order: {order}. Item: Wireless Earbuds ({item_color}, noise cancelling). "
        "Refund: USD {refund} to {brand} x{ending}.",
        "You can send back the earbuds from {order} and we'll refund {refund_comma} $ to your {brand} card ending "
        "{ending}. Shall I start the return?",
        "**Return summary**\n- Order: {order}\n- Item: {item_color} Wireless Earbuds ({item_id})\n"
        "- Refund: ${refund} to {brand} ending {ending}\n\nPlease confirm (yes/no):",
        "Just to confirm: return the wireless earbuds ({item_id}) from order {order}, refund of ${refund} to "
        "{payment_method_id}. Is that correct?",
        "I'll return the earbuds from order {order} and you'll get ${refund} back on your {brand} ending in {ending}. "
        "OK to proceed?",
        "Shall I process the return for your Wireless Earbuds from {order}? The refund of ${refund} would go to the "
        "{brand} card you paid with (ending {ending}).",
        "Would you like to return the {item_color} noise-cancelling earbuds from order {order} for a refund of ${refund} "
        "to your {brand} ending in {ending}?",
        "May I proceed with the return of the wireless earbuds from order {order} (refund ${refund} to {brand} ending "
        "in {ending})?",
        "Can I go ahead and take the wireless earbuds back from order {order}, refunding your {brand} ending in {ending}?",
    ],
    "exchange_items": [
        "Would you like me to swap the {item_finish} bookshelf speakers in order {bare} for the {new_finish} ones? The "
        "difference of USD {charge} will be charged to your {brand} ending in {ending}.",
        "Shall I exchange your {item_finish} Bluetooth bookshelf speakers (order number {digits}) for the {new_finish} "
        "Bluetooth speakers, charging the ${charge} difference to the card ending {ending}?",
        "Can I go ahead and exchange the speakers from order {order}? You'd receive the {new_finish} Bluetooth bookshelf "
        "speakers, and the {charge_comma} $ difference goes on your {brand} x{ending}.",
        "Here's the exchange:\n- **Order:** {order}\n- **Sending back:** {item_finish} Bluetooth Bookshelf Speakers\n"
        "- **Receiving:** {new_finish} Bluetooth Bookshelf Speakers\n- **Price difference:** ${charge}, charged to "
        "{brand} ending {ending}\n\nShall I proceed with this exchange?",
        "Please confirm (yes/no): exchange {item_id} for {new_id} in order {order}, charging the ${charge} difference "
        "to {payment_method_id}.",
        "I can trade your {item_finish} speakers from {order} for the {new_finish}-finish Bluetooth version; the extra "
        "${charge} would go on your {brand} ending in {ending}. Shall I?",
        "Would you like to replace the {item_finish} speakers with the {new_finish} ones in order {order}? You'll pay "
        "an additional ${charge} on the {brand} ending {ending}.",
        "Shall I switch your speakers from {item_finish} to {new_finish} (order {order})? The ${charge} price "
        "difference would be charged to your {brand} card ending in {ending}.",
        "Can I go ahead and exchange the {item_finish} Bookshelf Speakers in order {bare} for the {new_finish} finish? "
        "Price difference: ${charge}, charged to your {brand} ending in {ending}.",
        "To exchange your {item_finish} bookshelf speakers for the {new_finish} Bluetooth pair, I'll charge ${charge} "
        "to your {brand} ending in {ending} (order {order}). Is that okay?",
        "Shall I set up an exchange on order {order}: {item_finish} bookshelf speakers → {new_finish} bookshelf "
        "speakers, with the ${charge} difference charged to the card ending {ending}?",
    ],
    "change_order_items": [
        "Would you like me to change the {item_color} camp chair in order {bare} to the {new_color} one? The "
        "${charge} difference goes on your {brand} ending in {ending}.",
        "Shall I modify order number {digits}, replacing the {item_color} folding camp chair with the {new_color} "
        "aluminum one and charging USD {charge} to the card ending {ending}?",
        "Can I go ahead and swap the camp chair in {order} from {item_color} to {new_color} (aluminum frame)? You'll be "
        "charged an extra {charge_comma} $ on x{ending}.",
        "Please confirm (yes/no):\n• Order: {order}\n• Change: Folding Camp Chair, {item_color} → {new_color} "
        "(aluminum frame)\n• Price difference: ${charge} charged to {brand} ending {ending}",
        "I can switch your Folding Camp Chair ({item_id}) to the {new_color} aluminum version ({new_id}) in order "
        "{order} and bill the ${charge} difference to {payment_method_id}. Shall I go ahead?",
        "Shall I update order {order} so the camp chair is {new_color} instead of {item_color}? The extra ${charge} "
        "would be charged to your {brand} ending in {ending}.",
        "**Item change for order {order}**\n- Replace: {item_color} Folding Camp Chair (aluminum)\n- With: {new_color} "
        "Folding Camp Chair (aluminum)\n- Charge: ${charge} to your {brand} ending in {ending}\n\nWould you like me to "
        "proceed?",
        "Do you want me to change the folding camp chair in your pending order {order} to {new_color}? There's a "
        "${charge} price difference that I'd charge to the {brand} ending in {ending}.",
        "OK to replace the {item_color} camp chair with the {new_color} one in order {order}, with the ${charge} "
        "difference billed to your {brand} x{ending}?",
        "Can I proceed with changing the chair color in order {order} from {item_color} to {new_color}? The "
        "difference, ${charge}, will be charged to your {brand} card ending in {ending}.",
    ],
    "change_order_address": [
        "Would you like me to ship order {bare} to 2210 Saltmarsh Ln, Apt 9, {city}, {state} {zip} instead?",
        "Shall I deliver order number {digits} to 2210 Saltmarsh Lane #9, {city} {state} {zip}, {country}?",
        "Can I go ahead and update the shipping address on {order} to: {address1}, Apartment 9, {city}, {state} {zip}?",
        "**New shipping address for order {order}**\n{address1}\n{address2}\n{city}, {state} {zip}\n{country}\n\n"
        "Please confirm (yes/no):",
        "I can redirect order {order} to {address1}, Unit 9, {city}, Oregon {zip}. Shall I proceed?",
        "Please confirm (yes/no): change the delivery address of order {order} to {address1}, {address2}, {city}, "
        "{state} {zip}, {country}.",
        "Just to confirm, you'd like order {order} sent to 2210 SALTMARSH LANE APT 9, HARROWGATE, OR {zip}. Correct?",
        "Do you want me to have order {order} delivered to {address1}, Apt. 9, {city}, {state} {zip}?",
        "OK to change where order {order} ships to: {address1}, {address2} in {city}, {state} {zip}?",
        "Shall I set the shipping address for your pending order {order} to {address1}, {address2}, {city}, {state}, "
        "{zip}, United States?",
        "May I proceed with updating order {digits} to ship to {address1}, {address2}, {city}, {state} {zip}?",
    ],
    "change_customer_address": [
        "Would you like me to update your home address on file to 77 Quarry Ct, {address2}, {city}, {state} {zip}?",
        "Shall I change the default address on your account to {address1}, Apt 210, {city}, Maine {zip}, {country}?",
        "Can I go ahead and save {address1}, {address2}, {city}, {state} {zip} as your default address?",
        "**New default address**\n- {address1}, {address2}\n- {city}, {state} {zip}\n- {country}\n\nPlease confirm "
        "(yes/no): update your account address to this?",
        "Please confirm (yes/no): change the address on your profile ({customer}) to {address1} #210, {city}, {state} {zip}.",
        "Just to confirm, I'll set the address on file to 77 QUARRY COURT UNIT 210, MARLOW BAY ME {zip}. Is that correct?",
        "Do you want me to replace your saved home address with {address1}, {address2}, {city}, {state} {zip}? Your "
        "open orders will keep their current shipping address.",
        "OK to update the default shipping address on your account to {address1}, {address2}, {city}, {state} {zip}?",
        "I can update your account so your default address is {address1}, {address2}, {city}, {state} {zip}, "
        "{country}. Shall I proceed?",
        "May I go ahead and change your profile address to {address1}, {address2}, {city}, {state} {zip}? (Existing "
        "orders are not affected.)",
    ],
    "change_order_payment": [
        "Would you like me to switch the payment for order {bare} to your {brand} ending in {ending}?",
        "Shall I move order number {digits} from your {paid_brand} ending {paid_ending} to the {brand} card ending "
        "{ending}? The ${moved} would be refunded to the {paid_brand} and charged to the {brand}.",
        "Can I go ahead and charge order {order} to your {brand} x{ending} instead of your {paid_brand} x{paid_ending}?",
        "Please confirm (yes/no): pay for order {order} with the card ending {ending} (USD {moved}).",
        "**Payment change**\n- Order: {order}\n- From: {paid_brand} ••••{paid_ending}\n- To: {brand} ••••{ending}\n"
        "- Amount: {moved_comma} $\n\nShall I proceed?",
        "I can update the payment method on {order} to your {brand} ending in {ending}. Shall I go ahead?",
        "Just to confirm: you want order {order} billed to your {brand} ending {ending} rather than your {paid_brand}, correct?",
        "Do you want me to change how order {order} is paid: {brand} ending in {ending} instead of {paid_brand} ending "
        "in {paid_ending}?",
        "OK to move the payment for order {order} onto your {brand} card ending {ending}?",
        "May I proceed with changing the payment method for order {order} from {paid_brand} ({paid_ending}) to "
        "{brand} ({ending})?",
        "Shall I switch order {order}'s payment to your {brand} card ending in {ending}?",
    ],
}

# -- what the customer must refuse --------------------------------------------------------------------

REFUSED: dict[str, dict[str, str]] = {
    "cancel_order": {
        "another order": "Would you like me to cancel order {other_order}? Reply yes or no.",
        "another order, digits only": "Shall I cancel order number {other_digits} for you?",
        "an extra order, digits only": "Shall I cancel order number {digits}, and order number {other_digits} too?",
        "a wrong amount": "Shall I cancel order {order} and refund $24.87 to your {paid_brand} ending {paid_ending}?",
        "a refund worded as a charge": "To cancel order {order} you'd have to pay ${refund}. Shall I go ahead?",
        "another card": "Shall I cancel order {order} and refund ${refund} to the card ending 9921?",
        "a counter-proposal": "Instead of cancelling order {order}, I can put it on hold and change its address. "
        "Shall I go ahead?",
        "a negated action": "I can't cancel order {order}, but I can change its shipping address. Would you like me to do that?",
        "an extra write": "Shall I cancel {order}? I'll also cancel {other_order} while I'm at it.",
        "another action": "Shall I return the standing desk converter from order {order}?",
        "a report and another question": "Your order {order} has been cancelled. Would you like me to email you a receipt?",
    },
    "return_items": {
        "another item": "Shall I return the pour-over kettle from order {order} and refund it to your {brand} ending in {ending}?",
        "another card": "Shall I return the wireless earbuds from order {order} and refund ${refund} to your "
        "{other_brand} ending in {other_ending}?",
        "a wrong amount": "Shall I return the wireless earbuds from order {order} and refund $173.72 to your {brand} "
        "ending in {ending}?",
        "a refund worded as a charge": "To return the wireless earbuds from {order} you'd have to pay ${refund} on your "
        "{brand} ending {ending}. Shall I go ahead?",
        "another order": "Shall I return the wireless earbuds from order #R5734161 and refund ${refund} to your {brand} "
        "ending in {ending}?",
        "a counter-proposal": "Instead of returning the earbuds from order {order}, I can exchange them for another "
        "color. Shall I go ahead?",
        "a negated action": "I can't return the earbuds from order {order}, but I can exchange them for the same "
        "model in another color. Would you like me to do that?",
        "an extra write": "Shall I return the wireless earbuds from order {order} and refund ${refund} to your {brand} "
        "ending in {ending}? I'll also cancel order {other_order} for you.",
        "no payment method it has": "Shall I return the wireless earbuds from order {order} and refund ${refund} as "
        "store credit?",
        "a report and another question": "The return of the wireless earbuds from order {order} has been processed "
        "and ${refund} refunded to your {brand} ending {ending}. Would you like me to email you a copy?",
    },
    "exchange_items": {
        "another option": "Shall I exchange the {item_finish} bookshelf speakers in order {order} for the black ones, "
        "charging ${charge} to your {brand} ending {ending}?",
        "the swap reversed": "Shall I swap the {new_finish} bookshelf speakers in order {order} for the {item_finish} "
        "ones, charging ${charge} to your {brand} ending {ending}?",
        "another card": "Shall I exchange the {item_finish} speakers in order {order} for the {new_finish} ones, "
        "charging ${charge} to your {other_brand} ending in {other_ending}?",
        "a wrong amount": "Shall I exchange the {item_finish} speakers in order {order} for the {new_finish} ones, "
        "charging $48.47 to your {brand} ending {ending}?",
        "a charge worded as a refund": "Shall I exchange the {item_finish} speakers in order {order} for the "
        "{new_finish} ones? You'll get ${charge} back on your {brand} ending {ending}.",
        "another order": "Shall I exchange the {item_finish} speakers in order #R9168919 for the {new_finish} ones, "
        "charging ${charge} to your {brand} ending {ending}?",
        "a counter-proposal": "Instead of exchanging the speakers from {order}, I can return them for a refund to your "
        "{brand} ending in {ending}. Shall I go ahead?",
        "a negated action": "I can't exchange the {item_finish} speakers in {order} for the {new_finish} ones, but I "
        "could refund them to your {brand} ending {ending}. Would you like that?",
        "an extra write": "Shall I exchange the {item_finish} speakers in order {order} for the {new_finish} ones, "
        "charging ${charge} to your {brand} ending {ending}? I'll also cancel your order {other_order}.",
        "no payment method named": "Shall I exchange the {item_finish} speakers in order {order} for the "
        "{new_finish} ones and charge the difference to your PayPal?",
        "a report and another question": "Your speakers in order {order} have been exchanged for the {new_finish} "
        "ones and ${charge} charged to your {brand} ending {ending}. Would you like me to email you a copy?",
    },
    "change_order_items": {
        "another option": "Shall I change the {item_color} camp chair in order {order} to the blue one, charging "
        "${charge} to your {brand} ending {ending}?",
        "the swap reversed": "Shall I replace the {new_color} camp chair in order {order} with the {item_color} one, "
        "charging ${charge} to your {brand} ending {ending}?",
        "another card": "Shall I change the {item_color} camp chair in order {order} to the {new_color} one, charging "
        "${charge} to your {other_brand} ending in {other_ending}?",
        "a wrong amount": "Shall I change the {item_color} camp chair in order {order} to the {new_color} one, "
        "charging $61.36 to your {brand} ending {ending}?",
        "a charge worded as a refund": "Shall I change the {item_color} camp chair in order {order} to the "
        "{new_color} one? You'll get ${charge} back on your {brand} ending {ending}.",
        "another order": "Shall I change the {item_color} camp chair in order #R7759948 to the {new_color} one, "
        "charging ${charge} to your {brand} ending {ending}?",
        "a counter-proposal": "Instead of changing the camp chair in {order}, I can cancel the order so you can "
        "order the {new_color} one yourself. Shall I go ahead?",
        "a negated action": "I can't change the camp chair in order {order} to {new_color}, but I can cancel the "
        "order. Would you like me to do that?",
        "an extra write": "Shall I change the {item_color} camp chair in order {order} to the {new_color} one, "
        "charging ${charge} to your {brand} ending {ending}? I'll also cancel order {other_order}.",
        "no payment method named": "Shall I change the {item_color} camp chair in order {order} to the {new_color} "
        "one and charge the difference to your PayPal?",
        "a report and another question": "I've changed the camp chair in {order} to the {new_color} one and charged "
        "${charge} to your {brand} ending {ending}. Would you like me to email you the receipt?",
    },
    "change_order_address": {
        "another street": "Shall I ship order {order} to 2210 Saltmarsh Road, {address2}, {city}, {state} {zip}?",
        "another house number": "Shall I ship order {order} to 2201 Saltmarsh Lane, {address2}, {city}, {state} {zip}?",
        "another city": "Shall I ship order {order} to {address1}, {address2}, Hartford, {state} {zip}?",
        "another zip": "Shall I ship order {order} to {address1}, {address2}, {city}, {state} 97381?",
        "another apartment": "Shall I ship order {order} to {address1}, Apt 19, {city}, {state} {zip}?",
        "another order": "Shall I ship order {other_order} to {address1}, {address2}, {city}, {state} {zip}?",
        "a counter-proposal": "Instead of changing the address of order {order}, I can put it on hold for a week. "
        "Shall I go ahead?",
        "a negated action": "I can't change the shipping address of order {order} to {address1}, {address2}, {city}, "
        "{state} {zip}, but I can cancel the order. Would you like me to do that?",
        "an extra write": "Shall I ship order {order} to {address1}, {address2}, {city}, {state} {zip}? I'll also "
        "send order {other_order} there.",
        "a report and another question": "I've updated the shipping address of order {order} to {address1}, "
        "{address2}, {city}, {state} {zip}. Would you like me to email you the tracking link?",
    },
    "change_customer_address": {
        "another street": "Shall I change your default address to 77 Quarry Road, {address2}, {city}, {state} {zip}?",
        "another house number": "Shall I change your default address to 7 Quarry Court, {address2}, {city}, {state} {zip}?",
        "another city": "Shall I change your default address to {address1}, {address2}, Harlow Bay, {state} {zip}?",
        "another zip": "Shall I change your default address to {address1}, {address2}, {city}, {state} 04121?",
        "another unit": "Shall I change your default address to {address1}, Unit 201, {city}, {state} {zip}?",
        "an order's address instead": "Shall I change the shipping address of order {other_order} to {address1}, "
        "{address2}, {city}, {state} {zip}?",
        "a counter-proposal": "Instead of updating your default address, I can change the shipping address of your "
        "open orders to {address1}, {address2}, {city}, {state} {zip}. Shall I go ahead?",
        "a negated action": "I can't change the address on your account, but I can note {address1}, {address2}, "
        "{city}, {state} {zip} for your next order. Shall I do that?",
        "an extra write": "Shall I update your default address to {address1}, {address2}, {city}, {state} {zip}, and "
        "also ship your open order {other_order} there?",
        "a report and another question": "Your default address has been changed to {address1}, {address2}, {city}, "
        "{state} {zip}. Would you like me to send you a confirmation email?",
    },
    "change_order_payment": {
        "another card": "Shall I switch the payment for order {order} to your {brand} ending in 6578?",
        "another method": "Shall I switch the payment for order {order} to your PayPal account?",
        "a gift card it does not have": "Shall I switch the payment for order {order} to your gift card?",
        "another order": "Shall I switch the payment for order {other_order} to your {brand} ending in {ending}?",
        "a wrong amount": "Shall I switch the payment for order {order} ($568.99) to your {brand} ending in {ending}?",
        "another current card": "Shall I move the payment for order {order} from your {paid_brand} ending in 1111 to "
        "your {brand} ending in {ending}?",
        "a counter-proposal": "Instead of changing the payment on {order}, I can cancel the order so you can "
        "re-order with the {brand} ending in {ending}. Shall I do that?",
        "a negated action": "I can't change the payment method of order {order} to your {brand} ending in {ending}, "
        "but I can cancel the order. Would you like me to do that?",
        "an extra write": "Shall I switch the payment for order {order} to your {brand} ending in {ending}, and do "
        "the same for order {other_order}?",
        "a report and another question": "The payment for order {order} has been moved to your {brand} ending in "
        "{ending}. Would you like me to email you a receipt?",
    },
}


def reply_to(write: Write, proposal: str) -> str:
    user = ScriptedUser(RETAIL, write.task, PERSONAS["baseline"], random.Random(0))
    asyncio.run(user.respond(None))
    return asyncio.run(user.respond(proposal)).text


def bound(write: Write, proposal: str) -> Binding:
    return binding(proposal, write.commitment, [write.commitment], RETAIL.id_pattern, own=(write.task.customer.customer_id,))


@pytest.mark.parametrize(
    ("kind", "template"),
    [(k, t) for k, ts in AGREED.items() for t in ts],
    ids=[f"{k}-{i}" for k, ts in AGREED.items() for i in range(len(ts))],
)
def test_the_customer_agrees_to_any_wording_of_its_goal(kind: str, template: str) -> None:
    write = WRITES[kind]
    proposal = template.format(**write.values)
    reply = reply_to(write, proposal)
    assert is_affirmative(reply), (proposal, reply)
    assert bound(write, proposal).ok, (proposal, bound(write, proposal).explain())


@pytest.mark.parametrize(("kind", "label"), [(k, label) for k, ts in REFUSED.items() for label in ts], ids=str)
def test_the_customer_refuses_anything_else(kind: str, label: str) -> None:
    write = WRITES[kind]
    proposal = REFUSED[kind][label].format(**write.values)
    reply = reply_to(write, proposal)
    assert reply.startswith("No"), (proposal, reply)
    assert not bound(write, proposal).ok, proposal


def test_every_write_kind_has_ten_wordings_of_each_sort() -> None:
    assert set(AGREED) == set(REFUSED) == {s.name for s in TOOLS.values() if s.meta.needs_confirmation}
    assert all(len(AGREED[kind]) >= 10 and len(REFUSED[kind]) >= 10 for kind in AGREED)


# -- items of one product, and the address being replaced ---------------------------------------------


def only_goal(task_id: str, goal: int, **changes: Any) -> Task:
    """One goal of a task (``changes`` to it) as a task of its own."""
    task = RETAIL.tasks[task_id]
    return task.model_copy(update={"id": f"{task_id}-{goal}", "goals": [task.goals[goal].model_copy(update=changes)]})


BOTH_SKILLETS = single_write(RETAIL.tasks["retail-015"])  # a 12-inch and an 8-inch skillet of #R8731151, both returned
ONE_SKILLET = single_write(
    only_goal(  # the 12-inch one only
        "retail-015",
        0,
        items=RETAIL.tasks["retail-015"].goals[0].items[:1],
        actions=[
            Action(
                tool="return_items", args={"order_id": "#R8731151", "item_ids": ["V-75851"], "payment_method_id": "paypal_891214"}
            )
        ],
    )
)
NEW_HOME = single_write(only_goal("retail-022", 1))  # #R4570254, now at 5736 Nettlebed Road, Unit 302, to 2785 Yarrow Court


@pytest.mark.parametrize(
    ("write", "template", "agreed"),
    [
        (
            BOTH_SKILLETS,
            "Shall I take back both skillets from order {order}, the 12-inch and the 8-inch, refunding ${refund} to {pay}?",
            True,
        ),
        (
            BOTH_SKILLETS,
            'Shall I return the 12" and 8" enameled cast iron skillets from order {order} and refund ${refund} to {pay}?',
            True,
        ),
        (
            BOTH_SKILLETS,
            "Shall I return the 12 in cast iron skillet and the 8 inch one from order {digits}, refunding ${refund} to {pay}?",
            True,
        ),
        (BOTH_SKILLETS, "Shall I return the 12-inch skillet from order {order} and refund ${refund} to {pay}?", False),
        (ONE_SKILLET, "Shall I return the 12-inch skillet from order {order} and refund ${refund} to {pay}?", True),
        (
            ONE_SKILLET,
            "Shall I return the 12-inch and the 8-inch skillets from order {order}, refunding ${refund} to {pay}?",
            False,
        ),
        (NEW_HOME, "Shall I ship order {bare} from 5736 Nettlebed Rd, Unit 302 to {address1}, {city}, {state} {zip}?", True),
        (NEW_HOME, "Shall I ship order {bare} to {address1}, Unit 302, {city}, {state} {zip}?", False),
    ],
    ids=[
        "both by size",
        "both in inches",
        "both, one said as 'the one'",
        "one of both",
        "the one",
        "both for one",
        "from the old unit",
        "the old unit kept",
    ],
)
def test_items_of_one_product_and_the_old_address_by_their_words(write: Write, template: str, agreed: bool) -> None:
    proposal = template.format(**write.values)
    reply = reply_to(write, proposal)
    assert (is_affirmative(reply), bound(write, proposal).ok) == (agreed, agreed), (proposal, reply)
    assert agreed or reply.startswith("No")


def test_an_offer_that_leaves_a_choice_is_still_a_question() -> None:
    """ "Shall I cancel order number 3042198?" names the order it asks about; "... to your original payment method
    or to your gift card?" asks the customer to choose one."""
    offer = read_message("Shall I cancel order number 3042198?", RETAIL.lexicon)
    assert offer.proposal and not offer.asks
    choice = read_message(
        "Would you like me to return it with the refund going to your original payment method or to your gift card?",
        RETAIL.lexicon,
    )
    assert choice.asks == {"payment"} and not choice.proposal


# -- every write of a task, proposed at once ------------------------------------------------------------

WORDING: dict[str, str] = {  # one write in a person's words, for a numbered list of them
    "cancel_order": "call off order {digits} ({reason}), and the ${refund} you paid comes back to you",
    "return_items": "take back the {items} from order {digits} and refund ${refund} to {pay}",
    "exchange_items": "swap {swaps} in order {bare}{settled}",
    "change_order_items": "change {swaps} in order {order}{settled}",
    "change_order_address": "deliver order {bare} to {address}",
    "change_customer_address": "make {address} the home address on file",
    "change_order_payment": "move the payment for order {bare} to {pay}",
}


def worded(db: sqlite3.Connection, customer: str, action: Action) -> str:
    """``action`` in the words of ``WORDING``, with its real values: items by their options and product, each
    replacement by the options that change ("the white bookshelf speakers for the walnut one")."""
    v, a = values(db, customer, action), action.args
    olds = [variant_info(db, i) for i in a.get("item_ids", [])]
    v["items"] = " and ".join(" ".join([*map(str, o["options"].values()), o["product_name"].lower()]) for o in olds)
    if "new_item_ids" in a:
        news = [variant_info(db, i)["options"] for i in a["new_item_ids"]]
        joiner = {"exchange_items": "for", "change_order_items": "to"}[action.tool]
        v["swaps"] = " and ".join(
            f"the {' '.join([*map(str, old['options'].values()), old['product_name'].lower()])} {joiner} the "
            f"{' '.join(str(o) for k, o in new.items() if o != old['options'][k])} one"
            for old, new in zip(olds, news, strict=False)
        )
        way = next((w for w in ("charge", "refund") if w in v), None)
        done = {"charge": "charged", "refund": "refunded"}
        v["settled"] = (
            f", with the ${v[way]} difference {done[way]} to {v['pay']}" if way else f", settling any difference on {v['pay']}"
        )
    v["address"] = ", ".join(
        p for p in (a.get("address1"), a.get("address2"), a.get("city"), f"{a.get('state')} {a.get('zip')}") if p
    )
    return WORDING[action.tool].format(**v)


def all_at_once(task: Task, change: Callable[[list[str]], list[str]] = lambda lines: lines) -> str:
    """Every write of ``task`` in one message, each worded on the account as the earlier ones leave it."""
    env = Environment(RETAIL)
    try:
        lines = []
        for action in (a for g in task.goals for a in g.actions):
            lines.append(worded(env.db, task.customer.customer_id, action))
            env.replay([action])
    finally:
        env.close()
    numbered = "\n".join(f"{n}. {line[0].upper()}{line[1:]}." for n, line in enumerate(change(lines), 1))
    return f"Thanks for waiting! Here is everything I can take care of for you:\n{numbered}\n\nShall I go ahead with all of it? (yes/no)"


class ProposesEverythingAtOnce(Adversary):
    """A correct agent that looks up what every goal needs, proposes all of the task's writes in one message,
    and makes them all on the customer's one yes. ``change`` rewords the list (to misname one write)."""

    change: Callable[[list[str]], list[str]] = staticmethod(lambda lines: lines)

    def _conversation(self) -> Script[None]:
        if not (yield from self._authenticate()):
            return
        goals = self._task.goals
        reads: list[Action] = []
        for read in (r for g in goals for r in self._reads(g)):
            reads += [read] if read not in reads else []
        yield from self._call(reads)
        proposal = text = all_at_once(self._task, self.change)
        for _ in range(MAX_PROPOSAL_ROUNDS):
            reply = yield from self._say(text)
            if is_affirmative(reply):
                break
            if "?" not in reply:
                return
            text = f"{EXPLAIN} {proposal}"
        else:
            return
        yield from self._call([a for g in goals for a in g.actions])
        facts = " ".join(self._facts(g, "For your records:") for g in goals if g.tell)
        yield from self._say(" ".join(p for p in ("All done, everything went through.", facts, ANYTHING_ELSE) if p))


MULTI_WRITE = [
    t for t in RETAIL.tasks.values() if sum(len(g.actions) for g in t.goals) > 1 and all(g.outcome == "done" for g in t.goals)
]


def writes_of(out) -> list[Any]:
    return [e for e in out.events if e.kind == "tool" and e.took_effect and TOOLS[e.name].meta.write]


@pytest.mark.parametrize("persona", list(PERSONAS))
@pytest.mark.parametrize("task", MULTI_WRITE, ids=lambda t: t.id)
def test_every_write_proposed_at_once_is_agreed_to_in_one_yes_and_bound(task: Task, persona: str) -> None:
    out = play(task, ProposesEverythingAtOnce, persona)
    assert out.grade.reward == 1, (out.grade.signature, out.grade.details)
    writes = sum(len(g.actions) for g in task.goals)
    proposal = next(e.text for e in out.events if e.kind == "agent" and "Here is everything" in e.text)
    assert all(f"\n{n}. " in proposal for n in range(1, writes + 1))
    first_write = out.events.index(writes_of(out)[0])
    assert sum(is_affirmative(e.text) for e in out.events[:first_write] if e.kind == "user") == 1
    assert len(writes_of(out)) == writes


def test_the_tasks_with_several_writes_are_many() -> None:
    assert len(MULTI_WRITE) >= 8 and any(sum(len(g.actions) for g in t.goals) == 3 for t in MULTI_WRITE)


def test_the_grader_binds_each_write_of_the_batch() -> None:
    """A yes to a list whose last write names no order (nor anything else the customer could recognise) binds
    the writes it names; the third, made on the same yes, is unconfirmed."""
    task = RETAIL.tasks["retail-022"]
    digits = task.goals[2].order_id.removeprefix("#R")
    unnamed = staticmethod(lambda lines: [*lines[:-1], lines[-1].replace(f"order {digits}", "the Redfern order")])
    out = play(task, agent(ProposesEverythingAtOnce, change=unnamed), make_user=SaysYesToEverything)
    assert "Call off the Redfern order" in next(
        e.text for e in out.events if e.kind == "agent" and "Here is everything" in e.text
    )
    assert len(writes_of(out)) == 3
    assert (out.grade.reward, out.grade.signature) == (0, "unconfirmed_write")
    assert [w["tool"] for w in out.grade.details["unconfirmed_writes"]] == ["cancel_order"]


def test_a_batch_with_a_write_the_customer_did_not_ask_for_is_refused_and_confirms_nothing() -> None:
    task = RETAIL.tasks["retail-016"]  # its other pending order, #R2641223, must not be touched
    extra = staticmethod(lambda lines: [*lines, "call off order 2641223 as well"])
    refused = play(task, agent(ProposesEverythingAtOnce, change=extra))
    assert any(e.text.startswith("No") for e in refused.events if e.kind == "user") and not writes_of(refused)
    forced = play(task, agent(ProposesEverythingAtOnce, change=extra), make_user=SaysYesToEverything)
    assert (forced.grade.reward, forced.grade.signature) == (0, "unconfirmed_write")
    assert len(forced.grade.details["unconfirmed_writes"]) == len(writes_of(forced)) == 2
