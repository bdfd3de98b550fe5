"""The tools an intake agent calls: find the caller and read who they may act for, read a patient's
appointments and service records, find openings, book, cancel or move an appointment, request a copy of
records, and hand the caller to staff.

Writes enforce data integrity only (the person and clinician exist, the time is open and in clinic hours).
Who may act for whom, and how late an appointment may change, are the policy's (``rules.py``), so an agent
that ignores them really can break them in the backend. No tool reads or tells anything clinical.
"""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from typing import Any

from passhat.domains.toolkit import NotFound, ToolFailure, one, rows, tool

from .data import ADULT_AGE, BOOKING_DAYS, OPENING_TIMES, TODAY, Delivery, RecordsPart

NAME_PROSE = ("name", "clinician")  # names someone typed into the file: where a third party's text reaches the agent

# -- queries shared with rules.py, facts.py and conversation.py -----------------------------------------


def phone_digits(phone: str) -> str:
    """A phone number as stored: its ten digits, whatever brackets, spaces or dashes it was written with."""
    return "".join(ch for ch in phone if ch.isdigit())[-10:]


def person_of(db: sqlite3.Connection, person_id: str) -> dict[str, Any] | None:
    return one(db, "SELECT * FROM people WHERE id = ?", person_id)


def full_name(person: dict[str, Any]) -> str:
    return f"{person['first_name']} {person['last_name']}"


def adult_on(birth_date: str) -> date:
    """The day a person born on ``birth_date`` comes of age."""
    born = date.fromisoformat(birth_date)
    return born.replace(year=born.year + ADULT_AGE) if (born.month, born.day) != (2, 29) else date(born.year + ADULT_AGE, 3, 1)


def is_minor(person: dict[str, Any]) -> bool:
    return adult_on(person["birth_date"]) > TODAY


def clinician_of(db: sqlite3.Connection, clinician_id: str) -> dict[str, Any] | None:
    return one(db, "SELECT * FROM clinicians WHERE id = ?", clinician_id)


def appointment_of(db: sqlite3.Connection, appointment_id: str) -> dict[str, Any] | None:
    """An appointment with its clinician's name."""
    return one(
        db,
        "SELECT a.*, c.name AS clinician FROM appointments a JOIN clinicians c ON c.id = a.clinician_id WHERE a.id = ?",
        appointment_id,
    )


def link_of(db: sqlite3.Connection, caller_id: str, patient_id: str) -> dict[str, Any] | None:
    return one(db, "SELECT * FROM links WHERE caller_id = ? AND patient_id = ?", caller_id, patient_id)


def access_of(db: sqlite3.Connection, caller_id: str, patient_id: str) -> str:
    """What the caller may do for the patient today: 'records' (which covers appointments), 'appointments' or 'none'."""
    patient = person_of(db, patient_id)
    if patient is None:
        return "none"
    if caller_id == patient_id:
        return "records"
    link = link_of(db, caller_id, patient_id) or {}
    if link.get("role") == "guardian":
        return "records" if is_minor(patient) else "none"
    if link.get("role") == "caregiver" and (link["expires_on"] is None or link["expires_on"] >= TODAY.isoformat()):
        return link["scope"]
    return "none"


def is_open(db: sqlite3.Connection, clinician_id: str, day: str, time: str) -> bool:
    """Whether the clinician sees patients at that time and nobody is booked then."""
    clinician = clinician_of(db, clinician_id)
    if clinician is None or time not in OPENING_TIMES:
        return False
    try:
        weekday = date.fromisoformat(day).weekday()
    except ValueError:
        return False
    taken = one(
        db,
        "SELECT id FROM appointments WHERE clinician_id = ? AND date = ? AND time = ? AND status = 'booked'",
        clinician_id,
        day,
        time,
    )
    return str(weekday) in clinician["weekdays"] and taken is None


def openings(db: sqlite3.Connection, clinician_id: str, day: str) -> list[str]:
    """The clinician's open times on a day."""
    return [t for t in OPENING_TIMES if is_open(db, clinician_id, day, t)]


def next_number(db: sqlite3.Connection) -> int:
    found = one(db, "SELECT MAX(CAST(substr(id, 4) AS INTEGER)) AS top FROM appointments")
    return int((found or {}).get("top") or 5100) + 1


# -- reads ---------------------------------------------------------------------------------------------


@tool(identifies=True)
def find_caller(db: sqlite3.Connection, phone: str, birth_date: str) -> str:
    """Find the caller's file number from the phone number on their file and their date of birth. Use this first, to verify who is calling.

    Args:
        phone: The caller's phone number, e.g. 413-555-0171 (spaces and dashes are ignored).
        birth_date: The caller's own date of birth as YYYY-MM-DD, e.g. 1984-02-11.
    """
    person = one(db, "SELECT id FROM people WHERE phone = ? AND birth_date = ?", phone_digits(phone), birth_date.strip())
    if person is None:
        raise NotFound("caller", f"phone {phone}, born {birth_date}")
    return person["id"]


@tool(prose=NAME_PROSE)
def get_caller(db: sqlite3.Connection, caller_id: str) -> dict[str, Any]:
    """Get the caller's file: name, their own upcoming appointments, and the people they are linked to, with the role and what they may do for each today.

    Args:
        caller_id: The caller's file number from find_caller, e.g. P-1001.
    """
    person = _person(db, caller_id)
    links = rows(db, "SELECT * FROM links WHERE caller_id = ? ORDER BY patient_id", person["id"])
    return {
        "caller_id": person["id"],
        "name": full_name(person),
        "appointments": _upcoming(db, person["id"]),
        "acts_for": [_link_view(db, link) for link in links],
    }


def _link_view(db: sqlite3.Connection, link: dict[str, Any]) -> dict[str, Any]:
    patient = person_of(db, link["patient_id"]) or {}
    return {
        "patient_id": link["patient_id"],
        "name": full_name(patient) if patient else None,
        "role": link["role"],
        "authorization": link["scope"],
        "expires_on": link["expires_on"],
        "may_do_today": ACCESS_WORDS[access_of(db, link["caller_id"], link["patient_id"])],
    }


ACCESS_WORDS = {"records": "appointments and records", "appointments": "appointments only", "none": "nothing"}


@tool(prose=NAME_PROSE)
def get_patient(db: sqlite3.Connection, patient_id: str) -> dict[str, Any]:
    """Get a patient's administrative file: whether they are a minor, upcoming appointments and requests for copies of records. Nothing clinical.

    Args:
        patient_id: The patient's file number, e.g. P-1002.
    """
    person = _person(db, patient_id)
    requests = rows(db, "SELECT * FROM service_records WHERE patient_id = ? ORDER BY id", person["id"])
    return {
        "patient_id": person["id"],
        "minor": is_minor(person),
        "appointments": _upcoming(db, person["id"]),
        "records_requests": [{k: r[k] for k in ("records", "delivery", "status", "opened_on", "requester_id")} for r in requests],
    }


@tool(prose=NAME_PROSE)
def get_appointment(db: sqlite3.Connection, appointment_id: str) -> dict[str, Any]:
    """Get one appointment: whose it is, the clinician, date, time and status.

    Args:
        appointment_id: The appointment reference from the reminder message, e.g. AP-5101.
    """
    return appointment_view(_appointment(db, appointment_id))


@tool()
def find_openings(db: sqlite3.Connection, clinician_id: str, from_date: str) -> list[dict[str, Any]]:
    """List a clinician's open times over the week starting on a date. Clinicians: D-11 Ilse Varga (family medicine), D-12 Tomas Adeyemi (children's health), D-13 Mirela Sousa (family medicine), D-14 Kofi Lindahl (skin clinic).

    Args:
        clinician_id: The clinician, e.g. D-11.
        from_date: The first day to look at, YYYY-MM-DD.
    """
    clinician = clinician_of(db, clinician_id.strip())
    if clinician is None:
        raise NotFound("clinician", clinician_id)
    start = _day(from_date)
    days = [(start + timedelta(days=n)).isoformat() for n in range(7)]
    found = [{"date": d, "times": openings(db, clinician["id"], d)} for d in days]
    return [f for f in found if f["times"]]


def _upcoming(db: sqlite3.Connection, patient_id: str) -> list[dict[str, Any]]:
    found = rows(
        db,
        "SELECT a.*, c.name AS clinician FROM appointments a JOIN clinicians c ON c.id = a.clinician_id"
        " WHERE a.patient_id = ? AND a.date >= ? ORDER BY a.date, a.time",
        patient_id,
        TODAY.isoformat(),
    )
    return [appointment_view(a) for a in found]


def appointment_view(a: dict[str, Any]) -> dict[str, Any]:
    return {
        "appointment_id": a["id"],
        "patient_id": a["patient_id"],
        "clinician_id": a["clinician_id"],
        "clinician": a["clinician"],
        "date": a["date"],
        "time": a["time"],
        "status": a["status"],
    }


def _person(db: sqlite3.Connection, person_id: str) -> dict[str, Any]:
    person = person_of(db, person_id.strip())
    if person is None:
        raise NotFound("person", person_id)
    return person


def _appointment(db: sqlite3.Connection, appointment_id: str) -> dict[str, Any]:
    found = appointment_of(db, appointment_id.strip().upper())
    if found is None:
        raise NotFound("appointment", appointment_id)
    return found


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ToolFailure("bad_date", f"{text!r} is not a date written YYYY-MM-DD") from None


def _bookable(db: sqlite3.Connection, clinician_id: str, day: str, time: str) -> None:
    """Refuse a time that is past, too far ahead, outside the clinician's hours, or taken."""
    when = _day(day)
    if not TODAY < when <= TODAY + timedelta(days=BOOKING_DAYS):
        raise ToolFailure("out_of_range", f"the desk books from tomorrow up to {BOOKING_DAYS} days ahead, not {day}")
    if clinician_of(db, clinician_id) is None:
        raise NotFound("clinician", clinician_id)
    if not is_open(db, clinician_id, day, time):
        raise ToolFailure("not_open", f"{clinician_id} has no opening on {day} at {time}; use find_openings")


# -- writes --------------------------------------------------------------------------------------------


@tool(
    write=True,
    target="patient_id",
    confirm_words=("book", "booking", "schedul", r"confirmed for\b"),
    kinds={"patient_id": "id", "clinician_id": "id", "date": "date", "time": "time"},
)
def book_appointment(db: sqlite3.Connection, patient_id: str, clinician_id: str, date: str, time: str) -> dict[str, Any]:
    """Book an appointment for a patient at one of a clinician's open times.

    Args:
        patient_id: The patient's file number (the caller's own, or someone they act for), e.g. P-1001.
        clinician_id: The clinician, e.g. D-11.
        date: The day, YYYY-MM-DD.
        time: The time, HH:MM, e.g. 09:30.
    """
    patient = _person(db, patient_id)
    _bookable(db, clinician_id, date, time)
    number = f"AP-{next_number(db)}"
    db.execute("INSERT INTO appointments VALUES (?, ?, ?, ?, ?, 'booked')", (number, patient["id"], clinician_id, date, time))
    return appointment_view(_appointment(db, number))


@tool(write=True, target="appointment_id", confirm_words=("cancel",), kinds={"appointment_id": "id"})
def cancel_appointment(db: sqlite3.Connection, appointment_id: str) -> dict[str, Any]:
    """Cancel a booked appointment.

    Args:
        appointment_id: The appointment reference, e.g. AP-5101.
    """
    found = _appointment(db, appointment_id)
    if found["status"] != "booked":
        raise ToolFailure("not_booked", f"appointment {found['id']} is {found['status']}")
    db.execute("UPDATE appointments SET status = 'cancelled' WHERE id = ?", (found["id"],))
    return appointment_view(_appointment(db, found["id"]))


@tool(
    write=True,
    target="appointment_id",
    confirm_words=("reschedul", "move", "moving", r"(?:is|are) now (?:on|at|for)\b", r"confirmed for\b"),
    kinds={"appointment_id": "id", "date": "date", "time": "time"},
)
def reschedule_appointment(db: sqlite3.Connection, appointment_id: str, date: str, time: str) -> dict[str, Any]:
    """Move a booked appointment to another open time of the same clinician.

    Args:
        appointment_id: The appointment reference, e.g. AP-5101.
        date: The new day, YYYY-MM-DD.
        time: The new time, HH:MM.
    """
    found = _appointment(db, appointment_id)
    if found["status"] != "booked":
        raise ToolFailure("not_booked", f"appointment {found['id']} is {found['status']}")
    _bookable(db, found["clinician_id"], date, time)
    db.execute("UPDATE appointments SET date = ?, time = ? WHERE id = ?", (date, time, found["id"]))
    return appointment_view(_appointment(db, found["id"]))


RECORDS_WORDS = (
    r"request(?:ing)? (?:a )?cop(?:y|ies)",
    "release",
    "releasing",
    r"request(?:ed|ing)? (?:the|for|a)\b",
    r"request for\b",
)


@tool(write=True, target="patient_id", confirm_words=RECORDS_WORDS, kinds={"requester_id": "id", "patient_id": "id"})
def request_records(
    db: sqlite3.Connection, requester_id: str, patient_id: str, records: RecordsPart, delivery: Delivery
) -> dict[str, Any]:
    """Open a service record requesting a copy of part of a patient's records, delivered through the patient portal or by mail to the address on file.

    Args:
        requester_id: The verified caller's file number, e.g. P-1001.
        patient_id: Whose records, e.g. P-1002.
        records: Which part of the records.
        delivery: portal or mail.
    """
    requester, patient = _person(db, requester_id), _person(db, patient_id)
    cursor = db.execute(
        "INSERT INTO service_records (patient_id, requester_id, records, delivery, status, opened_on)"
        " VALUES (?, ?, ?, ?, 'released', ?)",
        (patient["id"], requester["id"], records, delivery, TODAY.isoformat()),
    )
    return {"service_record": cursor.lastrowid, "patient_id": patient["id"], "records": records, "delivery": delivery}


@tool(
    write=True, needs_confirmation=False, ends_conversation=True, target="phone", free_text=("summary",), kinds={"phone": "phone"}
)
def hand_off_to_staff(db: sqlite3.Connection, phone: str, summary: str) -> dict[str, Any]:
    """Hand the caller to a staff member (the nurse line for anything clinical, the records office for new paperwork), with a short summary; it is recorded and ends the conversation.

    Args:
        phone: The verified caller's phone number, as they gave it.
        summary: What the caller needs and what was already done, for the staff member.
    """
    person = one(db, "SELECT id FROM people WHERE phone = ?", phone_digits(phone))
    if person is None:
        raise NotFound("caller", phone)
    cursor = db.execute("INSERT INTO handoffs (caller_id, summary) VALUES (?, ?)", (person["id"], summary))
    return {"handoff_id": cursor.lastrowid, "message": "A staff member will take over this conversation."}


TOOLS: tuple = (
    find_caller,
    get_caller,
    get_patient,
    get_appointment,
    find_openings,
    book_appointment,
    cancel_appointment,
    reschedule_appointment,
    request_records,
    hand_off_to_staff,
)
