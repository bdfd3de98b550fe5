"""How the intake desk is talked about: a caller asked whom a request is for, an appointment's reference, a
clinician, a date and time, which records and how to deliver them; who identifies with the phone number on
their file and their date of birth; and the questions a careful intake agent asks for each."""

from __future__ import annotations

import re
from typing import Literal

from passhat.dialogue.values import names_phrase
from passhat.domains.kit import IDENTITY, ConversationKit, Identification, Voice, cue, transposed
from passhat.domains.model import Action, Customer, Goal

from .model import Caller, IntakeGoal

Slot = Literal["identity", "patient", "appointment", "clinician", "when", "records", "delivery"]
SLOTS: tuple[Slot, ...] = ("identity", "patient", "appointment", "clinician", "when", "records", "delivery")

CUES = {
    IDENTITY: cue(
        r"phone number",
        r"number (?:on|we have on) (?:your )?file",
        r"date of birth",
        r"\bDOB\b",
        r"birth ?date",
        r"when (?:were you|you were) born",
        r"verify (?:who you are|your identity|who's calling|who is calling)",
        r"authenticat",
    ),
    "patient": cue(r"who is (?:the appointment|the request|this|it) for", r"(?:patient|their|child)(?:'s)? full name", r"whose"),
    "appointment": cue(r"(?:appointment'?s? )?reference", r"reminder", r"which appointment"),
    "clinician": cue(
        r"which (?:doctor|clinician)",
        r"what (?:doctor|clinician)",
        r"who would you like to see",
        r"(?:doctor|clinician) in mind",
        r"(?<![\w ])(?:doctor|clinician)\W*$",  # said alone: "To book, I need: - **Doctor**"
    ),
    "when": cue(
        r"what (?:new )?(?:date|day|time)",
        r"which (?:date|day|time)",
        r"(?:which|what) (?:week|month|part of the (?:day|week))\b",  # "which week should I look at for open times?"
        r"when would you like",
        r"(?:new|preferred) (?:date|day|time)",
        r"date ?(?:and|/|\+|or) ?time",
        r"(?:day|date|week|time)(?: or (?:day|date|week|time))? that (?:suits|works)",
        r"particular (?:day|date|week|time)",
        r"day or time",
        r"time that (?:suits|works)",
        r"(?:which|what) (?:one|slot|time) works (?:best )?for you",  # a choice among the openings offered
    ),
    "records": cue(r"which (?:records|part)", r"what (?:records|part)"),
    "delivery": cue(
        r"how would you like to receive",
        r"(?:mail|post)\W+or\W+(?:\w+\W+){0,2}portal",
        r"portal\W+or\W+(?:\w+\W+){0,2}(?:mail|post)",
    ),
}

PHRASINGS = {
    "phone_birth": {
        "plain": (
            "My phone number is {phone} and I was born on {born}.",
            "It's {phone}, date of birth {born}.",
            "The number on file is {phone}; my birthday is {born}.",
        ),
        "terse": ("{phone}, born {born}.",),
        "upset": ("It's {phone}, and I was born on {born}. Please be quick!",),
        "scattered": ("um, phone is {phone}... and born {born}", "oh right, {phone}, birthday {born}"),
    },
    "phone_only": {
        "plain": ("My number is {phone}.",),
        "scattered": ("my phone's {phone}, I think", "it's {phone}!"),
    },
    "phone_fix": {
        "plain": ("Sorry, I mixed up the digits. It's {phone}, and I was born on {born}.",),
        "scattered": ("oops, wrong digits! it's {phone}, born {born}",),
    },
    "patient": {
        "plain": ("It's for {patient}.", "The patient is {patient}."),
        "terse": ("{patient}.",),
        "scattered": ("oh, it's {patient}", "for {patient}, sorry"),
    },
    "appointment": {
        "plain": ("The reference is {appointment}.", "My reminder says {appointment}."),
        "terse": ("{appointment}.",),
        "scattered": ("it's {appointment} I think", "the text said {appointment}"),
    },
    "clinician": {
        "plain": ("I'd like to see {clinician}.", "With {clinician}, please."),
        "terse": ("{clinician}.",),
        "scattered": ("oh, {clinician} if possible",),
    },
    "when": {
        "plain": ("{date} at {time}, please.", "I'd like {date} at {time}."),
        "terse": ("{date}, {time}.",),
        "scattered": ("um, {date}... at {time}",),
    },
    "records": {
        "plain": ("I need the {records}.", "Just the {records}, please."),
        "terse": ("The {records}.",),
        "scattered": ("the {records}, I think that's what it's called",),
    },
    "delivery": {
        "plain": ("{delivery}, please.",),
        "terse": ("{delivery}.",),
        "scattered": ("oh, {delivery} is easiest",),
    },
    "vague": {
        "plain": ("I'm calling about something at the clinic.", "I have a question for the clinic desk."),
        "scattered": ("so it's about the clinic, sort of", "um, it's about an appointment, or the records, one of those"),
    },
}
DELIVERY_WORDS = {"portal": "Through the patient portal", "mail": "By mail to the address on file"}

ASK_IDENTITY = "I can help with that. First I need to verify who is calling: could you tell me the phone number on your file and your date of birth?"
ASK_IDENTITY_AGAIN = (
    "I still need to verify who is calling. Could you give me the phone number on your file and your date of birth?"
)
QUESTIONS = {
    "patient": "Who is this for? Please give me the patient's full name.",
    "appointment": "What is the appointment's reference? It is on the reminder message.",
    "clinician": "Which doctor would you like to see?",
    "when": "What date and time would you like?",
    "records": "Which records do you need?",
    "delivery": "How would you like to receive them: through the patient portal or by mail?",
}


def spoken(phone: str) -> str:
    """A phone number as people say it: 413-555-0171."""
    return f"{phone[:3]}-{phone[3:6]}-{phone[6:]}"


def slips(customer: Customer) -> list[str | None]:
    """The phone number alone (no date of birth), or the phone number with two digits swapped."""
    return ["phone_only", None, "typo"]


def identify(customer: Customer, slip: str | None, voice: Voice) -> Identification:
    assert isinstance(customer, Caller)
    phone, born = spoken(customer.phone), customer.birth_date
    if slip == "phone_only":
        return Identification(voice.say("phone_only", phone=phone), given=False)
    if slip == "typo":
        misdialled = spoken(transposed(customer.phone, voice.rng))
        return Identification(
            voice.say("phone_birth", phone=misdialled, born=born),
            correction=lambda v: v.say("phone_fix", phone=phone, born=born),
        )
    return Identification(voice.say("phone_birth", phone=phone, born=born))


def identity_text(customer: Customer) -> str:
    assert isinstance(customer, Caller)
    return (
        f"I'm {customer.first_name} {customer.last_name}; my phone number is {spoken(customer.phone)} and I was born on "
        f"{customer.birth_date}"
    )


def answer(slot: str, goal: Goal, voice: Voice) -> str:
    """The caller's words for one detail of the goal; "" when the goal has none."""
    assert isinstance(goal, IntakeGoal)
    if slot == "when":
        return voice.say("when", date=goal.date, time=goal.time) if goal.date and goal.time else ""
    value = getattr(goal, slot, None)
    if slot == "delivery" and value:
        value = DELIVERY_WORDS[value]
    return voice.say(slot, **{slot: value}) if value else ""


def knows(goal: Goal) -> list[str]:
    assert isinstance(goal, IntakeGoal)
    return [v for v in (goal.patient, goal.appointment, goal.clinician, goal.date, goal.time, goal.records, goal.delivery) if v]


def missing(slot: str, goal: Goal, said: str) -> bool:
    """Whether the goal has a ``slot`` detail that the caller's words so far do not name."""
    assert isinstance(goal, IntakeGoal)
    values = (goal.date, goal.time) if slot == "when" else (getattr(goal, slot, None),)
    return any(v and not says(said, v) for v in values)


def says(said: str, value: str) -> bool:
    """Whether the words say ``value``: as whole words, or as written (a time such as 11:00)."""
    return bool(names_phrase(said, value)) or re.search(rf"(?<![\w:]){re.escape(value)}(?![\w:])", said) is not None


def refind(text: str) -> str | None:
    """The detail an agent's "not found" is about, once the caller is identified."""
    return "appointment" if names_phrase(text, "appointment") else None


KIT = ConversationKit(
    slots=SLOTS,
    which="appointment",
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
    profile=lambda customer: Action(tool="get_caller", args={"caller_id": customer.customer_id}),
)
