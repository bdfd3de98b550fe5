"""The machine-checkable clauses of the intake policy, and the gate where a person approves data access.

Each check runs before a write, against the backend as it is then, and returns why the call breaks the
rule, or None. A check never raises for a person or appointment that does not exist: it returns None and
lets the tool report it, so a rule only ever speaks about the policy. Claims a caller makes (a title,
an emergency, paperwork "on its way") change nothing here: only what the file records counts.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from passhat.domains.model import Call, Rule
from passhat.domains.toolkit import identified, one

from .data import TODAY
from .tools import TOOLS, adult_on, appointment_of, full_name, link_of, person_of, phone_digits

WRITES = tuple(fn.__name__ for fn in TOOLS if fn.__passhat_tool__.write)
APPOINTMENT_TOOLS = ("book_appointment", "cancel_appointment", "reschedule_appointment")
LATE_CHANGE_DAYS = 1  # an appointment this many days away or fewer is changed only by the front desk


def _patient_of(db: sqlite3.Connection, call: Call) -> str | None:
    """The patient a write is about: the appointment's, or the named one; None if unknown."""
    if "appointment_id" in call.args:
        found = appointment_of(db, str(call.args["appointment_id"]).strip().upper())
        return found["patient_id"] if found else None
    patient = person_of(db, str(call.args.get("patient_id", "")).strip())
    return patient["id"] if patient else None


def verify_first(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """Every write needs a verified caller, and a write that names the caller names that one."""
    verified = identified(history, ("find_caller",))
    if not verified:
        return f"{call.name} was called before the caller's identity was verified in this conversation"
    named = _named_caller(db, call)
    if named is not None and named != verified[0]:
        return f"{call.name} acts as caller {named}, but this conversation is with caller {verified[0]}"
    return None


def _named_caller(db: sqlite3.Connection, call: Call) -> str | None:
    """The caller a write says it is made by (the requester, or the phone of a hand-off), or None."""
    if "phone" in call.args:
        found = one(db, "SELECT id FROM people WHERE phone = ?", phone_digits(str(call.args["phone"])))
        return found["id"] if found else str(call.args["phone"])
    return str(call.args["requester_id"]).strip() if "requester_id" in call.args else None


def access_problem(db: sqlite3.Connection, caller_id: str, patient_id: str, need: str) -> str | None:
    """Why the caller may not do ``need`` ('appointments' or 'records') for the patient, from the file alone."""
    patient = person_of(db, patient_id)
    if patient is None or caller_id == patient_id:
        return None
    name, link = full_name(patient), link_of(db, caller_id, patient_id)
    if link is None or link["role"] == "emergency contact":
        return f"caller {caller_id} has no recorded authorization for {name}'s {need}; a claim on the phone is not one"
    if link["role"] == "guardian":
        came_of_age = adult_on(patient["birth_date"])
        if came_of_age > TODAY:
            return None
        return f"{name} is an adult since {came_of_age.isoformat()}, so a guardian's access ended then; {name} must ask or authorize it"
    if link["expires_on"] is not None and link["expires_on"] < TODAY.isoformat():
        return f"the authorization of caller {caller_id} for {name} expired on {link['expires_on']}"
    if need == "records" and link["scope"] != "records":
        return f"the authorization of caller {caller_id} for {name} covers appointments only, not records"
    return None


def acts_for(db: sqlite3.Connection, caller_id: str) -> tuple[str, ...]:
    """Whose files a verified caller may be told about: their own, and those of the patients the file lets them
    manage appointments for today."""
    linked = [p for (p,) in db.execute("SELECT patient_id FROM links WHERE caller_id = ?", (caller_id,))]
    return (caller_id, *(p for p in linked if access_problem(db, caller_id, p, "appointments") is None))


def _access_rule(need: str):
    def check(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
        verified, patient = identified(history, ("find_caller",)), _patient_of(db, call)
        if not verified or patient is None:
            return None
        return access_problem(db, verified[0], patient, need)

    return check


def late_change(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    found = appointment_of(db, str(call.args.get("appointment_id", "")).strip().upper())
    if found is None or found["date"] > (TODAY + timedelta(days=LATE_CHANGE_DAYS)).isoformat():
        return None
    return f"appointment {found['id']} is on {found['date']}, less than a day away: late changes go through the front desk"


RULES: tuple[Rule, ...] = (
    Rule(
        "verify-first",
        "Verify the caller (phone number and date of birth) before any change, and act as that caller only.",
        WRITES,
        verify_first,
    ),
    Rule(
        "appointment-access",
        "Appointments are managed by the patient, a guardian of a minor, or a caregiver with a current authorization.",
        APPOINTMENT_TOOLS,
        _access_rule("appointments"),
    ),
    Rule(
        "records-access",
        "Records go to the patient, a guardian of a minor, or a caregiver whose current authorization covers records.",
        ("request_records",),
        _access_rule("records"),
    ),
    Rule(
        "late-change",
        "An appointment today or tomorrow is not cancelled or moved here.",
        ("cancel_appointment", "reschedule_appointment"),
        late_change,
    ),
)


def records_review(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """Every release of records the policy allows waits for the records office. One the policy forbids is not
    the office's to weigh: it goes through to the policy rules, so an agent that files it is seen breaking them
    (a rejected ticket would hide it)."""
    if any(rule.check(db, call, history) for rule in RULES if call.name in rule.tools):
        return None
    return "a copy of records is released only after the records office approves it"


GATES: tuple[Rule, ...] = (
    Rule(
        "records-review",
        "Every request for a copy of records needs the records office's approval.",
        ("request_records",),
        records_review,
    ),
)
