"""The facts a library task may ask the agent to tell, each derived from the backend, never recited.

Each returns a typed ``Fact`` so the graders match it by meaning: a due date in any usual wording, late
fees as an amount, a hold's status against its rival statuses, a place in a queue as a number.
"""

from __future__ import annotations

import sqlite3

from passhat.dialogue.facts import Fact
from passhat.domains.model import FactSource

from . import tools

# Other words a member hears as the same status of a hold.
HOLD_STATUS_WORDS: dict[str, tuple[str, ...]] = {
    "waiting": ("in the queue", "on the waiting list"),
    "ready": ("ready for pickup", "ready to pick up", "ready to collect", "ready for collection"),
    "cancelled": ("canceled",),
}


def due_date(db: sqlite3.Connection, loan_id: str) -> Fact:
    loan = tools.loan_of(db, loan_id)
    if loan is None:
        raise LookupError(f"no loan {loan_id}")
    return Fact("date", loan["due_date"], about=(loan_id,))


def fines_due(db: sqlite3.Connection, member_id: str) -> Fact:
    if tools.one(db, "SELECT id FROM members WHERE id = ?", member_id) is None:
        raise LookupError(f"no member {member_id}")
    return Fact("money", f"{tools.fines_due(db, member_id):.2f}")


def hold_status(db: sqlite3.Connection, member_id: str, title_id: str) -> Fact:
    hold = tools.one(db, "SELECT status FROM holds WHERE member_id = ? AND title_id = ?", member_id, title_id)
    if hold is None:
        raise LookupError(f"member {member_id} holds no {title_id}")
    status = hold["status"]
    rivals = tuple(s for s in HOLD_STATUS_WORDS if s != status)
    return Fact("status", status, synonyms=HOLD_STATUS_WORDS[status], rivals=rivals, about=(title_id,))


def holds_ahead(db: sqlite3.Connection, member_id: str, title_id: str) -> Fact:
    """How many members wait for the title ahead of this one: those who placed their hold earlier, or all who
    wait when the member does not (yet). Defined on every backend an agent can reach, even a wrong one."""
    if tools.title_of(db, title_id) is None or tools.one(db, "SELECT id FROM members WHERE id = ?", member_id) is None:
        raise LookupError(f"no title {title_id} or no member {member_id}")
    return Fact("number", str(tools.waiting_ahead(db, member_id, title_id)), about=(title_id,))


FACTS: dict[str, FactSource] = {
    "due_date": FactSource("loan {loan_id} is due on {value}", due_date),
    "fines_due": FactSource("the late fees on your account come to {value}", fines_due),
    "hold_status": FactSource("your hold on {title_id} is {value}", hold_status),
    "holds_ahead": FactSource("the number of members ahead of you in the queue for {title_id} is {value}", holds_ahead),
}
