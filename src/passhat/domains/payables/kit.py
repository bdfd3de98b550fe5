"""How the payables queue is talked about: a clerk asked for an invoice number, a hold reason or an adjusted
amount, who identifies with the employee number on their badge and their work email, and the questions a
careful agent asks for each."""

from __future__ import annotations

from typing import Literal

from passhat.dialogue.values import money_in, names_identifier, names_phrase, parse_money
from passhat.domains.kit import IDENTITY, ConversationKit, Identification, Voice, cue, transposed
from passhat.domains.model import Action, Customer, Goal

from .model import Clerk, QueueGoal

Slot = Literal["identity", "invoice", "reason", "amount"]
SLOTS: tuple[Slot, ...] = ("identity", "invoice", "reason", "amount")

CUES = {
    IDENTITY: cue(
        r"employee (?:number|id|no\b)",
        r"badge",
        r"work email",
        r"email address",
        r"verify (?:who you are|your identity)",
        r"authenticat",
    ),
    "invoice": cue(r"which invoice", r"what invoice", r"invoice (?:number|id)", r"INV number"),
    "reason": cue(r"(?:hold )?reason", r"why (?:is it|it is|should it be) held"),
    "amount": cue(
        r"what amount",
        r"which amount",
        r"how much should",
        r"adjust(?:ed)? (?:it )?to (?:what|which)",
        r"amount needed",
        r"what should \S+ be (?:adjusted|short-paid) to",
    ),
}

PHRASINGS = {
    "badge_email": {
        "plain": (
            "My employee number is {number} and my work email is {email}.",
            "It's employee {number}, email {email}.",
            "Badge number {number}; my email is {email}.",
        ),
        "terse": ("{number}, {email}.",),
        "upset": ("It's {number}, email {email}. Quickly please, the payment run closes soon!",),
        "scattered": ("um, badge is {number}... and email {email}", "oh right, {number}, {email}"),
    },
    "email_only": {
        "plain": ("My work email is {email}.",),
        "scattered": ("email's {email}, I think", "it's {email}!"),
    },
    "badge_fix": {
        "plain": ("Sorry, I misread my badge. It's {number}, and my email is {email}.",),
        "scattered": ("oops, wrong digits! it's {number}, email {email}",),
    },
    "invoice": {
        "plain": ("It's invoice {invoice}.", "Invoice {invoice}."),
        "terse": ("{invoice}.",),
        "scattered": ("it's {invoice}, I think", "oh, {invoice}"),
    },
    "reason": {
        "plain": ("Put it down as {reason}.", "The reason is {reason}."),
        "terse": ("{reason}.",),
        "scattered": ("oh, {reason}, I'd say",),
    },
    "amount": {
        "plain": ("Adjust it to ${amount}.", "Make it ${amount}."),
        "terse": ("${amount}.",),
        "scattered": ("${amount}, that's what we owe",),
    },
    "vague": {
        "plain": ("I've got an invoice in the exception queue to deal with.", "It's about one of my match exceptions."),
        "scattered": ("so it's about the queue, kind of", "um, it's an invoice, one of the stuck ones"),
    },
}

ASK_IDENTITY = (
    "I can help with that. First I need to verify who you are: could you tell me your employee number and your work email?"
)
ASK_IDENTITY_AGAIN = "I still need to verify who you are. Could you give me your employee number and your work email?"
QUESTIONS = {
    "invoice": "Which invoice is it (its INV number)?",
    "reason": "What hold reason should I record?",
    "amount": "What amount should it be adjusted to?",
}


def slips(customer: Customer) -> list[str | None]:
    """The email alone (no employee number), or the employee number with two digits swapped."""
    return ["email_only", None, "typo"]


def identify(customer: Customer, slip: str | None, voice: Voice) -> Identification:
    assert isinstance(customer, Clerk)
    number, email = customer.employee_number, customer.email
    if slip == "email_only":
        return Identification(voice.say("email_only", email=email), given=False)
    if slip == "typo":
        misread = transposed(number, voice.rng, start=2)
        return Identification(
            voice.say("badge_email", number=misread, email=email),
            correction=lambda v: v.say("badge_fix", number=number, email=email),
        )
    return Identification(voice.say("badge_email", number=number, email=email))


def identity_text(customer: Customer) -> str:
    assert isinstance(customer, Clerk)
    return f"My employee number is {customer.employee_number} and my work email is {customer.email}"


def answer(slot: str, goal: Goal, voice: Voice) -> str:
    """The clerk's words for one detail of the goal; "" when the goal has none."""
    assert isinstance(goal, QueueGoal)
    value = getattr(goal, slot, None)
    return voice.say(slot, **{slot: value}) if value else ""


def knows(goal: Goal) -> list[str]:
    assert isinstance(goal, QueueGoal)
    return [v for v in (goal.invoice, goal.reason, goal.amount, goal.status, *goal.recipients) if v]


def missing(slot: str, goal: Goal, said: str) -> bool:
    """Whether the goal has a ``slot`` detail that the clerk's words so far do not name."""
    assert isinstance(goal, QueueGoal)
    value = getattr(goal, slot, None)
    if not value:
        return False
    if slot == "invoice":
        return not names_identifier(said, value)
    if slot == "amount":
        return not any(m.value == f"{parse_money(value):.2f}" for m in money_in(said))
    return not names_phrase(said, value)


KIT = ConversationKit(
    slots=SLOTS,
    which="invoice",
    cues=CUES,
    phrasings=PHRASINGS,
    slips=slips,
    identify=identify,
    answer=answer,
    refind=lambda text: "invoice" if names_phrase(text, "invoice") else None,
    knows=knows,
    identity_text=identity_text,
    ask_identity=ASK_IDENTITY,
    ask_identity_again=ASK_IDENTITY_AGAIN,
    questions=QUESTIONS,
    missing=missing,
    profile=lambda customer: Action(tool="get_clerk", args={"clerk_id": customer.customer_id}),
)
