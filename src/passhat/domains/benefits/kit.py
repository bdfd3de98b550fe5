"""How the motor club desk is talked about: a member asked for a charge, a plan or a payment method, who
identifies with the number on their membership card and their last name, and the questions a careful
desk agent asks for each."""

from __future__ import annotations

from typing import Literal

from passhat.dialogue.values import names_phrase
from passhat.domains.kit import IDENTITY, ConversationKit, Identification, Voice, cue, transposed
from passhat.domains.model import Action, Customer, Goal

from .model import BenefitGoal, ClubMember

Slot = Literal["identity", "charge", "plan", "payment"]
SLOTS: tuple[Slot, ...] = ("identity", "charge", "plan", "payment")

CUES = {
    IDENTITY: cue(
        r"membership number",
        r"member(?:ship)? card",
        r"last name",
        r"surname",
        r"verify (?:who you are|your identity|your membership)",
        r"authenticat",
    ),
    "charge": cue(
        r"which charge",
        r"which (?:tow|lockout|call-?out|fuel delivery|late fee|service|visit|job)\b",  # "Which tow do you mean?"
        r"what charge",
        r"charge (?:reference|ref\b|number)",
        r"reference of the charge",
        r"reference (?:number )?(?:on|from) (?:your|the) receipt",
    ),
    "plan": cue(r"which (?:membership )?plan", r"what (?:membership )?plan", r"plan (?:are|were) you on"),
    "payment": cue(
        r"which (?:card|payment method)",
        r"what (?:card|payment method)",
        r"where (?:should|shall|would you like|do you want) (?:the |your )?(?:refund|money|\$)",
        # "Where should it go: club credit or the Visa ending 6482?", "Visa ending 6482 or club credit?"
        r"where (?:should|shall|would you like|do you want) (?:it|this|that)\b[^?]*\b(?:card|credit|visa|amex|mastercard)\b",
        r"(?:card|credit|\d{4})\b[^.?!]{0,60}\bor\b[^.?!]{0,60}\b(?:card|credit|visa|amex|mastercard)\b[^.!]*\?",
        r"club credit\?",
        r"last four of the one",
        r"card you'?d like (?:refunded|to use|the (?:refund|money))",
        r"(?<![\w ])payment method\W*$",
    ),
}

# what names a payment method besides "payment": "which of those?" after two card endings asks for the card
NOUNS = {
    "payment": cue(
        r"(?:visa|mastercard|amex|american express|discover)\b",
        r"ending (?:in )?\d{4}\b",
        r"club credit\b",
        r"payment methods?\b",
    ),
}

PHRASINGS = {
    "number_name": {
        "plain": (
            "My membership number is {number} and my last name is {last}.",
            "It's membership number {number}, last name {last}.",
            "{first} {last}, membership number {number}.",
        ),
        "terse": ("{number}, {last}.",),
        "upset": ("It's {number}, {first} {last}. Can we please get on with it?",),
        "scattered": ("uh, the card says {number}... and it's {last}", "oh right, {number}, {first} {last}"),
    },
    "number_only": {
        "plain": ("My membership number is {number}.",),
        "scattered": ("the card says {number}, I think", "it's {number}!"),
    },
    "number_fix": {
        "plain": ("Sorry, I misread my card. It's {number}, and my last name is {last}.",),
        "scattered": ("oops, wrong digits! it's {number}, {last}",),
    },
    "charge": {
        "plain": ("It's charge {charge} on my receipt.", "The receipt says {charge}."),
        "terse": ("{charge}.",),
        "scattered": ("hang on... {charge}, I think", "oh, it's {charge}"),
    },
    "plan": {
        "plain": ("I'm on the {plan} plan.", "It's the {plan} plan."),
        "terse": ("{plan}.",),
        "scattered": ("the {plan} one, I'm pretty sure",),
    },
    "payment": {
        "plain": ("Please use {payment}.", "{payment}, please."),
        "terse": ("{payment}.",),
        "scattered": ("um, {payment} I guess",),
    },
    "vague": {
        "plain": ("I have a question about my membership.", "It's about a charge on my motor club account."),
        "scattered": ("so it's about the club, the money thing, kind of", "um, it's my membership, or a charge, one of those"),
    },
}

ASK_IDENTITY = (
    "I can help with that. First I need to verify who you are: could you tell me your membership number and your last name?"
)
ASK_IDENTITY_AGAIN = "I still need to verify who you are. Could you give me your membership number and your last name?"
QUESTIONS = {
    "charge": "Which charge is this about? Please give me the charge reference on your receipt.",
    "plan": "Which membership plan is this about?",
    "payment": "Which card should I use, or would you like club credit?",
}


def slips(customer: Customer) -> list[str | None]:
    """The membership number alone (no last name), or the number with two digits swapped."""
    return ["number_only", None, "typo"]


def identify(customer: Customer, slip: str | None, voice: Voice) -> Identification:
    assert isinstance(customer, ClubMember)
    number, first, last = customer.member_number, customer.first_name, customer.last_name
    if slip == "number_only":
        return Identification(voice.say("number_only", number=number), given=False)
    if slip == "typo":
        misread = transposed(number, voice.rng, start=2)
        return Identification(
            voice.say("number_name", number=misread, first=first, last=last),
            correction=lambda v: v.say("number_fix", number=number, last=last),
        )
    return Identification(voice.say("number_name", number=number, first=first, last=last))


def identity_text(customer: Customer) -> str:
    assert isinstance(customer, ClubMember)
    return f"My membership number is {customer.member_number} and my last name is {customer.last_name}"


def answer(slot: str, goal: Goal, voice: Voice) -> str:
    """The member's words for one detail of the goal; "" when the goal has none."""
    assert isinstance(goal, BenefitGoal)
    value = getattr(goal, slot, None)
    return voice.say(slot, **{slot: value}) if value else ""


def knows(goal: Goal) -> list[str]:
    assert isinstance(goal, BenefitGoal)
    return [v for v in (goal.charge, goal.plan, goal.payment) if v]


def missing(slot: str, goal: Goal, said: str) -> bool:
    """Whether the goal has a ``slot`` detail that the member's words so far do not name."""
    assert isinstance(goal, BenefitGoal)
    value = getattr(goal, slot, None)
    return bool(value) and not names_phrase(said, value)


KIT = ConversationKit(
    slots=SLOTS,
    which="charge",
    cues=CUES,
    nouns=NOUNS,
    phrasings=PHRASINGS,
    slips=slips,
    identify=identify,
    answer=answer,
    refind=lambda text: "charge" if names_phrase(text, "charge") else None,
    knows=knows,
    identity_text=identity_text,
    ask_identity=ASK_IDENTITY,
    ask_identity_again=ASK_IDENTITY_AGAIN,
    questions=QUESTIONS,
    missing=missing,
    profile=lambda customer: Action(tool="get_member", args={"member_id": customer.customer_id}),
)
