"""The {{name}} backend's data: the rows the tasks are about, and seeded filler around them.

passhat calls ``generate(db, seed)`` once per process on a fresh copy of ``schema.sql`` (with the
``data_seed`` from domain.py) and forks every trial from the result, so this must be deterministic:
all randomness comes from ``random.Random(seed)``, and nothing reads the wall clock.

To make this your domain: write the rows your tasks need by hand (``STORY_*`` below: a task names them by
id, so keep those ids stable), and generate the rest from the seed so the backend looks like a real one
(other members with their own records, which is what makes a write on the wrong record possible).
Loading a fixture file instead (a JSON or SQL dump next to this file) is just as good.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta

# The studio's "now". Rules compare against it instead of the wall clock, so a task means the same thing
# on every run. A real domain might keep it in a settings table.
STUDIO_CLOCK = datetime(2025, 6, 2, 9, 0)

STORY_MEMBERS = [
    ("M-1001", "Rosa", "Kettering", "rosa.kettering@example.com", "unlimited"),
    ("M-1002", "Tomas", "Brandvold", "tomas.brandvold@example.net", "basic"),
    ("M-1003", "Imani", "Castellanos", "imani.castellanos@example.org", "unlimited"),
]
STORY_CLASSES = [
    ("CL-200", "Morning Stretch", "2025-05-30T08:00", 12),
    ("CL-201", "Yoga Flow", "2025-06-05T18:00", 16),
    ("CL-202", "Spin Express", "2025-06-04T07:00", 20),
    ("CL-203", "Pilates Core", "2025-06-07T10:00", 10),
    ("CL-204", "HIIT Circuit", "2025-06-02T18:00", 14),
]
STORY_BOOKINGS = [
    ("B-7001", "M-1001", "CL-201", "booked"),
    ("B-7002", "M-1001", "CL-202", "booked"),
    ("B-7003", "M-1002", "CL-203", "waitlisted"),
    ("B-7004", "M-1002", "CL-201", "booked"),
    ("B-7005", "M-1003", "CL-204", "booked"),
    ("B-7006", "M-1003", "CL-200", "attended"),
]

_FIRST = ("Aiko", "Bram", "Celia", "Dario", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kemi", "Lars")
_LAST = ("Abernathy", "Bellweather", "Cordova", "Drummond", "Eastwick", "Falkner", "Galloway", "Hollis")
_TITLES = ("Yoga Flow", "Spin Express", "Pilates Core", "HIIT Circuit", "Barre Basics", "Boxing Drills")
_FILLER_MEMBERS, _FILLER_CLASSES, _FILLER_BOOKINGS = 20, 8, 40


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill the fresh schema: the story rows, then members, classes and bookings drawn from ``seed``."""
    rng = random.Random(seed)
    members = STORY_MEMBERS + _filler_members(rng)
    classes = STORY_CLASSES + _filler_classes(rng)
    # Each insert names its columns, so a column added to schema.sql with a default (or NULL) needs no change here.
    db.executemany("INSERT INTO members (id, first_name, last_name, email, plan) VALUES (?, ?, ?, ?, ?)", members)
    db.executemany("INSERT INTO classes (id, title, starts_at, capacity) VALUES (?, ?, ?, ?)", classes)
    bookings = STORY_BOOKINGS + _filler_bookings(rng, members, classes)
    db.executemany("INSERT INTO bookings (id, member_id, class_id, status) VALUES (?, ?, ?, ?)", bookings)


def _filler_members(rng: random.Random) -> list[tuple[str, ...]]:
    out = []
    for n in range(_FILLER_MEMBERS):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        email = f"{first}.{last}{n}@example.com".lower()
        out.append((f"M-{1100 + n}", first, last, email, rng.choice(("basic", "unlimited"))))
    return out


def _filler_classes(rng: random.Random) -> list[tuple[str, str, str, int]]:
    out = []
    for n in range(_FILLER_CLASSES):
        starts = STUDIO_CLOCK + timedelta(days=rng.randint(1, 14), hours=rng.choice((-2, 0, 3, 9)))
        out.append((f"CL-{300 + n}", rng.choice(_TITLES), starts.strftime("%Y-%m-%dT%H:%M"), rng.choice((10, 14, 20))))
    return out


def _filler_bookings(rng: random.Random, members: list, classes: list) -> list[tuple[str, str, str, str]]:
    """Bookings of the filler members only: the story members' bookings are exactly the ones their tasks expect."""
    story = {m[0] for m in STORY_MEMBERS}
    others = [m[0] for m in members if m[0] not in story]
    upcoming = [c[0] for c in classes if c[2] > STUDIO_CLOCK.strftime("%Y-%m-%dT%H:%M")]
    pairs = {(rng.choice(others), rng.choice(upcoming)) for _ in range(_FILLER_BOOKINGS)}
    return [
        (f"B-{7100 + n}", member, class_id, rng.choice(("booked", "booked", "waitlisted", "cancelled")))
        for n, (member, class_id) in enumerate(sorted(pairs))
    ]
