"""How the library desk is talked about: a member asked for a title, its format or a pickup branch, who
identifies with the number on their library card and their date of birth, and the questions a careful
desk agent asks for each."""

from __future__ import annotations

from typing import Literal

from passhat.dialogue.values import names_phrase
from passhat.domains.kit import IDENTITY, ConversationKit, Identification, Voice, cue, transposed
from passhat.domains.model import Action, Customer, Goal

from .model import DeskGoal, Patron

Slot = Literal["identity", "title", "format", "branch"]
SLOTS: tuple[Slot, ...] = ("identity", "title", "format", "branch")

CUES = {
    IDENTITY: cue(
        r"(?:library )?card number",
        r"library card",
        r"date of birth",
        r"birth ?date",
        r"when (?:were you|you were) born",
        r"verify (?:who you are|your identity|your membership)",
        r"authenticat",
    ),
    "title": cue(r"which (?:title|book|loan|hold)s?\b", r"what (?:title|book)s?\b", r"name of the (?:title|book)"),
    "format": cue(r"which (?:format|edition|version)", r"what format", r"(?:print|audio) ?book or", r"large print or"),
    "branch": cue(r"which branch", r"what branch", r"pick (?:it |them )?up", r"pickup", r"collect (?:it|them)"),
}

PHRASINGS = {
    "card_birth": {
        "plain": (
            "My library card number is {card} and my date of birth is {born}.",
            "It's card {card}, date of birth {born}.",
            "Card number {card}; I was born on {born}.",
        ),
        "terse": ("{card}, {born}.",),
        "upset": ("It's {card}, and I was born on {born}. Please hurry!",),
        "scattered": ("um, card is {card}... and born {born}", "oh right, {card}, birthday {born}"),
    },
    "card_only": {
        "plain": ("My card number is {card}.",),
        "scattered": ("card's {card}, I think", "it's {card}!"),
    },
    "card_fix": {
        "plain": ("Sorry, I misread my card. It's {card}, and my date of birth is {born}.",),
        "scattered": ("oops, wrong digits! it's {card}, born {born}",),
    },
    "title": {
        "plain": ("It's {title}.", "I mean {title}."),
        "terse": ("{title}.",),
        "scattered": ("it's {title}, I think", "oh, {title}"),
    },
    "format": {
        "plain": ("The {format}, please.", "I'd like the {format}."),
        "terse": ("{format}.",),
        "scattered": ("the {format} one",),
    },
    "branch": {
        "plain": ("I'll pick it up at the {branch} branch.", "{branch} branch, please."),
        "terse": ("{branch}.",),
        "scattered": ("oh, {branch} is easiest",),
    },
    "vague": {
        "plain": ("I have a question about my library account.", "It's about my library card."),
        "scattered": ("so it's about my library things, kind of", "um, it's my loans, or my holds, one of those"),
    },
}

ASK_IDENTITY = (
    "I can help with that. First I need to verify who you are: could you tell me your library card number and your date of birth?"
)
ASK_IDENTITY_AGAIN = "I still need to verify who you are. Could you give me your library card number and your date of birth?"
QUESTIONS = {
    "title": "Which title is this about?",
    "format": "Which format would you like?",
    "branch": "Which branch would you like to pick it up from?",
}


def grouped(card_number: str) -> str:
    """A card number as printed on the card: groups of four digits."""
    return " ".join(card_number[i : i + 4] for i in range(0, len(card_number), 4))


def slips(customer: Customer) -> list[str | None]:
    """The card number alone (no date of birth), or the card number with two digits swapped."""
    return ["card_only", None, "typo"]


def identify(customer: Customer, slip: str | None, voice: Voice) -> Identification:
    assert isinstance(customer, Patron)
    card, born = grouped(customer.card_number), customer.birth_date
    if slip == "card_only":
        return Identification(voice.say("card_only", card=card), given=False)
    if slip == "typo":
        misread = grouped(transposed(customer.card_number, voice.rng))
        return Identification(
            voice.say("card_birth", card=misread, born=born), correction=lambda v: v.say("card_fix", card=card, born=born)
        )
    return Identification(voice.say("card_birth", card=card, born=born))


def identity_text(customer: Customer) -> str:
    assert isinstance(customer, Patron)
    return f"My library card number is {grouped(customer.card_number)} and my date of birth is {customer.birth_date}"


def answer(slot: str, goal: Goal, voice: Voice) -> str:
    """The member's words for one detail of the goal; "" when the goal has none."""
    assert isinstance(goal, DeskGoal)
    value = getattr(goal, slot, None)
    return voice.say(slot, **{slot: value}) if value else ""


def knows(goal: Goal) -> list[str]:
    assert isinstance(goal, DeskGoal)
    return [v for v in (goal.title, goal.format, goal.branch) if v]


def missing(slot: str, goal: Goal, said: str) -> bool:
    """Whether the goal has a ``slot`` detail that the member's words so far do not name."""
    assert isinstance(goal, DeskGoal)
    value = getattr(goal, slot, None)
    return bool(value) and not names_phrase(said, value)


KIT = ConversationKit(
    slots=SLOTS,
    cues=CUES,
    phrasings=PHRASINGS,
    slips=slips,
    identify=identify,
    answer=answer,
    refind=lambda text: "title" if names_phrase(text, "title") or names_phrase(text, "book") else None,
    knows=knows,
    identity_text=identity_text,
    ask_identity=ASK_IDENTITY,
    ask_identity_again=ASK_IDENTITY_AGAIN,
    questions=QUESTIONS,
    missing=missing,
    profile=lambda customer: Action(tool="get_member", args={"member_id": customer.customer_id}),
)
