"""How retail is talked about in a conversation: a shopper asked for an order, items, a payment method, an
address or a reason, who identifies by email (or by name and zip code when it forgot which email), and the
questions a careful agent asks for each."""

from __future__ import annotations

import random
from typing import Literal

from passhat.dialogue import mentions
from passhat.domains.kit import IDENTITY, ConversationKit, Identification, Voice, cue, joined
from passhat.domains.model import Action, Customer, Goal
from passhat.domains.retail.model import ItemRef, OrderGoal, Shopper

Slot = Literal["identity", "order", "items", "payment", "address", "reason"]
SLOTS: tuple[Slot, ...] = ("identity", "order", "items", "payment", "address", "reason")

CUES = {
    IDENTITY: cue(
        r"e-?mail",
        r"(?:name|and|your|with|or) (?:\w+ )?zip",  # not the zip of a new address ("city, state, zip")
        r"postal code",
        r"(?:full|first and last|first|last|your) name",
        r"verify (?:your )?(?:identity|account)",
        r"authenticat",
        r"(?:locate|find|look up|pull up|access) your (?:account|profile|details)",
    ),
    "order": cue(
        r"which order",
        r"what order",
        r"order (?:id|number)",
        r"number of (?:the|your) order",
        r"(?:the|your) order'?s? (?:id|number)",
        r"which (?:one|purchase) (?:is|are|was|were)",
        r"which of (?:your|these|the) orders",
    ),
    "items": cue(
        r"which (?:items?|products?|ones?|options?|variants?|sizes?|colou?rs?|versions?)",
        r"which of the (?:items?|products?)",
        r"what (?:items?|products?|options?|variants?|sizes?|colou?rs?)",
        r"(?:items?|products?) (?:id|ids|numbers?)",
        r"exchange (?:it|them) for",
    ),
    "payment": cue(
        r"which (?:payment|card|method|account)",
        r"what payment",
        r"payment method (?:would|do|should|you)",
        r"how would you like to (?:pay|be refunded|receive)",
        r"(?:refund|pay|charge)\w* (?:to|with|on) which",
        r"(?:refund|payment|money)s? (?:to )?(?:go|be sent|be issued|be refunded)",
        r"gift card or",
        r"payment method\b.{0,40}\bor\b",
        r"(?:pa(?:y|id|ying)|charg\w*|refund\w*)\b.{0,30}?\b(?:with|by|using|via)\b.{0,80}\bor\b",  # "paid using the gift card, or the card on file?"
        # where the money goes: "Where should it go: the Discover card ending 8698, or your gift card?"
        r"where (?:should|shall|would you like|do you want) (?:the )?(?:refund|money|difference|credit|\$)",
        r"where (?:should|shall|would you like|do you want) (?:it|this|that)\b[^?]*\b(?:card|paypal|credit|account)\b",
        r"(?:card|paypal|credit)\b[^.?!]{0,60}\bor\b[^.?!]{0,60}\b(?:card|paypal|credit)\b[^.!]*\?",  # a choice of two
    ),
    "address": cue(
        r"(?:new|shipping|delivery|correct|full|updated) address",
        r"what address",
        r"which address",
        r"(?<!mail )address (?:should|would|do|you)",  # not "the email address you used"
        r"where (?:should|would|do) (?:we|you|i)\b(?![^?!]*(?:\b(?:money|refund|credit|card|paypal)\b|\$))",  # not the money's
    ),
    "reason": cue(
        r"\breason",
        r"why (?:do|did|would) you(?:'d)? (?:want|like|need)",
        r"why you(?:'d| would) like",
        r"what(?:'s| is) wrong with",
    ),
}

# what names a payment method besides "payment": "which of those?" after "one ending in 4698 and one ending in 9591"
# asks for the card, not the order
NOUNS = {
    "payment": cue(
        r"(?:visa|mastercard|amex|american express|discover|paypal)\b",
        r"(?:gift|credit|debit) cards?\b",
        r"ending (?:in )?\d{4}\b",
        r"payment methods?\b",
    ),
}

PHRASINGS = {
    "email": {
        "plain": ("My email is {email}.", "It's {email}.", "You can find me under {email}."),
        "terse": ("{email}",),
        "scattered": ("email's {email} I think", "it's {email}"),
    },
    "name_zip": {
        "plain": ("My name is {first} {last} and my zip code is {zip}.", "I'm {first} {last}, zip code {zip}."),
        "terse": ("{first} {last}, {zip}.",),
        "scattered": ("oh right, {first} {last}, and the zip is {zip}",),
    },
    "no_email": {
        "plain": ("I can't remember which email I used, sorry.", "I'm not sure which email is on the account."),
    },
    "first_name": {
        "plain": ("It's {first}.",),
        "scattered": ("it's {first}!", "{first} here"),
    },
    "typo_fix": {
        "plain": ("Sorry, I made a typo. It's {email}.",),
        "scattered": ("oops, typo! it's {email}", "ugh sorry, I mistyped it, it's {email}"),
    },
    "order_id": {
        "plain": ("It's order {order_id}.", "The order number is {order_id}."),
        "terse": ("{order_id}.",),
        "scattered": ("it's {order_id} I think", "order {order_id}"),
    },
    "order_hint": {
        "plain": ("I don't have the order number to hand. It's {hint}.", "I'm not sure of the number, but it's {hint}."),
        "scattered": ("no idea about the number honestly, it's {hint}",),
    },
    "items": {
        "plain": ("It's {items}.", "I mean {items}."),
        "scattered": ("it's {items}",),
    },
    "new_items": {
        "plain": ("I'd like {items} instead.", "I want {items} in its place."),
        "scattered": ("and I want {items} instead",),
    },
    "payment": {
        "plain": ("Please use {payment}.", "I'd like to use {payment}."),
        "terse": ("{payment}.",),
    },
    "address": {
        "plain": ("The address is {address}.", "Please use this address: {address}."),
        "terse": ("{address}.",),
    },
    "reason": {
        "plain": ("The reason is: {reason}.", "My reason: {reason}."),
        "terse": ("{reason}.",),
    },
    "vague": {
        "plain": ("I have a problem with something I ordered.", "It's about an order."),
        "scattered": ("so it's about my order, kind of", "I have this thing with an order, um", "so, um, my order"),
    },
}

ASK_IDENTITY = (
    "I can help with that. First I need to verify your identity: could you tell me the email address on your "
    "account, or your first and last name and zip code?"
)
ASK_IDENTITY_AGAIN = "I still need to verify your identity. Could you give me your email address, or your full name and zip code?"
QUESTIONS = {
    "order": "Which order is this about?",
    "items": "Which items do you mean?",
    "payment": "Which payment method would you like to use?",
    "address": "What is the new address?",
    "reason": "What is the reason for the request?",
}


def slips(customer: Customer) -> list[str | None]:
    """A first name alone, or (for a customer who knows its email) an email with two letters swapped."""
    assert isinstance(customer, Shopper)
    return ["first_name", None] + (["typo"] if customer.email else [])


def identify(customer: Customer, slip: str | None, voice: Voice) -> Identification:
    """The email if the customer knows it, else name and zip code; or the slip."""
    assert isinstance(customer, Shopper)
    if slip == "first_name":
        return Identification(voice.say("first_name", first=customer.first_name), given=False)
    email = customer.email
    if email and slip == "typo":
        return Identification(
            voice.say("email", email=_typo(email, voice.rng)), correction=lambda v: v.say("typo_fix", email=email)
        )
    if email:
        return Identification(voice.say("email", email=email))
    return Identification(
        joined(voice.say("no_email"), voice.say("name_zip", first=customer.first_name, last=customer.last_name, zip=customer.zip))
    )


def identity_text(customer: Customer) -> str:
    assert isinstance(customer, Shopper)
    said = f"I'm {customer.first_name} {customer.last_name}, zip code {customer.zip}"
    return f"{said}, email {customer.email}" if customer.email else said


def answer(slot: str, goal: Goal, voice: Voice) -> str:
    """The customer's words for one detail of an order goal; "" when the goal has none."""
    assert isinstance(goal, OrderGoal)
    if slot == "order":
        if goal.order_id is None:
            return ""
        if goal.knows_order_id:
            return voice.say("order_id", order_id=goal.order_id)
        return voice.say("order_hint", hint=goal.order_hint or "")
    if slot == "items":
        old = voice.say("items", items=_items_words(goal.items)) if goal.items else ""
        new = voice.say("new_items", items=_items_words(goal.new_items)) if goal.new_items else ""
        return joined(old, new)
    if slot == "payment":  # as a shopper names it ("my Visa ending in 4698"), never by the backend's id for it
        return voice.say("payment", payment=goal.payment) if goal.payment else ""
    if slot == "address":
        address = ", ".join(v for v in (goal.address or {}).values() if v)
        return voice.say("address", address=address) if address else ""
    return voice.say("reason", reason=goal.reason) if goal.reason else ""


def knows(goal: Goal) -> list[str]:
    assert isinstance(goal, OrderGoal)
    items = [i.item_id for i in goal.items + goal.new_items]
    return [v for v in (goal.order_id, goal.reason, goal.payment, *items, *(goal.address or {}).values()) if v]


def missing(slot: str, goal: Goal, said: str) -> bool:
    """Whether the goal needs ``slot`` and the customer's words so far do not give it."""
    assert isinstance(goal, OrderGoal)
    lowered = said.lower()
    if slot == "order":
        return goal.order_id is not None and not mentions(said, goal.order_id)
    if slot == "items":
        return any(i.item_id.lower() not in lowered and i.description.lower() not in lowered for i in goal.items + goal.new_items)
    if slot == "payment":
        ids = _payment_ids(goal.actions)
        return goal.payment is not None and goal.payment.lower() not in lowered and not any(mentions(said, v) for v in ids)
    if slot == "address":
        return goal.address is not None and not all(mentions(said, v) for v in goal.address.values() if v)
    return goal.reason is not None and goal.reason.lower() not in lowered


def _payment_ids(calls: list[Action]) -> list[str]:
    return [str(v) for a in calls for k, v in a.args.items() if "payment" in k]


def _items_words(items: list[ItemRef]) -> str:
    return " and ".join(f"the {i.description.removeprefix('the ')} ({i.item_id})" for i in items)


def _typo(email: str, rng: random.Random) -> str:
    """The email with two neighbouring letters of its local part swapped (always a different address)."""
    local, _, host = email.partition("@")
    spots = [i for i in range(len(local) - 1) if local[i] != local[i + 1]]
    if not spots:
        return f"{local}{local[-1]}@{host}"
    i = rng.choice(spots)
    return f"{local[:i]}{local[i + 1]}{local[i]}{local[i + 2 :]}@{host}"


KIT = ConversationKit(
    slots=SLOTS,
    which="order",
    cues=CUES,
    nouns=NOUNS,
    phrasings=PHRASINGS,
    slips=slips,
    identify=identify,
    answer=answer,
    refind=lambda text: "order" if "order" in text.lower() else None,
    knows=knows,
    identity_text=identity_text,
    ask_identity=ASK_IDENTITY,
    ask_identity_again=ASK_IDENTITY_AGAIN,
    questions=QUESTIONS,
    missing=missing,
    profile=lambda customer: Action(tool="get_customer", args={"customer_id": customer.customer_id}),
)
