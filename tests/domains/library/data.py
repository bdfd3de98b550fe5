"""The seeded generator of the library backend: an invented town library, its catalogue and its members.

The members the tasks are about are written out by hand (``DESK_MEMBERS``), so a task file reads like
the record it talks about; a few dozen more are drawn from one ``random.Random(seed)`` in a fixed
sequence, so the same seed always gives the same database and nothing reads the clock. The library's
"today" is a constant for the same reason.
"""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from datetime import date, timedelta
from typing import Literal, get_args

TODAY = date(2025, 3, 10)  # the desk's date: what "overdue" is measured against
Branch = Literal["Central", "Riverside", "Hillcrest", "Northgate"]
BRANCHES: tuple[str, ...] = get_args(Branch)
N_OTHER_MEMBERS = 26

# (name, author, formats): each format is one title, numbered T-201 upwards in this sequence.
CATALOGUE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("The Salt Road", "Ada Brennan", ("book", "audiobook")),
    ("A Lantern for Wren", "Tomas Vell", ("book",)),
    ("Harbour of Small Hours", "Imke Sauer", ("book", "large print")),
    ("The Glass Orchard", "Ruth Okafor", ("book",)),
    ("Winter Almanac for Beginners", "Luca Ferrante", ("book",)),
    ("The Quiet Engineer", "Priya Lall", ("book", "audiobook")),
    ("Moths of the Northern Fens", "Gus Haldane", ("book",)),
    ("Seven Bridges Home", "Marta Quill", ("book",)),
    ("The Paper Lighthouse", "Noor Aziz", ("book",)),
    ("Bread and Other Small Mercies", "Jo Castell", ("book",)),
    ("A Field Guide to Rain", "Oskar Lind", ("book",)),
    ("The Cartwright Letters", "Edith Dorrit", ("book",)),
    ("Night Trains of Europe", "Sanne Vos", ("book", "audiobook")),
    ("The Beekeeper's Ledger", "Hal Munro", ("book",)),
    ("Tidewater", "Celia Brandt", ("book",)),
    ("Small Gods of the Kitchen", "Ines Marr", ("book",)),
    ("Counting Stars at Kell", "Rowan Pike", ("book",)),
    ("The Understory", "Dara Fenn", ("book",)),
    ("Ashes of the Vine", "Milo Strand", ("book", "large print")),
)


@dataclasses.dataclass(frozen=True)
class Loan:
    id: str
    title_id: str
    due: str
    renewals: int = 0
    returned: bool = False
    fine: float = 0.0


@dataclasses.dataclass(frozen=True)
class Hold:
    title_id: str
    branch: str
    status: str
    placed_on: str


@dataclasses.dataclass(frozen=True)
class Member:
    id: str
    card_number: str
    birth_date: str
    first_name: str
    last_name: str
    home_branch: str
    loans: tuple[Loan, ...] = ()
    holds: tuple[Hold, ...] = ()


DESK_MEMBERS: tuple[Member, ...] = (
    Member(
        "M-1001",
        "229044178823",
        "1987-03-14",
        "Nell",
        "Arbuthnot",
        "Riverside",
        loans=(Loan("L-50101", "T-203", "2025-03-12"), Loan("L-50102", "T-210", "2025-03-20", renewals=1)),
    ),
    Member(
        "M-1002",
        "229055120964",
        "1979-11-02",
        "Bastian",
        "Oyelaran",
        "Central",
        loans=(
            Loan("L-50201", "T-206", "2025-03-11"),
            Loan("L-50202", "T-212", "2025-03-14", renewals=1),
            Loan("L-50203", "T-218", "2025-03-25"),
        ),
    ),
    Member(
        "M-1003",
        "229066312047",
        "1992-07-28",
        "Cordelia",
        "Vantongeren",
        "Hillcrest",
        loans=(Loan("L-50301", "T-204", "2025-03-03"), Loan("L-50302", "T-219", "2025-03-17")),
    ),
    Member(
        "M-1004",
        "229077453318",
        "1965-01-09",
        "Desmond",
        "Achterberg",
        "Northgate",
        loans=(Loan("L-50401", "T-215", "2025-03-18", renewals=2), Loan("L-50402", "T-213", "2025-03-21")),
    ),
    Member(
        "M-1005",
        "229088036651",
        "2001-05-19",
        "Esther",
        "Lindqvist",
        "Riverside",
        loans=(
            Loan("L-50501", "T-207", "2025-01-20", returned=True, fine=8.5),
            Loan("L-50502", "T-211", "2025-02-02", returned=True, fine=6.0),
            Loan("L-50503", "T-214", "2025-03-15"),
        ),
    ),
    Member(
        "M-1006",
        "229091347702",
        "1983-09-30",
        "Farid",
        "Castellanos",
        "Central",
        loans=(Loan("L-50601", "T-208", "2025-03-19"),),
    ),
    Member(
        "M-1007",
        "229012765580",
        "1990-12-05",
        "Greta",
        "Pohlmann",
        "Hillcrest",
        loans=(Loan("L-50701", "T-223", "2025-03-24"),),
        holds=(
            Hold("T-216", "Hillcrest", "waiting", "2025-02-20"),
            Hold("T-222", "Hillcrest", "ready", "2025-02-11"),
        ),
    ),
    Member(
        "M-1008",
        "229033904127",
        "1974-04-22",
        "Hamish",
        "Okonjo",
        "Northgate",
        loans=(
            Loan("L-50801", "T-201", "2025-03-13"),
            Loan("L-50802", "T-219", "2025-02-14", returned=True, fine=3.75),
        ),
        holds=(Hold("T-202", "Northgate", "waiting", "2025-03-01"),),
    ),
    Member(
        "M-1009",
        "229022089945",
        "1958-08-11",
        "Ingrid",
        "Solberg",
        "Central",
        loans=(Loan("L-50901", "T-224", "2025-02-07", returned=True, fine=12.0),),
    ),
    Member(
        "M-1010",
        "229044716038",
        "1996-02-17",
        "Jonah",
        "Eberhardt",
        "Riverside",
        loans=(Loan("L-51001", "T-211", "2025-03-16", renewals=1), Loan("L-51002", "T-220", "2025-03-26")),
    ),
)

FIRST_NAMES = (
    "Aino",
    "Bertil",
    "Carys",
    "Dmitri",
    "Elspeth",
    "Fenna",
    "Goran",
    "Hester",
    "Ilse",
    "Jasper",
    "Kaja",
    "Leopold",
    "Maren",
    "Nico",
    "Orla",
    "Piet",
    "Ragna",
    "Sami",
    "Thea",
    "Ugo",
    "Veerle",
    "Wim",
    "Yrsa",
    "Zofia",
)
LAST_NAMES = (
    "Ahlgren",
    "Brask",
    "Cullinan",
    "Dekker",
    "Erling",
    "Faure",
    "Grieve",
    "Hollander",
    "Iversen",
    "Jurado",
    "Kowalczyk",
    "Lemaire",
    "Moberg",
    "Nyquist",
    "Ostrowski",
    "Paget",
    "Rinaldi",
    "Sandvik",
    "Thorsen",
    "Varga",
)


def title_ids() -> list[str]:
    """Every title's id, in catalogue sequence."""
    return [f"T-{201 + i}" for i in range(sum(len(formats) for *_, formats in CATALOGUE))]


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill a fresh schema: the catalogue, the desk's members, then the others drawn from ``seed``."""
    rng = random.Random(seed)
    ids = iter(title_ids())
    db.executemany(
        "INSERT INTO titles VALUES (?, ?, ?, ?)",
        [(next(ids), name, author, fmt) for name, author, formats in CATALOGUE for fmt in formats],
    )
    for member in (*DESK_MEMBERS, *_other_members(rng)):
        _insert(db, member)


def _insert(db: sqlite3.Connection, m: Member) -> None:
    email = f"{m.first_name}.{m.last_name}{m.id[2:]}@example.net".lower()
    db.execute(
        "INSERT INTO members VALUES (?, ?, ?, ?, ?, ?, ?)",
        (m.id, m.card_number, m.birth_date, m.first_name, m.last_name, email, m.home_branch),
    )
    db.executemany(
        "INSERT INTO loans VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(n.id, m.id, n.title_id, n.due, n.renewals, int(n.returned), n.fine) for n in m.loans],
    )
    db.executemany(
        "INSERT INTO holds VALUES (?, ?, ?, ?, ?)", [(m.id, h.title_id, h.branch, h.status, h.placed_on) for h in m.holds]
    )


def _other_members(rng: random.Random) -> list[Member]:
    """Members nobody asks about: names, cards, a few loans (some late, some with fees) and holds."""
    cards = {m.card_number for m in DESK_MEMBERS}
    titles = title_ids()
    out = []
    for n in range(N_OTHER_MEMBERS):
        number = 1011 + n
        card = f"2290{rng.randrange(10**8):08d}"
        while card in cards:
            card = f"2290{rng.randrange(10**8):08d}"
        cards.add(card)
        picked = rng.sample(titles, 5)
        loans = tuple(
            Loan(
                f"L-5{number - 1000:02d}{k + 1:02d}",
                title,
                _day(rng.randint(-25, 20)),
                renewals=rng.randint(0, 2),
                returned=(returned := rng.random() < 0.3),
                fine=round(rng.choice((0.0, 0.0, 1.25, 2.5, 4.0)) if returned else 0.0, 2),
            )
            for k, title in enumerate(picked[: rng.randint(1, 3)])
        )
        holds = tuple(
            Hold(title, rng.choice(BRANCHES), rng.choice(("waiting", "waiting", "ready")), _day(-rng.randint(10, 40)))
            for title in picked[3 : 3 + rng.randint(0, 2)]
        )
        out.append(
            Member(
                f"M-{number}",
                card,
                _day(-rng.randint(18 * 365, 80 * 365)),
                rng.choice(FIRST_NAMES),
                rng.choice(LAST_NAMES),
                rng.choice(BRANCHES),
                loans,
                holds,
            )
        )
    return out


def _day(offset: int) -> str:
    """The date ``offset`` days from the desk's today, ISO."""
    return (TODAY + timedelta(days=offset)).isoformat()
