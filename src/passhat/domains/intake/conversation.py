"""How the intake desk is talked about: ids in text, how a write is proposed and what a yes to it agrees to,
the reads before a write, who a caller's words identify, and the plausible wrong versions of a write.

A proposal names a patient by file number, never by name: a caller who acts for someone may not have said
that person's name, and the desk does not say a name the caller did not. Clinicians are named, since
callers choose them by name. Everything here reads the backend, never writes it.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import timedelta

from passhat.dialogue.proposals import Term
from passhat.dialogue.values import names_phrase
from passhat.domains.model import Action, Customer, NearMiss
from passhat.domains.toolkit import rows

from .data import DELIVERIES, RECORDS_PARTS, TODAY
from .rules import LATE_CHANGE_DAYS
from .tools import TOOLS, appointment_of, clinician_of, full_name, is_open, openings, person_of, phone_digits

# People (P-1001), appointments (AP-5101) and clinicians (D-11), as written in free text.
ID_PATTERN = r"(?<![\w-])(?:P-\d{4}|AP-\d{4}|D-\d{2})(?![\w-])"

_WORDS = {fn.__name__: fn.__passhat_tool__.confirm_words for fn in TOOLS}
PROPOSAL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "book": _WORDS["book_appointment"],
    "cancel": _WORDS["cancel_appointment"],
    "reschedule": _WORDS["reschedule_appointment"],
    "records": _WORDS["request_records"],
    "info": (),
    "handoff": ("hand", "transfer", "staff", "nurse"),
}

_PHONE = re.compile(r"(?<![\d-])\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}(?![\d-])")
_BORN = re.compile(r"(?:born|birth|birthday)\D{0,20}?(\d{4}-\d{2}-\d{2})(?![\d-])", re.I)


def authenticate(identity: Customer, text: str) -> Action | None:
    """The identity lookup the caller's words allow: a phone number and a date of birth said as such."""
    phone, born = _PHONE.search(text), _BORN.search(text)
    if phone is None or born is None:
        return None
    return Action(tool="find_caller", args={"phone": phone_digits(phone.group()), "birth_date": born.group(1)})


def describe_action(db: sqlite3.Connection, action: Action) -> str:
    """One sentence proposing a write, naming the patient's file, the appointment or clinician, and every detail it sets."""
    a, tool = action.args, action.tool
    if tool == "book_appointment":
        return (
            f"book an appointment for patient {a.get('patient_id')} with {_clinician_words(db, a.get('clinician_id', ''))} "
            f"on {a.get('date')} at {a.get('time')}"
        )
    if tool == "cancel_appointment":
        return f"cancel appointment {_appointment_words(db, a.get('appointment_id', ''))}"
    if tool == "reschedule_appointment":
        return f"move appointment {_appointment_words(db, a.get('appointment_id', ''))} to {a.get('date')} at {a.get('time')}"
    if tool == "request_records":
        where = "through the patient portal" if a.get("delivery") == "portal" else "by mail to the address on file"
        return f"request a copy of the {a.get('records')} of patient {a.get('patient_id')}, sent {where}"
    if tool == "hand_off_to_staff":
        return f"hand you over to a staff member with this summary: {a.get('summary')}"
    return f"call {tool} with {a}"


def _clinician_words(db: sqlite3.Connection, clinician_id: str) -> str:
    clinician = clinician_of(db, clinician_id)
    return f"Dr {clinician['name']} ({clinician_id})" if clinician else f"clinician {clinician_id}"


def _appointment_words(db: sqlite3.Connection, appointment_id: str) -> str:
    """``AP-5101 (Dr Ilse Varga, 2025-06-12 at 09:30)``."""
    found = appointment_of(db, appointment_id)
    return f"{appointment_id} (Dr {found['clinician']}, {found['date']} at {found['time']})" if found else appointment_id


def proposal_terms(db: sqlite3.Connection, action: Action) -> list[Term]:
    """What a yes to ``action`` agrees to: the patient's file, the clinician or the appointment, and each detail set.
    The day an appointment stands on may be said, not required; said as another day, it conflicts."""
    a, tool = action.args, action.tool
    when = [Term("date", str(a.get("date", "")), "date"), Term("time", str(a.get("time", "")), "time")]
    if tool == "book_appointment":
        return [_patient_term(db, a.get("patient_id", "")), _clinician_term(db, a.get("clinician_id", "")), *when]
    appointment = appointment_of(db, str(a.get("appointment_id", "")))
    standing = [Term("date", appointment["date"], "appointment date", required=False)] if appointment else []
    if tool == "cancel_appointment":
        return [Term("id", a.get("appointment_id", ""), "appointment"), *standing]
    if tool == "reschedule_appointment":
        return [Term("id", a.get("appointment_id", ""), "appointment"), *when, *standing]
    if tool == "request_records":
        return [
            _patient_term(db, a.get("patient_id", "")),
            Term("phrase", str(a.get("records", "")), "records"),
            _delivery_term(str(a.get("delivery", ""))),
        ]
    return []


# how else a caller hears each way of sending records ("mailed to the address on file", "sent by post")
_DELIVERY_SAID = {"mail": ("mailed", "post", "posted"), "portal": ("online",)}


def _delivery_term(delivery: str) -> Term:
    spoken = tuple(Term("phrase", w, "delivery") for w in _DELIVERY_SAID.get(delivery, ()))
    return Term("phrase", delivery, "delivery", alternatives=spoken)


def _patient_term(db: sqlite3.Connection, patient_id: str) -> Term:
    """A patient by file number, or by full name when the caller says it."""
    patient = person_of(db, patient_id)
    spoken = (Term("name", full_name(patient), "patient"),) if patient else ()
    return Term("id", patient_id, "patient", alternatives=spoken)


def _clinician_term(db: sqlite3.Connection, clinician_id: str) -> Term:
    clinician = clinician_of(db, clinician_id)
    spoken = (Term("phrase", clinician["name"].split()[-1], "clinician"),) if clinician else ()
    return Term("id", clinician_id, "clinician", alternatives=spoken)


def lookups(db: sqlite3.Connection, action: Action) -> list[Action]:
    """The reads a careful agent makes before proposing ``action``: the patient's file or the appointment, and the
    clinician's openings for a new time."""
    a = action.args
    if action.tool == "book_appointment":
        return [
            Action(tool="get_patient", args={"patient_id": a["patient_id"]}),
            Action(tool="find_openings", args={"clinician_id": a["clinician_id"], "from_date": a["date"]}),
        ]
    if action.tool == "cancel_appointment":
        return [Action(tool="get_appointment", args={"appointment_id": a["appointment_id"]})]
    if action.tool == "reschedule_appointment":
        found = appointment_of(db, a["appointment_id"])
        reads = [Action(tool="get_appointment", args={"appointment_id": a["appointment_id"]})]
        if found:
            reads.append(Action(tool="find_openings", args={"clinician_id": found["clinician_id"], "from_date": a["date"]}))
        return reads
    if action.tool == "request_records":
        return [Action(tool="get_patient", args={"patient_id": a["patient_id"]})]
    return []


def near_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
    """Plausible wrong versions of a write that the backend accepts: another open time that day, another of the
    patient's appointments, another part of the records or another way of delivering them."""
    a, tool = action.args, action.tool
    if tool == "book_appointment":
        return _other_time(db, action, a.get("clinician_id", ""))
    if tool == "cancel_appointment":
        return [
            NearMiss("another appointment", Action(tool=tool, args={"appointment_id": other}), "wrong_entity_write")
            for other in _other_appointments(db, a.get("appointment_id", ""))[:1]
        ]
    if tool == "reschedule_appointment":
        found = appointment_of(db, a.get("appointment_id", ""))
        misses = _other_time(db, action, found["clinician_id"]) if found else []
        for other in _other_appointments(db, a.get("appointment_id", "")):
            moved = appointment_of(db, other)
            if moved and is_open(db, moved["clinician_id"], a.get("date", ""), a.get("time", "")):
                misses.append(
                    NearMiss("another appointment", Action(tool=tool, args={**a, "appointment_id": other}), "wrong_entity_write")
                )
                break
        return misses
    if tool == "request_records":
        part = next(p for p in RECORDS_PARTS if p != a.get("records"))
        delivery = next(d for d in DELIVERIES if d != a.get("delivery"))
        return [
            NearMiss("another part of the records", Action(tool=tool, args={**a, "records": part}), "wrong_arguments"),
            NearMiss("another delivery", Action(tool=tool, args={**a, "delivery": delivery}), "wrong_arguments"),
        ]
    return []


def _other_time(db: sqlite3.Connection, action: Action, clinician_id: str) -> list[NearMiss]:
    """The same write at the clinician's next other open time that day."""
    a = action.args
    times = [t for t in openings(db, clinician_id, a.get("date", "")) if t != a.get("time")]
    return [NearMiss("another time", Action(tool=action.tool, args={**a, "time": t}), "wrong_arguments") for t in times[:1]]


def _other_appointments(db: sqlite3.Connection, appointment_id: str) -> list[str]:
    """The patient's other booked appointments that may still change here, soonest first."""
    found = appointment_of(db, appointment_id)
    if found is None:
        return []
    others = rows(
        db,
        "SELECT id FROM appointments WHERE patient_id = ? AND id != ? AND status = 'booked' AND date > ? ORDER BY date, time",
        found["patient_id"],
        appointment_id,
        (TODAY + timedelta(days=LATE_CHANGE_DAYS)).isoformat(),
    )
    return [o["id"] for o in others]


def names_entity(db: sqlite3.Connection, value: str, said: str) -> bool:
    """Whether the caller's words name ``value``: a patient by full name, a clinician by surname."""
    person = person_of(db, value)
    if person is not None:
        return bool(names_phrase(said, full_name(person)))
    clinician = clinician_of(db, value)
    return clinician is not None and bool(names_phrase(said, clinician["name"].split()[-1]))
