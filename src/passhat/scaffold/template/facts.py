"""The facts a {{name}} task may ask the agent to tell, each derived from the backend.

A task's ``tell`` names a fact with its arguments and states the value it expects (``is``); ``passhat
check`` derives the fact here and refuses the task if the two disagree, and the graders look for the
value in what the agent said, by meaning (a status also counts in its synonyms, and stating one of its
rivals instead contradicts it).

To make this your domain: one function per kind of fact your customers ask about, returning a typed
``Fact`` (kinds: money, date, status, identifier, number, phrase, card_ending), and an entry in ``FACTS``
with the sentence a careful agent says it in. Raise ``LookupError`` when the arguments name nothing.
"""

from __future__ import annotations

import sqlite3

from passhat.dialogue.facts import Fact
from passhat.domains.model import FactSource

from .tools import booking_view

# Other words a member hears as the same status.
STATUS_WORDS: dict[str, tuple[str, ...]] = {
    "booked": ("confirmed", "you have a place", "you have a spot"),
    "waitlisted": ("on the waitlist", "on the waiting list"),
    "cancelled": ("canceled",),
    "attended": (),
}


def booking_status(db: sqlite3.Connection, booking_id: str) -> Fact:
    booking = booking_view(db, booking_id)
    if booking is None:
        raise LookupError(f"no booking {booking_id}")
    status = booking["status"]
    rivals = tuple(s for s in STATUS_WORDS if s != status)
    return Fact("status", status, synonyms=STATUS_WORDS[status], rivals=rivals, about=(booking_id,))


FACTS: dict[str, FactSource] = {
    "booking_status": FactSource("booking {booking_id} is {value}", booking_status),
}
