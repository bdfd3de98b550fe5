"""The seeded generator of the motor club backend: an invented roadside-assistance club and its members.

The members the tasks are about are written out by hand (``DESK_MEMBERS``), so a task file reads like the
record it talks about; a few dozen more are drawn from one ``random.Random(seed)`` in a fixed sequence, so
the same seed always gives the same database and nothing reads the clock. The club's "today" is a
constant for the same reason.
"""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any, Literal, get_args

TODAY = date(2025, 6, 16)  # the desk's date: what "active", "expired" and "within a year" are measured against
PlanId = Literal["basic", "classic", "plus", "premier"]
PLAN_IDS: tuple[str, ...] = get_args(PlanId)
CALLOUTS = ("tow", "jump_start", "lockout", "fuel_delivery", "tyre_change")
PLANS: dict[str, tuple[str, float]] = {  # id -> (name, a year's dues)
    "basic": ("Basic", 0.0),
    "classic": ("Classic", 79.0),
    "plus": ("Plus", 129.0),
    "premier": ("Premier", 219.0),
}
COVERED: dict[str, dict[str, int]] = {  # plan -> service -> percent of the fee the plan pays
    "basic": dict.fromkeys(CALLOUTS, 0),
    "classic": {"tow": 25, "jump_start": 100, "lockout": 50, "fuel_delivery": 50, "tyre_change": 50},
    "plus": {"tow": 50, "jump_start": 100, "lockout": 100, "fuel_delivery": 100, "tyre_change": 100},
    "premier": dict.fromkeys(CALLOUTS, 100),
}
FEES = {"tow": 185.0, "jump_start": 65.0, "lockout": 90.0, "fuel_delivery": 55.0, "tyre_change": 75.0, "late_fee": 15.0}


@dataclasses.dataclass(frozen=True)
class Charge:
    id: str
    service: str
    day: str
    fee: float
    method: int = 0  # index into the member's cards
    amount: float | None = None  # None: the whole fee
    bank_dispute: bool = False


@dataclasses.dataclass(frozen=True)
class Member:
    id: str
    number: str
    first_name: str
    last_name: str
    periods: tuple[tuple[str, str, str], ...]  # (plan, starts, ends)
    cards: tuple[tuple[str, str], ...]  # (brand, last four): PM-<id digits><1, 2, ...>
    charges: tuple[Charge, ...] = ()
    credit: float | None = None  # club credit balance; None: no club credit account
    waived: tuple[tuple[str, str], ...] = ()  # (charge id, made on): late fees waived before


def _m(
    n: int,
    number: str,
    first: str,
    last: str,
    periods: list[tuple[str, str, str]],
    cards: list[tuple[str, str]],
    *charges: Charge,
    **more: Any,
) -> Member:
    """Member ``M-<3000 + n>``, written the way the tables below read."""
    return Member(f"M-{3000 + n}", number, first, last, tuple(periods), tuple(cards), charges, **more)


YEAR_TO_AUGUST = ("2024-09-01", "2025-08-31")
DESK_MEMBERS: tuple[Member, ...] = (
    _m(
        1,
        "NW5102231",
        "Alma",
        "Brandvold",
        [("plus", *YEAR_TO_AUGUST)],
        [("Visa", "4821")],
        Charge("CH-50101", "lockout", "2025-06-02", 90.0),
        Charge("CH-50102", "fuel_delivery", "2025-04-20", 55.0),
    ),
    _m(
        2,
        "NW5102318",
        "Bruno",
        "Castellan",
        [("classic", "2024-07-15", "2025-07-14")],
        [("Mastercard", "1177")],
        Charge("CH-50201", "tow", "2025-05-28", 185.0),
        Charge("CH-50202", "lockout", "2025-02-02", 90.0),
        credit=0.0,
    ),
    _m(
        3,
        "NW5103407",
        "Cosima",
        "Dahl",
        [("classic", "2024-03-01", "2025-02-28"), ("plus", "2025-03-01", "2026-02-28")],
        [("Visa", "5530")],
        Charge("CH-50301", "tyre_change", "2025-02-14", 75.0),
        Charge("CH-50302", "lockout", "2025-04-03", 90.0),
    ),
    _m(
        4,
        "NW5104529",
        "Dmitri",
        "Ekwueme",
        [("plus", "2024-05-01", "2025-04-30"), ("basic", "2025-05-01", "2026-04-30")],
        [("Mastercard", "6042")],
        Charge("CH-50401", "tow", "2025-05-19", 185.0),
    ),
    _m(
        5,
        "NW5105613",
        "Edda",
        "Fairweather",
        [("basic", "2023-01-10", "2026-01-09")],
        [("Visa", "9127")],
        Charge("CH-50501", "jump_start", "2025-06-09", 65.0),
    ),
    _m(
        6,
        "NW5106724",
        "Farah",
        "Gulbrandsen",
        [("premier", "2024-11-01", "2025-10-31")],
        [("Amex", "3005")],
        Charge("CH-50601", "tow", "2025-06-05", 240.0),
        Charge("CH-50602", "jump_start", "2025-01-17", 65.0),
    ),
    _m(
        7,
        "NW5107835",
        "Gideon",
        "Holloway",
        [("plus", "2024-08-01", "2025-07-31")],
        [("Visa", "6310"), ("Mastercard", "7419")],
        Charge("CH-50701", "tow", "2025-06-10", 420.0),
        Charge("CH-50702", "lockout", "2025-03-22", 90.0, method=1),
    ),
    _m(
        8,
        "NW5108946",
        "Hanne",
        "Isaksen",
        [("classic", "2024-10-01", "2025-09-30")],
        [("Visa", "2290")],
        Charge("CH-50801", "lockout", "2025-05-30", 90.0, bank_dispute=True),
        Charge("CH-50802", "tyre_change", "2025-04-11", 75.0),
    ),
    _m(9, "NW5109057", "Ivo", "Jankowski", [("classic", "2024-04-01", "2025-03-31")], [("Mastercard", "8802")]),
    _m(
        10,
        "NW5110168",
        "Jolene",
        "Kruger",
        [("plus", "2024-07-01", "2025-06-30")],
        [("Visa", "1564")],
        Charge("CH-51001", "fuel_delivery", "2025-06-12", 55.0),
        Charge("CH-51002", "jump_start", "2025-01-08", 65.0),
    ),
    _m(11, "NW5111279", "Katya", "Lindahl", [("premier", "2025-01-15", "2026-01-14")], [("Amex", "4410")]),
    _m(
        12,
        "NW5112380",
        "Lars",
        "Moen",
        [("plus", "2024-05-10", "2025-05-09")],
        [("Visa", "3376")],
        Charge("CH-51201", "tow", "2025-06-01", 185.0),
    ),
    _m(
        13,
        "NW5113491",
        "Mira",
        "Nakamura",
        [("classic", "2024-12-01", "2025-11-30")],
        [("Visa", "7716")],
        Charge("CH-51301", "late_fee", "2024-12-09", 15.0),
        Charge("CH-51302", "late_fee", "2023-12-11", 15.0),
    ),
    _m(
        14,
        "NW5114502",
        "Nils",
        "Okonkwo",
        [("plus", "2024-09-15", "2025-09-14")],
        [("Mastercard", "2083")],
        Charge("CH-51401", "late_fee", "2023-09-25", 15.0),
        Charge("CH-51402", "late_fee", "2024-09-24", 15.0),
        waived=(("CH-51401", "2024-10-02"),),
    ),
    _m(
        15,
        "NW5115613",
        "Odile",
        "Petrov",
        [("classic", "2024-03-01", "2025-02-28"), ("basic", "2025-03-01", "2026-02-28")],
        [("Visa", "5809")],
        Charge("CH-51501", "late_fee", "2024-03-08", 15.0),
    ),
    _m(
        16,
        "NW5116724",
        "Pavel",
        "Quist",
        [("plus", "2024-10-20", "2025-10-19")],
        [("Visa", "6915")],
        Charge("CH-51601", "jump_start", "2025-02-27", 65.0, amount=0.0),
        credit=32.5,
    ),
    _m(
        17,
        "NW5117835",
        "Quinn",
        "Rasmussen",
        [("classic", "2024-06-01", "2025-05-31"), ("plus", "2025-06-01", "2026-05-31")],
        [("Mastercard", "3398")],
        Charge("CH-51701", "lockout", "2025-04-14", 90.0, amount=45.0),
    ),
    _m(
        18,
        "NW5118946",
        "Rhea",
        "Sorensen",
        [("classic", "2024-11-10", "2025-11-09")],
        [("Visa", "8154")],
        Charge("CH-51801", "tow", "2025-06-07", 185.0, amount=138.75),
    ),
    _m(
        19,
        "NW5119057",
        "Stellan",
        "Thorne",
        [("premier", "2025-04-01", "2026-03-31")],
        [("Amex", "9921")],
        Charge("CH-51901", "annual_dues", "2025-04-01", 219.0),
    ),
    _m(
        20,
        "NW5120168",
        "Tamsin",
        "Ulrich",
        [("plus", *YEAR_TO_AUGUST)],
        [("Mastercard", "4477")],
        Charge("CH-52001", "jump_start", "2025-05-03", 65.0),
        Charge("CH-52002", "lockout", "2025-06-11", 90.0),
        Charge("CH-52003", "tow", "2025-01-19", 185.0, amount=92.5),
    ),
    _m(
        21,
        "NW5121279",
        "Ugo",
        "Varga",
        [("classic", "2024-12-15", "2025-12-14")],
        [("Visa", "1032")],
        Charge("CH-52101", "fuel_delivery", "2025-06-03", 55.0),
        Charge("CH-52102", "tyre_change", "2025-03-30", 75.0),
        credit=12.0,
    ),
    _m(
        22,
        "NW5122380",
        "Vera",
        "Wojcik",
        [("premier", "2024-09-20", "2025-09-19")],
        [("Visa", "5268")],
        Charge("CH-52201", "tow", "2025-06-06", 310.0),
        Charge("CH-52202", "lockout", "2025-06-13", 90.0),
    ),
    _m(
        23,
        "NW5123491",
        "Wendell",
        "Xu",
        [("plus", "2024-10-05", "2025-10-04")],
        [("Visa", "7045"), ("Amex", "8816")],
        Charge("CH-52301", "lockout", "2025-05-25", 90.0),
    ),
    _m(
        24,
        "NW5124502",
        "Xenia",
        "Yilmaz",
        [("plus", "2025-01-01", "2025-12-31")],
        [("Mastercard", "9650")],
        Charge("CH-52401", "tow", "2025-06-04", 185.0),
        Charge("CH-52402", "fuel_delivery", "2025-03-19", 55.0),
    ),
    _m(25, "NW5125613", "Yusuf", "Zeller", [("classic", "2024-06-26", "2025-06-25")], [("Visa", "2719"), ("Mastercard", "3864")]),
    _m(
        26,
        "NW5126724",
        "Zora",
        "Abbott",
        [("premier", "2024-12-01", "2025-11-30")],
        [("Amex", "5173")],
        Charge("CH-52601", "jump_start", "2025-06-08", 65.0, bank_dispute=True),
    ),
    _m(
        27,
        "NW5127835",
        "Anselm",
        "Bjork",
        [("plus", "2024-11-25", "2025-11-24")],
        [("Visa", "6482")],
        Charge("CH-52701", "tow", "2025-06-14", 380.0),
        Charge("CH-52702", "lockout", "2025-05-02", 90.0),
        credit=5.0,
    ),
    _m(
        28,
        "NW5128946",
        "Britt",
        "Carlsen",
        [("plus", "2024-08-18", "2025-08-17")],
        [("Visa", "7591")],
        Charge("CH-52801", "late_fee", "2024-08-26", 15.0),
        Charge("CH-52802", "fuel_delivery", "2025-05-21", 55.0),
    ),
    _m(
        29,
        "NW5129057",
        "Caspar",
        "Dunmore",
        [("classic", "2024-04-01", "2025-03-31"), ("basic", "2025-04-01", "2026-03-31")],
        [("Mastercard", "8605")],
        Charge("CH-52901", "lockout", "2025-03-31", 90.0),
    ),
    _m(
        30,
        "NW5130168",
        "Delphine",
        "Eriksen",
        [("classic", "2024-04-01", "2025-03-31"), ("basic", "2025-04-01", "2026-03-31")],
        [("Visa", "9714")],
        Charge("CH-53001", "lockout", "2025-04-01", 90.0),
    ),
    _m(
        31,
        "NW5131279",
        "Emeric",
        "Falk",
        [("plus", "2025-02-01", "2026-01-31")],
        [("Visa", "1823")],
        Charge("CH-53101", "tow", "2025-06-09", 185.0, amount=92.5),
    ),
    _m(
        32,
        "NW5132380",
        "Fenna",
        "Gould",
        [("plus", "2024-12-20", "2025-12-19")],
        [("Mastercard", "2932")],
        Charge("CH-53201", "tyre_change", "2025-06-01", 75.0),
    ),
    _m(33, "NW5133491", "Gustav", "Hale", [("classic", "2024-06-20", "2025-06-19")], [("Visa", "3041")], credit=120.0),
)

# Members of the ambiguity tasks (a request that leaves out which card or which callout), written after the drawn
# members so that every earlier row keeps its ids and values.
AMBIGUITY_MEMBERS: tuple[Member, ...] = (
    _m(61, "NW5161470", "Orla", "Quennell", [("plus", "2024-07-01", "2025-06-30")], [("Visa", "3316"), ("Visa", "7782")]),
    _m(
        62,
        "NW5162583",
        "Tobias",
        "Wrenfield",
        [("plus", "2024-05-10", "2025-05-09"), ("basic", "2025-05-10", "2026-05-09")],
        [("Mastercard", "5049")],
        Charge("CH-56201", "tow", "2025-04-28", 185.0),
        Charge("CH-56202", "tow", "2025-06-03", 185.0),
    ),
)

FIRST_NAMES = ("Aino", "Bertil", "Carys", "Dagny", "Elio", "Freja", "Gorm", "Hedda", "Isak", "Juno", "Kasimir", "Liv")
LAST_NAMES = ("Aalto", "Berglund", "Corvino", "Dyrberg", "Espinoza", "Fjeld", "Gallo", "Hvid", "Imbert", "Jessen")
BRANDS = ("Visa", "Mastercard", "Amex")
N_OTHER_MEMBERS = 24


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill a fresh schema: the plans and their benefits, the desk's members, the others drawn from ``seed``, then the
    ambiguity tasks' members."""
    db.executemany("INSERT INTO plans VALUES (?, ?, ?)", [(p, name, price) for p, (name, price) in PLANS.items()])
    db.executemany(
        "INSERT INTO benefits VALUES (?, ?, ?)", [(p, s, pct) for p, covered in COVERED.items() for s, pct in covered.items()]
    )
    periods = iter(range(4001, 10**6))
    for member in (*DESK_MEMBERS, *_other_members(random.Random(seed)), *AMBIGUITY_MEMBERS):
        _insert(db, member, periods)


def _insert(db: sqlite3.Connection, m: Member, periods: Iterator[int]) -> None:
    """A member's rows: cards are PM-<digits of the id><1, 2, ...>, club credit PM-<digits>9; ``periods`` numbers memberships."""
    email = f"{m.first_name}.{m.last_name}{m.id[2:]}@example.net".lower()
    db.execute("INSERT INTO members VALUES (?, ?, ?, ?, ?)", (m.id, m.number, m.first_name, m.last_name, email))
    db.executemany(
        "INSERT INTO memberships VALUES (?, ?, ?, ?, ?)", [(f"MS-{next(periods)}", m.id, *period) for period in m.periods]
    )
    cards = [(f"PM-{m.id[2:]}{k + 1}", brand, last_four) for k, (brand, last_four) in enumerate(m.cards)]
    db.executemany("INSERT INTO payment_methods VALUES (?, ?, 'card', ?, ?, 0)", [(pm, m.id, b, f) for pm, b, f in cards])
    if m.credit is not None:
        db.execute("INSERT INTO payment_methods VALUES (?, ?, 'club_credit', NULL, NULL, ?)", (f"PM-{m.id[2:]}9", m.id, m.credit))
    db.executemany(
        "INSERT INTO charges VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
        [
            (
                c.id,
                m.id,
                c.service,
                c.day,
                c.fee,
                c.fee if c.amount is None else c.amount,
                cards[c.method][0],
                int(c.bank_dispute),
                job_note(c),
            )
            for c in m.charges
        ],
    )
    waived = {c.id: c for c in m.charges}
    db.executemany(
        "INSERT INTO adjustments VALUES (?, 'waiver', NULL, ?, ?, ?)",
        [(charge, waived[charge].fee, cards[waived[charge].method][0], made_on) for charge, made_on in m.waived],
    )
    db.executemany("UPDATE charges SET refunded = fee WHERE id = ?", [(charge,) for charge, _ in m.waived])


CONTRACTORS = ("Kessler Recovery", "Ringway Roadside", "Marsh & Sons Towing", "Northlight Auto Rescue")
JOB_NOTES = {
    "tow": "Vehicle towed to the member's chosen garage, {miles} miles.",
    "jump_start": "Flat battery boosted at the roadside; advised a battery check.",
    "lockout": "Keys locked in the car; door opened without damage.",
    "fuel_delivery": "Ran out of fuel; {litres} litres delivered.",
    "tyre_change": "Punctured tyre replaced with the spare.",
}


def job_note(charge: Charge) -> str:
    """What the contractor wrote on a callout (nothing on a late fee): fixed by the charge, no randomness."""
    template = JOB_NOTES.get(charge.service)
    if template is None:
        return ""
    digits = int(charge.id[-3:])
    contractor = CONTRACTORS[digits % len(CONTRACTORS)]
    return f"{contractor}: " + template.format(miles=8 + digits % 40, litres=5 + digits % 6)


def _other_members(rng: random.Random) -> list[Member]:
    """Members nobody asks about: a plan or two over time, a card, a few callouts."""
    numbers = {m.number for m in DESK_MEMBERS}
    out = []
    for n in range(N_OTHER_MEMBERS):
        number = f"NW6{rng.randrange(10**6):06d}"
        while number in numbers:
            number = f"NW6{rng.randrange(10**6):06d}"
        numbers.add(number)
        starts = TODAY - timedelta(days=rng.randint(30, 500))
        ends = starts + timedelta(days=364)
        charges = tuple(
            Charge(f"CH-6{n:02d}{k:02d}", service, _day(starts, rng.randint(0, 300)), FEES[service])
            for k, service in enumerate(rng.sample(CALLOUTS, rng.randint(0, 3)))
        )
        out.append(
            _m(
                34 + n,
                number,
                rng.choice(FIRST_NAMES),
                rng.choice(LAST_NAMES),
                [(rng.choice(PLAN_IDS), starts.isoformat(), ends.isoformat())],
                [(rng.choice(BRANDS), f"{rng.randrange(10**4):04d}")],
                *charges,
            )
        )
    return out


def _day(start: date, offset: int) -> str:
    return (start + timedelta(days=offset)).isoformat()
