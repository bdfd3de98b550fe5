"""The seeded generator of the intake backend: an invented family clinic, its clinicians, and the people on file.

The people the tasks are about are written out by hand (``DESK_PEOPLE``), so a task file reads like the
record it talks about; a few dozen more are drawn from one ``random.Random(seed)`` in a fixed sequence, so
the same seed always gives the same database. The clinic's "today" is a constant, so nothing reads the
clock; the generated people's appointments fall after the fortnight the tasks talk about.
"""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from datetime import date, timedelta
from typing import Literal, get_args

TODAY = date(2025, 6, 9)  # a Monday: what "tomorrow", "a minor" and "expired" are measured against
ADULT_AGE = 18
OPENING_TIMES: tuple[str, ...] = ("09:00", "09:30", "10:00", "10:30", "11:00", "14:00", "14:30", "15:00", "15:30")
BOOKING_DAYS = 60  # how far ahead the desk books
RecordsPart = Literal["visit summaries", "immunizations", "lab results", "full chart"]
RECORDS_PARTS: tuple[str, ...] = get_args(RecordsPart)
Delivery = Literal["portal", "mail"]
DELIVERIES: tuple[str, ...] = get_args(Delivery)
N_OTHER_PEOPLE = 30
OTHERS_FROM = date(2025, 6, 23)  # generated appointments start here, clear of the tasks' fortnight

# (id, name, service, weekdays they see patients: 0 Monday ... 4 Friday)
CLINICIANS: tuple[tuple[str, str, str, str], ...] = (
    ("D-11", "Ilse Varga", "family medicine", "01234"),
    ("D-12", "Tomas Adeyemi", "children's health", "024"),
    ("D-13", "Mirela Sousa", "family medicine", "0123"),
    ("D-14", "Kofi Lindahl", "skin clinic", "12"),
)


@dataclasses.dataclass(frozen=True)
class Link:
    patient_id: str
    role: str
    scope: str = "none"
    expires_on: str | None = None


@dataclasses.dataclass(frozen=True)
class Visit:
    id: str
    clinician_id: str
    date: str
    time: str
    status: str = "booked"


@dataclasses.dataclass(frozen=True)
class Request:
    records: str
    delivery: str
    status: str
    opened_on: str
    requester_id: str | None = None  # None: the patient


@dataclasses.dataclass(frozen=True)
class Person:
    id: str
    first_name: str
    last_name: str
    birth_date: str
    phone: str | None = None
    links: tuple[Link, ...] = ()
    visits: tuple[Visit, ...] = ()
    requests: tuple[Request, ...] = ()


DESK_PEOPLE: tuple[Person, ...] = (
    Person(
        "P-1001",
        "Maren",
        "Eklund",
        "1984-02-11",
        "4135550171",
        links=(Link("P-1002", "guardian"),),
        visits=(Visit("AP-5101", "D-11", "2025-06-12", "09:30"), Visit("AP-5102", "D-13", "2025-06-18", "14:00")),
    ),
    Person("P-1002", "Linus", "Eklund", "2016-08-03", visits=(Visit("AP-5109", "D-12", "2025-06-20", "10:00"),)),
    Person(
        "P-1003",
        "Rafael",
        "Quintero",
        "1950-05-30",
        "4135550188",
        visits=(Visit("AP-5103", "D-11", "2025-06-10", "10:00"), Visit("AP-5104", "D-13", "2025-06-19", "09:00")),
    ),
    Person(
        "P-1004",
        "Ines",
        "Quintero",
        "1979-09-14",
        "4135550126",
        links=(Link("P-1003", "caregiver", "appointments", "2026-01-31"),),
    ),
    Person(
        "P-1005",
        "Beatrix",
        "Holm",
        "1947-12-02",
        "4135550139",
        visits=(Visit("AP-5105", "D-13", "2025-06-16", "11:00"),),
        requests=(Request("visit summaries", "mail", "released", "2025-04-22"),),
    ),
    Person("P-1006", "Callum", "Holm", "1975-03-08", "4135550192", links=(Link("P-1005", "caregiver", "records", "2025-12-31"),)),
    Person("P-1007", "Yusuf", "Demir", "1969-07-21", "4135550114", links=(Link("P-1008", "caregiver", "records", "2025-05-31"),)),
    Person("P-1008", "Selma", "Demir", "1941-04-17", "4135550163", visits=(Visit("AP-5106", "D-11", "2025-06-13", "14:30"),)),
    Person("P-1009", "Oskar", "Brandvold", "1982-10-05", "4135550157", links=(Link("P-1010", "emergency contact"),)),
    Person("P-1010", "Thea", "Brandvold", "1985-01-29", "4135550175", visits=(Visit("AP-5107", "D-13", "2025-06-17", "09:30"),)),
    Person("P-1011", "Gideon", "Marsh", "1962-06-26", "4135550108", visits=(Visit("AP-5108", "D-14", "2025-06-11", "15:00"),)),
    Person(
        "P-1012",
        "Elif",
        "Sandoval",
        "1977-11-11",
        "4135550146",
        links=(Link("P-1013", "guardian"), Link("P-1014", "guardian")),
    ),
    Person("P-1013", "Noor", "Sandoval", "2007-03-02", "4135550199"),
    Person("P-1014", "Ari", "Sandoval", "2011-09-19", visits=(Visit("AP-5110", "D-12", "2025-06-18", "09:00"),)),
    Person(
        "P-1015",
        "Ruth",
        "Abernathy",
        "1958-08-08",
        "4135550133",
        visits=(Visit("AP-5111", "D-11", "2025-06-04", "11:00"),),
        requests=(
            Request("lab results", "portal", "awaiting review", "2025-06-05"),
            Request("immunizations", "mail", "released", "2025-03-14"),
        ),
    ),
    Person("P-1016", "Jonas", "Whitcombe", "1990-01-15", "4135550181"),
)

FIRST_NAMES = (
    "Agnes", "Bram", "Cleo", "Dario", "Edda", "Felix", "Greer", "Hugo", "Iris", "Joss", "Kira", "Lorcan",
    "Mina", "Nils", "Odile", "Pavel", "Quinn", "Rosa", "Stellan", "Tova", "Umar", "Vera", "Wendell", "Zara",
)  # fmt: skip
LAST_NAMES = (
    "Alvarez", "Birch", "Crane", "Dunmore", "Espinal", "Fairley", "Gunn", "Hale", "Ivory", "Jessup",
    "Kettering", "Loft", "Mercer", "Nairn", "Orme", "Pryce", "Rask", "Stroud", "Tamsin", "Vale",
)  # fmt: skip


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill a fresh schema: the clinicians, the desk's people, then the others drawn from ``seed``."""
    rng = random.Random(seed)
    db.executemany("INSERT INTO clinicians VALUES (?, ?, ?, ?)", CLINICIANS)
    people = (*DESK_PEOPLE, *_other_people(rng))
    for person in people:
        db.execute(
            "INSERT INTO people VALUES (?, ?, ?, ?, ?)",
            (person.id, person.first_name, person.last_name, person.birth_date, person.phone),
        )
    for person in people:
        _insert_about(db, person)


def _insert_about(db: sqlite3.Connection, p: Person) -> None:
    db.executemany(
        "INSERT INTO links VALUES (?, ?, ?, ?, ?)", [(p.id, k.patient_id, k.role, k.scope, k.expires_on) for k in p.links]
    )
    db.executemany(
        "INSERT INTO appointments VALUES (?, ?, ?, ?, ?, ?)",
        [(v.id, p.id, v.clinician_id, v.date, v.time, v.status) for v in p.visits],
    )
    db.executemany(
        "INSERT INTO service_records (patient_id, requester_id, records, delivery, status, opened_on) VALUES (?, ?, ?, ?, ?, ?)",
        [(p.id, r.requester_id or p.id, r.records, r.delivery, r.status, r.opened_on) for r in p.requests],
    )


def _other_people(rng: random.Random) -> list[Person]:
    """Adults with a phone, some with an appointment after the tasks' fortnight, every third one caring for
    the one before under a drawn authorization."""
    people: list[Person] = []
    visit_numbers = iter(range(5201, 9999))
    taken: set[tuple[str, str, str]] = set()
    for n in range(N_OTHER_PEOPLE):
        born = date(1940, 1, 1) + timedelta(days=rng.randrange(365 * 65))
        visits = tuple(_drawn_visit(rng, next(visit_numbers), taken) for _ in range(rng.randrange(3)))
        links = ()
        if n % 3 == 2:
            scope = rng.choice(("none", "appointments", "records"))
            role = "emergency contact" if scope == "none" else "caregiver"
            links = (Link(people[-1].id, role, scope, "2026-06-30" if scope != "none" else None),)
        people.append(
            Person(
                f"P-{1101 + n}",
                rng.choice(FIRST_NAMES),
                rng.choice(LAST_NAMES),
                born.isoformat(),
                f"41355{6000 + n:05d}",
                links=links,
                visits=visits,
            )
        )
    return people


def _drawn_visit(rng: random.Random, number: int, taken: set[tuple[str, str, str]]) -> Visit:
    """A booked appointment on a working day of a drawn clinician, at a time nobody else has."""
    while True:
        clinician_id, _, _, weekdays = rng.choice(CLINICIANS)
        day = OTHERS_FROM + timedelta(days=rng.randrange(21))
        key = (clinician_id, day.isoformat(), rng.choice(OPENING_TIMES))
        if str(day.weekday()) in weekdays and key not in taken:
            taken.add(key)
            return Visit(f"AP-{number}", *key)
