"""The machine-checkable clause of the {{name}} policy (policy.md says it in words).

A rule's ``check(db, call, history)`` runs *before* the call, on the backend as it is then, and returns
the reason the call breaks the rule, or None. passhat uses rules three ways: the trajectory grader fails
a trial that broke one (``policy_violation``), the ``policy`` guard refuses such a call at run time,
and ``passhat check`` proves that each task's forbidden call really is refused. A check never raises for
a record that does not exist: it returns None and lets the tool report the error.

To make this your domain: write one function per clause of your policy that a program can decide, and
list it in ``RULES`` with the tools it applies to. A refused task's ``tell`` can quote its reason
(``fact: policy_reason``), so word the reason the way your agents should explain it.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from passhat.domains.model import Call, Rule

from .data import STUDIO_CLOCK
from .tools import booking_view

CANCELLATION_NOTICE = timedelta(hours=24)


def cancel_in_time(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """A booking can be cancelled only until 24 hours before its class starts."""
    booking = booking_view(db, call.args.get("booking_id", ""))
    if booking is None or datetime.fromisoformat(booking["starts_at"]) - STUDIO_CLOCK >= CANCELLATION_NOTICE:
        return None
    return (
        f"a booking can be cancelled only until 24 hours before its class starts; {booking['class_title']} "
        f"starts at {booking['starts_at'].replace('T', ' ')}"
    )


RULES: tuple[Rule, ...] = (
    Rule(
        "cancel-24h-ahead",
        "A booking can be cancelled only until 24 hours before its class starts.",
        ("cancel_booking",),
        cancel_in_time,
    ),
)
