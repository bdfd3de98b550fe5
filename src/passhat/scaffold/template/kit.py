"""How {{name}} is talked about in a conversation: the conversation kit.

passhat's scripted customer and reference agent know nothing about any domain. The kit tells them:
which details (*slots*) a customer can be asked for, the cue words by which a question asks for each,
how the customer words its answers per tone (plain, terse, upset, scattered; "plain" is required), how
it identifies itself (and the slip an incoherent customer makes first), and what the reference agent
asks. The engine supplies everything else a customer says (greetings, yes, no, goodbye).

To make this your domain: one slot per detail your customers give (IDENTITY first), a cue for each that
matches the ways an agent asks for it (test them against your own agent's wording), phrasings for each
answer, and ``missing`` over your goal model's fields (``knows`` returns them all).
"""

from __future__ import annotations

from typing import Literal

from passhat.dialogue import mentions
from passhat.domains.kit import IDENTITY, ConversationKit, Identification, Voice, cue
from passhat.domains.model import Action, Customer, Goal

from .model import BookingGoal, Member

Slot = Literal["identity", "booking"]
SLOTS: tuple[Slot, ...] = ("identity", "booking")

CUES = {
    IDENTITY: cue(
        r"e-?mail",
        r"verify (?:your )?(?:identity|membership|account)",
        r"(?:find|look up|locate|pull up) your (?:membership|account|profile)",
    ),
    "booking": cue(
        r"which (?:booking|class|session)",
        r"what (?:booking|class|session)",
        r"booking (?:number|id|reference)",
    ),
}

PHRASINGS = {
    "email": {
        "plain": ("My email is {email}.", "It's {email}.", "You'll find me under {email}."),
        "terse": ("{email}",),
        "scattered": ("oh, it's {email} I think", "email's {email}"),
    },
    "first_name": {  # the incoherent customer's slip: a first name where an email was asked for
        "plain": ("It's {first}.",),
        "scattered": ("it's {first}!", "{first} here"),
    },
    "booking": {
        "plain": ("It's booking {booking_id}, the {title} class.", "The booking number is {booking_id} ({title})."),
        "terse": ("{booking_id}.",),
        "scattered": ("um, {booking_id}, the {title} one",),
    },
    "vague": {  # the opening of a customer who has not said what they want yet
        "plain": ("I have a question about one of my classes.", "It's about a class I booked."),
        "scattered": ("so, um, it's about a class", "I have this thing with a booking, kind of"),
    },
}


def slips(customer: Customer) -> list[str | None]:
    """An incoherent customer may first give only a first name (None: no slip)."""
    return ["first_name", None]


def identify(customer: Customer, slip: str | None, voice: Voice) -> Identification:
    assert isinstance(customer, Member)
    if slip == "first_name":
        return Identification(voice.say("first_name", first=customer.first_name), given=False)
    return Identification(voice.say("email", email=customer.email))


def identity_text(customer: Customer) -> str:
    """Everything the customer could say to identify itself (``passhat check`` opens its conversations with it)."""
    assert isinstance(customer, Member)
    return f"I'm {customer.first_name} {customer.last_name}, my email is {customer.email}"


def answer(slot: str, goal: Goal, voice: Voice) -> str:
    """The customer's words for one detail of its goal; "" when the goal has none."""
    assert isinstance(goal, BookingGoal)
    if slot == "booking" and goal.booking_id:
        return voice.say("booking", booking_id=goal.booking_id, title=goal.class_title or "")
    return ""


def knows(goal: Goal) -> list[str]:
    """The values the customer knows about a goal and can say: every detail of model.py's goal model the task sets
    (a field added there is known without a change here)."""
    return goal.details()


def missing(slot: str, goal: Goal, said: str) -> bool:
    """Whether the goal needs ``slot`` and the customer's words so far do not give it."""
    assert isinstance(goal, BookingGoal)
    return slot == "booking" and goal.booking_id is not None and not mentions(said, goal.booking_id)


KIT = ConversationKit(
    slots=SLOTS,
    cues=CUES,
    phrasings=PHRASINGS,
    slips=slips,
    identify=identify,
    answer=answer,
    refind=lambda text: "booking" if "booking" in text.lower() else None,
    knows=knows,
    identity_text=identity_text,
    ask_identity="I can help with that. First I need to verify who you are: what is the email address on your membership?",
    ask_identity_again="I still need to verify who you are. Could you tell me the email address on your membership?",
    questions={"booking": "Which booking is this about? The booking number is in your confirmation email."},
    missing=missing,
    profile=lambda customer: Action(tool="get_member", args={"member_id": customer.customer_id}),
)
