"""The facts an intake task may ask the agent to tell, each derived from the backend, never recited.

Each returns a typed ``Fact`` so the graders match it by meaning: an appointment's date in any usual wording,
its clinician by name, a status against its rival statuses, a date an authorization ends.
"""

from __future__ import annotations

import sqlite3

from passhat.dialogue.facts import Fact
from passhat.domains.model import FactSource
from passhat.domains.toolkit import one

from . import tools

# Other words a caller hears as the same status.
APPOINTMENT_WORDS: dict[str, tuple[str, ...]] = {"booked": ("scheduled", "confirmed"), "cancelled": ("canceled",)}
REQUEST_WORDS: dict[str, tuple[str, ...]] = {
    "awaiting review": ("under review", "being reviewed", "waiting for review", "waiting for approval"),
    "released": ("sent", "sent out", "approved"),
    "declined": ("refused", "turned down"),
}
ACCESS_WORDS: dict[str, tuple[str, ...]] = {
    "appointments only": ("only appointments", "just appointments", "only the appointments"),
    "appointments and records": ("records and appointments", "both appointments and records"),
    "nothing": ("no access",),
}


def _appointment(db: sqlite3.Connection, appointment_id: str) -> dict:
    found = tools.appointment_of(db, appointment_id)
    if found is None:
        raise LookupError(f"no appointment {appointment_id}")
    return found


def _status(value: str, words: dict[str, tuple[str, ...]], about: tuple[str, ...] = ()) -> Fact:
    rivals = tuple(s for s in words if s != value)
    return Fact("status", value, synonyms=words[value], rivals=rivals, about=about)


def appointment_date(db: sqlite3.Connection, appointment_id: str) -> Fact:
    return Fact("date", _appointment(db, appointment_id)["date"], about=(appointment_id,))


def clinician(db: sqlite3.Connection, appointment_id: str) -> Fact:
    return Fact("phrase", _appointment(db, appointment_id)["clinician"], about=(appointment_id,))


def appointment_status(db: sqlite3.Connection, appointment_id: str) -> Fact:
    return _status(_appointment(db, appointment_id)["status"], APPOINTMENT_WORDS, (appointment_id,))


def access(db: sqlite3.Connection, caller_id: str, patient_id: str) -> Fact:
    """What the caller may do for the patient today, in the words the caller's file shows."""
    if tools.person_of(db, caller_id) is None or tools.person_of(db, patient_id) is None:
        raise LookupError(f"no person {caller_id} or {patient_id}")
    return _status(tools.ACCESS_WORDS[tools.access_of(db, caller_id, patient_id)], ACCESS_WORDS, (patient_id,))


def authorization_ends(db: sqlite3.Connection, caller_id: str, patient_id: str) -> Fact:
    link = tools.link_of(db, caller_id, patient_id)
    if link is None or link["expires_on"] is None:
        raise LookupError(f"caller {caller_id} has no dated authorization for {patient_id}")
    return Fact("date", link["expires_on"], about=(patient_id,))


def request_status(db: sqlite3.Connection, patient_id: str, records: str) -> Fact:
    """The status of the patient's latest request for that part of the records."""
    found = one(
        db, "SELECT status FROM service_records WHERE patient_id = ? AND records = ? ORDER BY id DESC", patient_id, records
    )
    if found is None:
        raise LookupError(f"no request for the {records} of {patient_id}")
    return _status(found["status"], REQUEST_WORDS)


FACTS: dict[str, FactSource] = {
    "appointment_date": FactSource("appointment {appointment_id} is on {value}", appointment_date),
    "clinician": FactSource("appointment {appointment_id} is with Dr {value}", clinician),
    "appointment_status": FactSource("appointment {appointment_id} is {value}", appointment_status),
    "access": FactSource("what you may do for patient {patient_id} today: {value}", access),
    "authorization_ends": FactSource("your authorization for patient {patient_id} ends on {value}", authorization_ends),
    "request_status": FactSource("the request for the {records} is {value}", request_status),
}
