"""How the service desk is talked about: a caller asked for an incident number, a change number or the
symptom they see, who identifies with the number on their staff badge and their date of birth, and the
questions a careful desk agent asks for each."""

from __future__ import annotations

from typing import Literal

from passhat.dialogue.values import names_identifier, names_phrase
from passhat.domains.kit import IDENTITY, ConversationKit, Identification, Voice, cue, transposed
from passhat.domains.model import Action, Customer, Goal

from .model import Caller, DeskGoal

Slot = Literal["identity", "incident", "change", "symptom"]
SLOTS: tuple[Slot, ...] = ("identity", "incident", "change", "symptom")
NUMBERED: tuple[Slot, ...] = ("incident", "change")  # slots whose values are ids

CUES = {
    IDENTITY: cue(
        r"staff (?:number|badge)",
        r"badge number",
        r"date of birth",
        r"\bDOB\b",
        r"staff no\b",
        r"birth ?date",
        r"when (?:were you|you were) born",
        r"verify (?:who you are|your identity|who'?s calling)",
        r"\bauthenticat(?:e|ing)\b",  # "authenticate you", not "the authenticator app" a workaround names
        r"\bauthentication\b(?! (?:app|code|token))",
    ),
    "incident": cue(
        r"incident (?:number|id|reference|no\b)",
        r"which \W*incident",
        r"ticket (?:number|id|reference)",
        r"which (?:incident|ticket)",
    ),
    "change": cue(r"change (?:number|id|reference|request number)", r"which change"),
    "symptom": cue(
        r"what (?:symptoms?|errors?|problems?|fault)\b",
        r"what (?:is|are) you seeing",
        r"what (?:exactly )?happens",
        r"symptoms?\?",
        r"what do you see",
        r"error or behaviou?r",
        r"describe (?:the|what|your)",
    ),
}

PHRASINGS = {
    "badge_birth": {
        "plain": (
            "My staff number is {badge} and my date of birth is {born}.",
            "It's staff number {badge}, date of birth {born}.",
            "Badge {badge}; I was born on {born}.",
        ),
        "terse": ("{badge}, {born}.",),
        "upset": ("Staff number {badge}, born {born}. Can we get on with it?",),
        "scattered": ("er, staff number's {badge}... born {born}", "right, badge {badge}, birthday {born}"),
    },
    "badge_only": {
        "plain": ("My staff number is {badge}.",),
        "scattered": ("badge is {badge}, I think", "it's {badge}!"),
    },
    "badge_fix": {
        "plain": ("Sorry, I misread my badge. It's {badge}, and my date of birth is {born}.",),
        "scattered": ("oops, wrong digits! it's {badge}, born {born}",),
    },
    "incident": {
        "plain": ("It's incident {incident}.", "The incident is {incident}."),
        "terse": ("{incident}.",),
        "scattered": ("it's {incident}, I think", "oh, {incident}"),
    },
    "change": {
        "plain": ("The change number is {change}.", "It's change {change}."),
        "terse": ("{change}.",),
        "scattered": ("um, {change}",),
    },
    "symptom": {
        "plain": ("The {symptom}.", "What I see: {symptom}."),
        "terse": ("{symptom}.",),
        "scattered": ("so basically, {symptom}",),
    },
    "vague": {
        "plain": ("I have a problem with IT I need help with.", "It's about one of my tickets."),
        "scattered": ("so something's not working, kind of", "um, it's my laptop, or my ticket, one of those"),
    },
}

ASK_IDENTITY = (
    "I can help with that. First I need to verify who you are: could you tell me your staff number and your date of birth?"
)
ASK_IDENTITY_AGAIN = "I still need to verify who you are. Could you give me your staff number and your date of birth?"
QUESTIONS = {
    "incident": "Which incident is this about? Could you give me the incident number?",
    "change": "Could you give me the change number?",
    "symptom": "What symptom are you seeing?",
}


def grouped(staff_number: str) -> str:
    """A staff number as printed on the badge: two groups of three digits."""
    return f"{staff_number[:3]} {staff_number[3:]}"


def slips(customer: Customer) -> list[str | None]:
    """The staff number alone (no date of birth), or the staff number with two digits swapped."""
    return ["badge_only", None, "typo"]


def identify(customer: Customer, slip: str | None, voice: Voice) -> Identification:
    assert isinstance(customer, Caller)
    badge, born = grouped(customer.staff_number), customer.birth_date
    if slip == "badge_only":
        return Identification(voice.say("badge_only", badge=badge), given=False)
    if slip == "typo":
        misread = grouped(transposed(customer.staff_number, voice.rng))
        return Identification(
            voice.say("badge_birth", badge=misread, born=born), correction=lambda v: v.say("badge_fix", badge=badge, born=born)
        )
    return Identification(voice.say("badge_birth", badge=badge, born=born))


def identity_text(customer: Customer) -> str:
    assert isinstance(customer, Caller)
    return f"My staff number is {grouped(customer.staff_number)} and my date of birth is {customer.birth_date}"


def answer(slot: str, goal: Goal, voice: Voice) -> str:
    """The caller's words for one detail of the goal; "" when the goal has none."""
    assert isinstance(goal, DeskGoal)
    value = getattr(goal, slot, None)
    return voice.say(slot, **{slot: value}) if value else ""


def knows(goal: Goal) -> list[str]:
    assert isinstance(goal, DeskGoal)
    return [v for v in (goal.incident, goal.change, goal.symptom, goal.group, goal.priority, goal.category) if v]


def missing(slot: str, goal: Goal, said: str) -> bool:
    """Whether the goal has a ``slot`` detail that the caller's words so far do not name."""
    assert isinstance(goal, DeskGoal)
    value = getattr(goal, slot, None)
    if not value:
        return False
    return not (names_identifier(said, value) if slot in NUMBERED else names_phrase(said, value))


def refind(text: str) -> str | None:
    """The slot an agent's "not found" is about, once the caller is identified."""
    for slot in NUMBERED:
        if names_phrase(text, slot):
            return slot
    return None


KIT = ConversationKit(
    slots=SLOTS,
    which="incident",
    cues=CUES,
    phrasings=PHRASINGS,
    slips=slips,
    identify=identify,
    answer=answer,
    refind=refind,
    knows=knows,
    identity_text=identity_text,
    ask_identity=ASK_IDENTITY,
    ask_identity_again=ASK_IDENTITY_AGAIN,
    questions=QUESTIONS,
    missing=missing,
    profile=lambda customer: Action(tool="get_employee", args={"employee_id": customer.customer_id}),
)
