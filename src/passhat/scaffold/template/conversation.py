"""How {{name}} is talked about: ids in text, the wording of a proposal, the reads before a write, the
identity lookup a customer's words allow, and the plausible wrong versions of a write.

The engine's scripted customer, reference agent and ``passhat check`` know nothing about any domain;
these functions (wired up in domain.py) are what they know about this one. They read the backend but
never write it.

To make this your domain: adapt each function to your tools. ``near_misses`` matters most: each miss is
a mistake a real agent could make that the backend would accept (the same write on another record of
the same customer), and ``passhat check`` proves the graders fail it with the signature given.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime

from passhat.domains.model import Action, Customer, NearMiss

from .model import Member
from .tools import TOOLS, booking_view

# Member and booking ids as written in text. Keep other ids (the classes') out: an id the customer does not
# know, stated in a proposal, makes the customer doubt it.
ID_PATTERN = r"(?<![\w-])(?:M|B)-\d{4}(?![\w-])"

# A proposal for a goal of this kind must use one of these words; an informational goal proposes nothing.
PROPOSAL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "cancel": next(fn.__passhat_tool__.confirm_words for fn in TOOLS if fn.__name__ == "cancel_booking"),
    "info": (),
}

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


def when(starts_at: str) -> str:
    """``2025-06-05T18:00`` as people say it: Thursday 5 June at 18:00."""
    moment = datetime.fromisoformat(starts_at)
    return f"{moment:%A} {moment.day} {moment:%B} at {moment:%H:%M}"


def describe_action(db: sqlite3.Connection, action: Action) -> str:
    """A write in the words of a proposal, naming everything the customer must agree to."""
    booking = booking_view(db, action.args.get("booking_id", ""))
    if action.tool == "cancel_booking" and booking is not None:
        return f"cancel booking {booking['booking_id']} for {booking['class_title']} on {when(booking['starts_at'])}"
    return f"call {action.tool} with {action.args}"


def lookups(db: sqlite3.Connection, action: Action) -> list[Action]:
    """The reads a careful agent makes before proposing ``action``: the booking it acts on."""
    booking_id = action.args.get("booking_id")
    return [Action(tool="get_booking", args={"booking_id": booking_id})] if booking_id else []


def authenticate(customer: Customer, text: str) -> Action | None:
    """The identity lookup the customer's words so far allow: the email they wrote, if any."""
    assert isinstance(customer, Member)
    found = _EMAIL.search(text)
    return Action(tool="find_member", args={"email": found.group()}) if found else None


def near_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
    """The same cancellation aimed at another of the member's open bookings: the wrong record."""
    booking = booking_view(db, action.args.get("booking_id", ""))
    if booking is None:
        return []
    others = db.execute(
        "SELECT id FROM bookings WHERE member_id = ? AND id != ? AND status IN ('booked', 'waitlisted') ORDER BY id",
        (booking["member_id"], booking["booking_id"]),
    )
    return [
        NearMiss(f"another booking ({other})", Action(tool=action.tool, args={"booking_id": other}), "wrong_entity_write")
        for (other,) in others
    ]
