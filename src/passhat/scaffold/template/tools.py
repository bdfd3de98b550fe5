"""The {{name}} tools an agent calls: three reads and one write.

A tool is a plain function ``fn(db, **typed_args)`` marked with ``@tool``. passhat builds the schema the
agent sees from its type hints and docstring (the first line says what it does, ``Args:`` describes each
argument: write them for the model that will read them), and validates arguments before the call.
Inside a tool, raise ``NotFound`` when a lookup finds nothing (the agent sees ``{"found": false}``) and
``ToolFailure`` when the call cannot be carried out (the agent sees an error); never return an empty
result to mean either.

Tools enforce data integrity only (the booking exists, it is not cancelled twice). The written policy's
rules (when a booking may be cancelled) live in rules.py, so an agent that ignores the policy can really
break it and a grader can see it.

To make this your domain: replace these with your tools. Mark the identity lookup ``identifies=True``;
mark each write ``write=True`` with its ``target`` (the argument naming the record it changes) and
``confirm_words`` (the words a proposal of it uses: a customer's yes to "cancel X" must not confirm a
refund of X).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from passhat.domains.toolkit import NotFound, ToolFailure, one, tool


def booking_view(db: sqlite3.Connection, booking_id: str) -> dict[str, Any] | None:
    """A booking with its class, as the tools show it."""
    return one(
        db,
        "SELECT b.id AS booking_id, b.member_id, b.status, c.title AS class_title, c.starts_at"
        " FROM bookings b JOIN classes c ON c.id = b.class_id WHERE b.id = ?",
        booking_id,
    )


@tool(identifies=True)
def find_member(db: sqlite3.Connection, email: str) -> str:
    """Find a member's id from the email address on their membership. Use this first, to verify who you are talking to.

    Args:
        email: The member's email address, e.g. sam.lee@example.com.
    """
    found = one(db, "SELECT id FROM members WHERE email = ?", email.strip().lower())
    if found is None:
        raise NotFound("member", email)
    return found["id"]


@tool()
def get_member(db: sqlite3.Connection, member_id: str) -> dict[str, Any]:
    """Get a member's profile: name, email, plan and their bookings (booking id, class, start time, status).

    Args:
        member_id: The member's id, e.g. M-1234.
    """
    member = one(db, "SELECT * FROM members WHERE id = ?", member_id)
    if member is None:
        raise NotFound("member", member_id)
    ids = [r[0] for r in db.execute("SELECT id FROM bookings WHERE member_id = ? ORDER BY id", (member_id,))]
    return {
        "member_id": member["id"],
        "name": f"{member['first_name']} {member['last_name']}",
        "email": member["email"],
        "plan": member["plan"],
        "bookings": [booking_view(db, b) for b in ids],
    }


@tool()
def get_booking(db: sqlite3.Connection, booking_id: str) -> dict[str, Any]:
    """Get a booking: the member, the class and when it starts, and its status (booked, waitlisted, cancelled, attended).

    Args:
        booking_id: The booking number, e.g. B-1234.
    """
    booking = booking_view(db, booking_id)
    if booking is None:
        raise NotFound("booking", booking_id)
    return booking


@tool(write=True, target="booking_id", confirm_words=("cancel", r"call(?:ing)? off"), kinds={"booking_id": "id"})
def cancel_booking(db: sqlite3.Connection, booking_id: str) -> dict[str, Any]:
    """Cancel a member's booking of a class (or take them off its waitlist), freeing the place.

    Args:
        booking_id: The booking number, e.g. B-1234.
    """
    booking = booking_view(db, booking_id)
    if booking is None:
        raise NotFound("booking", booking_id)
    if booking["status"] not in ("booked", "waitlisted"):
        raise ToolFailure("not_cancellable", f"booking {booking_id} is {booking['status']} and cannot be cancelled")
    db.execute("UPDATE bookings SET status = 'cancelled' WHERE id = ?", (booking_id,))
    return {"booking_id": booking_id, "status": "cancelled"}


TOOLS = (find_member, get_member, get_booking, cancel_booking)
