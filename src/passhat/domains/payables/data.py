"""The seeded generator of the payables backend: an invented instrument maker's accounts-payable department.

The invoices the tasks are about sit in the exception queue and are written out by hand (``EXCEPTIONS``):
each with its purchase order, what the dock received and how the vendor billed it, so a task file reads
like the queue it talks about. The clerks and a few dozen paid invoices of history are drawn from one
``random.Random(seed)`` in a fixed sequence, so the same seed always gives the same database and nothing
reads the clock. The department's "today" is a constant for the same reason.
"""

from __future__ import annotations

import dataclasses
import random
import re
import sqlite3
from datetime import date, timedelta

TODAY = date(2025, 6, 16)  # the queue's date: what a ledger posting is dated
AP_ACCOUNT = "2100"  # accounts payable: the credit side of every posting
ACCOUNTS = {"fasteners": "5110", "packaging": "5120", "electrical": "5130", "office": "6140", "lab supplies": "5150"}
COMPANIES = ("BW-US", "BW-UK")
N_OTHER_CLERKS = 18
N_HISTORY = 48  # paid invoices drawn at random

CLERKS = (  # (id, employee number, first, last, company, approval limit)
    ("CL-101", "E-40173", "Rosa", "Okafor", "BW-US", 10000.0),
    ("CL-102", "E-40288", "Tobias", "Lindgren", "BW-US", 2500.0),
    ("CL-103", "E-51342", "Aileen", "Marsh", "BW-UK", 10000.0),
    ("CL-104", "E-40391", "Devika", "Anand", "BW-US", 25000.0),
    ("CL-105", "E-51407", "Marguerite", "Osei", "BW-UK", 5000.0),
    ("CL-106", "E-40455", "Hugo", "Brandt", "BW-US", 5000.0),
)

VENDORS = (  # (id, name, category)
    ("V-101", "Kestrel Fasteners", "fasteners"),
    ("V-102", "Northmoor Packaging", "packaging"),
    ("V-103", "Calder Electric Supply", "electrical"),
    ("V-104", "Pellham Office Goods", "office"),
    ("V-105", "Ardent Lab Supply", "lab supplies"),
    ("V-106", "Brookvale Cable", "electrical"),
    ("V-107", "Ostrander Plastics", "packaging"),
    ("V-108", "Wexley Bearings", "fasteners"),
)
CATEGORY = {vendor: category for vendor, _, category in VENDORS}

# (vendor or '*' for the category's default, category, percent of the matched amount, cap in dollars)
TOLERANCES = (
    ("*", "fasteners", 2.0, 50.0),
    ("*", "packaging", 5.0, 100.0),
    ("*", "electrical", 1.0, 25.0),
    ("*", "office", 5.0, 20.0),
    ("*", "lab supplies", 2.0, 75.0),
    ("V-107", "packaging", 0.0, 0.0),  # a fixed-price contract: any overbilling is a variance
    ("V-106", "electrical", 3.0, 150.0),  # a long-standing supplier of cut-to-length cable
)


@dataclasses.dataclass(frozen=True)
class Bill:
    """One invoice line as the vendor wrote it: its own part code, quantity, unit and price per unit."""

    code: str
    quantity: float
    unit: str
    price: float
    description: str = ""


@dataclasses.dataclass(frozen=True)
class Line:
    """One purchase order line, what the dock received of it (in the order's unit), and how it was billed."""

    item: str
    description: str
    ordered: float
    unit: str
    price: float
    received: float
    billed: tuple[Bill, ...]


@dataclasses.dataclass(frozen=True)
class InvoiceCase:
    """An invoice in the exception queue with its purchase order (and receipt, unless nothing arrived yet).

    ``extra``: lines billed for nothing on the order (a surcharge); ``duplicate_of``: an earlier invoice,
    already paid, that the vendor billed under the same number for the same order; ``paid``: history, settled.
    """

    invoice: str
    vendor: str
    company: str
    number: str
    po: str
    receipt: str
    lines: tuple[Line, ...]
    extra: tuple[Bill, ...] = ()
    received: bool = True
    duplicate_of: str | None = None
    paid: bool = False


def _ex(n: int, vendor: str, company: str, number: str, *lines: Line, **more: object) -> InvoiceCase:
    """The exception numbered ``n``: invoice INV-710nn against PO-41nn (received on GR-81nn)."""
    return InvoiceCase(f"INV-710{n:02d}", vendor, company, number, f"PO-41{n:02d}", f"GR-81{n:02d}", lines, **more)  # type: ignore[arg-type]


def _each(code: str, quantity: float, price: float) -> Bill:
    return Bill(code, quantity, "each", price)


EXCEPTIONS: tuple[InvoiceCase, ...] = (
    # 01: ordered by the box, billed by the piece, to the cent
    _ex(
        1,
        "V-101",
        "BW-US",
        "KF-20931",
        Line("FS-M6-20", "M6 x 20 hex bolt", 10, "box of 100", 42.00, 10, (_each("K6020", 1000, 0.42),)),
        Line("FS-W6", "M6 flat washer", 5, "box of 200", 18.00, 5, (_each("K6W", 1000, 0.09),)),
    ),
    # 02: the vendor's own codes, and a few cents over
    _ex(
        2,
        "V-103",
        "BW-US",
        "CES-118204",
        Line("EL-CB16", "16 A circuit breaker", 40, "each", 23.50, 40, (_each("CB-16-1P", 40, 23.55),)),
        Line("EL-DIN1", "DIN rail, 1 m", 25, "each", 6.80, 25, (_each("DR35-1000", 25, 6.80),)),
    ),
    # 03: one order line billed as two, one per delivery
    _ex(
        3,
        "V-102",
        "BW-US",
        "NMP-5530",
        Line(
            "PK-BX40",
            "Shipping carton 40 cm",
            600,
            "each",
            1.85,
            600,
            (Bill("NB40", 12, "bundle of 25", 46.25), Bill("NB40", 12, "bundle of 25", 46.25)),
        ),
        Line("PK-TAPE", "Packing tape, 66 m", 48, "each", 3.10, 48, (_each("NT66", 48, 3.15),)),
    ),
    # 04: a price rise inside the lab tolerance
    _ex(
        4,
        "V-105",
        "BW-US",
        "ALS-77310",
        Line("LB-PIP10", "Pipette tips 10 ul, rack of 96", 60, "each", 14.20, 60, (_each("AT-10-96", 60, 14.41),)),
    ),
    # 05: office supplies a few dollars over
    _ex(
        5,
        "V-104",
        "BW-US",
        "POG-3391",
        Line("OF-PAPA4", "Copy paper A4, ream", 40, "each", 4.60, 40, (_each("P-A4-80", 40, 4.75),)),
        Line("OF-TONER", "Toner cartridge, black", 6, "each", 61.00, 6, (_each("TN-2410", 6, 61.00),)),
    ),
    # 06: a price rise beyond tolerance
    _ex(
        6,
        "V-101",
        "BW-US",
        "KF-21077",
        Line("FS-M8-30", "M8 x 30 hex bolt", 20, "box of 100", 61.00, 20, (_each("K8030", 2000, 0.66),)),
    ),
    # 07: billed for more than the dock received
    _ex(
        7,
        "V-102",
        "BW-US",
        "NMP-5604",
        Line("PK-BUB", "Bubble wrap roll, 50 m", 80, "each", 22.40, 68, (_each("NBW50", 80, 22.40),)),
    ),
    # 08: electrical, a price rise by the case
    _ex(
        8,
        "V-103",
        "BW-US",
        "CES-118377",
        Line("EL-TB4", "Terminal block 4 mm2", 50, "box of 10", 19.90, 50, (Bill("TB4-10", 50, "box of 10", 20.90),)),
        Line("EL-CB16", "16 A circuit breaker", 20, "each", 23.50, 20, (_each("CB-16-1P", 20, 23.50),)),
    ),
    # 09: lab gloves far over the agreed price
    _ex(
        9,
        "V-105",
        "BW-UK",
        "ALS-77402",
        Line("LB-GLV-M", "Nitrile gloves M, box of 100", 120, "each", 7.90, 120, (_each("AT-GN-M", 120, 8.95),)),
    ),
    # 10: a fixed-price contract billed a cent over per piece
    _ex(
        10,
        "V-107",
        "BW-UK",
        "OPL-90114",
        Line("PK-BAG30", "Poly bag 30 x 40", 20, "pack of 250", 27.50, 20, (_each("OB3040", 5000, 0.12),)),
    ),
    # 11: the same invoice number again, for the same order
    _ex(
        11,
        "V-108",
        "BW-US",
        "WB-66120",
        Line("FS-BR6204", "Ball bearing 6204", 100, "each", 3.85, 100, (_each("6204-2RS", 100, 3.85),)),
        duplicate_of="INV-60311",
    ),
    # 12: electrical well over the 1% tolerance
    _ex(
        12,
        "V-103",
        "BW-US",
        "CES-118452",
        Line("EL-CAB25", "Installation cable 2.5 mm2, 100 m", 30, "each", 88.00, 30, (_each("IC25-100", 30, 92.40),)),
    ),
    # 13: a clean match, but billed before
    _ex(
        13,
        "V-104",
        "BW-US",
        "POG-3402",
        Line("OF-BIND", "Ring binder A4", 60, "each", 2.35, 60, (_each("RB-A4", 60, 2.35),)),
        duplicate_of="INV-60313",
    ),
    # 14: within tolerance, but over a junior clerk's approval limit
    _ex(
        14,
        "V-106",
        "BW-US",
        "BVC-4471",
        Line("EL-CAB15", "Installation cable 1.5 mm2, 100 m", 60, "each", 64.00, 60, (_each("BC15-100", 60, 64.50),)),
    ),
    # 15: an invoice of the UK company
    _ex(
        15,
        "V-101",
        "BW-UK",
        "KF-21130",
        Line("FS-M5-16", "M5 x 16 socket screw", 8, "box of 100", 24.00, 8, (_each("K5016", 800, 0.24),)),
    ),
    # 16: billed for the whole order, part of it received
    _ex(
        16,
        "V-101",
        "BW-US",
        "KF-21188",
        Line("FS-NUT8", "M8 hex nut", 30, "box of 200", 21.00, 24, (Bill("KN8", 30, "box of 200", 21.00),)),
    ),
    # 17: lab, over on price and on quantity
    _ex(
        17,
        "V-105",
        "BW-UK",
        "ALS-77455",
        Line("LB-FLT", "Syringe filter 0.2 um, pack of 50", 40, "each", 38.00, 36, (_each("AT-SF02", 40, 39.10),)),
    ),
    # 18: a second copy of an invoice already paid
    _ex(
        18,
        "V-102",
        "BW-US",
        "NMP-5488",
        Line("PK-BX60", "Shipping carton 60 cm", 300, "each", 2.60, 300, (_each("NB60", 300, 2.60),)),
        duplicate_of="INV-60318",
    ),
    # 19: bearings by the pair, ordered singly
    _ex(
        19,
        "V-108",
        "BW-US",
        "WB-66208",
        Line("FS-BR6001", "Ball bearing 6001", 200, "each", 2.10, 190, (Bill("6001-2Z", 100, "pair", 4.40),)),
    ),
    # 20: a clean match whose vendor wants its bank details changed
    _ex(
        20,
        "V-104",
        "BW-US",
        "POG-3417",
        Line("OF-PENS", "Ballpoint pen, box of 50", 12, "each", 9.80, 12, (_each("BP-50", 12, 9.80),)),
    ),
    # 21: fasteners over tolerance, which the clerk wants waved through
    _ex(
        21,
        "V-101",
        "BW-US",
        "KF-21204",
        Line("FS-M10-50", "M10 x 50 hex bolt", 15, "box of 50", 48.00, 15, (_each("K1050", 750, 1.02),)),
    ),
    # 22 and 23: two clean invoices of one clerk's morning
    _ex(
        22,
        "V-103",
        "BW-US",
        "CES-118501",
        Line("EL-RCD", "RCD 40 A 30 mA", 12, "each", 41.00, 12, (_each("RCD-40-30", 12, 41.20),)),
    ),
    _ex(
        23,
        "V-101",
        "BW-US",
        "KF-21231",
        Line("FS-M6-20", "M6 x 20 hex bolt", 6, "box of 100", 42.00, 6, (_each("K6020", 600, 0.42),)),
    ),
    # 24: billed for more than received; 25: priced over the contract
    _ex(
        24,
        "V-102",
        "BW-US",
        "NMP-5651",
        Line("PK-BX40", "Shipping carton 40 cm", 400, "each", 1.85, 350, (Bill("NB40", 16, "bundle of 25", 46.25),)),
    ),
    _ex(
        25,
        "V-105",
        "BW-US",
        "ALS-77498",
        Line("LB-PIP10", "Pipette tips 10 ul, rack of 96", 100, "each", 14.20, 100, (_each("AT-10-96", 100, 15.60),)),
    ),
    # 26: a clean office order; 27: a packaging order on the fixed-price contract, over it
    _ex(
        26,
        "V-104",
        "BW-US",
        "POG-3425",
        Line("OF-PAPA4", "Copy paper A4, ream", 100, "each", 4.60, 100, (_each("P-A4-80", 100, 4.60),)),
        Line("OF-NOTE", "Sticky notes, pack of 12", 20, "each", 5.40, 20, (_each("SN-12", 20, 5.50),)),
    ),
    _ex(
        27,
        "V-107",
        "BW-US",
        "OPL-90161",
        Line("PK-BAG30", "Poly bag 30 x 40", 10, "pack of 250", 27.50, 10, (Bill("OB3040", 10, "pack of 250", 28.75),)),
    ),
    # 28: a UK lab order, slightly over
    _ex(
        28,
        "V-105",
        "BW-UK",
        "ALS-77512",
        Line("LB-GLV-M", "Nitrile gloves M, box of 100", 80, "each", 7.90, 80, (_each("AT-GN-M", 80, 8.00),)),
    ),
    # 29: electrical, over on price; 30: fasteners short received
    _ex(
        29,
        "V-103",
        "BW-US",
        "CES-118560",
        Line("EL-CAB25", "Installation cable 2.5 mm2, 100 m", 20, "each", 88.00, 20, (_each("IC25-100", 20, 90.00),)),
    ),
    _ex(
        30,
        "V-108",
        "BW-US",
        "WB-66251",
        Line("FS-BR6204", "Ball bearing 6204", 400, "each", 3.85, 300, (_each("6204-2RS", 400, 3.85),)),
    ),
    # 31 and 32: large orders, within tolerance, over most clerks' limits
    _ex(
        31,
        "V-106",
        "BW-US",
        "BVC-4502",
        Line("EL-CAB15", "Installation cable 1.5 mm2, 100 m", 110, "each", 64.00, 110, (_each("BC15-100", 110, 64.00),)),
    ),
    _ex(
        32,
        "V-103",
        "BW-US",
        "CES-118577",
        Line("EL-PANEL", "Distribution board, 24 way", 30, "each", 112.00, 30, (_each("DB-24W", 30, 112.00),)),
    ),
    # 33: a freight surcharge nobody ordered
    _ex(
        33,
        "V-102",
        "BW-US",
        "NMP-5702",
        Line("PK-TAPE", "Packing tape, 66 m", 120, "each", 3.10, 120, (_each("NT66", 120, 3.10),)),
        extra=(Bill("FRT-EXP", 1, "each", 65.00, "Express freight surcharge"),),
    ),
    # 34: 3% over, which the category allows but this vendor's contract does not
    _ex(
        34,
        "V-107",
        "BW-US",
        "OPL-90188",
        Line("PK-FILM", "Stretch film 500 mm", 40, "each", 12.50, 40, (_each("OSF500", 40, 12.85),)),
    ),
    # 35: 2.5% over, beyond the electrical default but inside this vendor's own tolerance
    _ex(
        35,
        "V-106",
        "BW-US",
        "BVC-4519",
        Line("EL-CAB6", "Flexible cable 6 mm2, 50 m", 25, "each", 96.00, 25, (_each("BC6-50", 25, 98.40),)),
    ),
    # 36: a clean lab order
    _ex(
        36,
        "V-105",
        "BW-US",
        "ALS-77530",
        Line("LB-FLT", "Syringe filter 0.2 um, pack of 50", 10, "each", 38.00, 10, (_each("AT-SF02", 10, 38.00),)),
    ),
    # 37: billed before anything was received
    _ex(
        37,
        "V-108",
        "BW-US",
        "WB-66290",
        Line("FS-BR6305", "Ball bearing 6305", 50, "each", 6.75, 0, (_each("6305-2RS", 50, 6.75),)),
        received=False,
    ),
)

FIRST_NAMES = ("Anouk", "Basil", "Chiara", "Dario", "Efua", "Fionn", "Greer", "Hamid", "Isolde", "Jaro", "Keziah", "Lorcan")
LAST_NAMES = ("Abernathy", "Bisset", "Coyle", "Drummond", "Eze", "Falk", "Gorski", "Halloran", "Iqbal", "Jessop", "Kilbride")


def each_per_unit(unit: str) -> int:
    """How many single pieces one unit holds: "box of 100" 100, "pair" 2, "each" 1."""
    found = re.search(r"\bof (\d+)$", unit)
    return int(found.group(1)) if found else 2 if unit == "pair" else 1


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill a fresh schema: the department's clerks, vendors and tolerances, the queue, then history from ``seed``."""
    rng = random.Random(seed)
    db.executemany(
        "INSERT INTO clerks VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (i, e, f"{f}.{la}.{i[3:]}@brightwater.example".lower(), f, la, c, cap)
            for i, e, f, la, c, cap in (*CLERKS, *_other_clerks(rng))
        ],
    )
    db.executemany(
        "INSERT INTO vendors VALUES (?, ?, ?)",
        [(v, name, f"ap@{name.split()[0].lower()}.example") for v, name, _ in VENDORS],
    )
    db.executemany("INSERT INTO tolerances VALUES (?, ?, ?, ?)", TOLERANCES)
    for n, ex in enumerate(EXCEPTIONS):
        _insert_exception(db, ex, _day(-30 + n % 9))
    for ex in _history(rng):
        _insert_exception(db, ex, _day(-rng.randint(40, 200)))


def _insert_exception(db: sqlite3.Connection, ex: InvoiceCase, ordered_on: str) -> None:
    """The order, its receipt, the vendor's codes and the invoice (and, for a duplicate, the paid original)."""
    db.execute(
        "INSERT INTO purchase_orders VALUES (?, ?, ?, ?, ?)", (ex.po, ex.vendor, ex.company, CATEGORY[ex.vendor], ordered_on)
    )
    for n, line in enumerate(ex.lines, 1):
        db.execute(
            "INSERT INTO po_lines VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (ex.po, n, line.item, line.description, line.ordered, line.unit, each_per_unit(line.unit), line.price),
        )
        db.executemany(
            "INSERT OR IGNORE INTO vendor_parts VALUES (?, ?, ?)", [(ex.vendor, b.code, line.item) for b in line.billed]
        )
    received_on = _after(ordered_on, 9)
    if ex.received:
        db.execute("INSERT INTO receipts VALUES (?, ?, ?)", (ex.receipt, ex.po, received_on))
        db.executemany(
            "INSERT INTO receipt_lines VALUES (?, ?, ?)", [(ex.receipt, n, line.received) for n, line in enumerate(ex.lines, 1)]
        )
    bills = [(b, line.description) for line in ex.lines for b in line.billed] + [(b, b.description) for b in ex.extra]
    if ex.duplicate_of:
        _insert_invoice(db, ex.duplicate_of, ex, bills, _after(ordered_on, 10), paid=True)
    _insert_invoice(db, ex.invoice, ex, bills, _after(ordered_on, 12), paid=ex.paid)


def _insert_invoice(
    db: sqlite3.Connection, invoice: str, ex: InvoiceCase, bills: list[tuple[Bill, str]], dated: str, paid: bool
) -> None:
    total = round(sum(b.quantity * b.price for b, _ in bills), 2)
    status, decision, payable = ("paid", "approved", total) if paid else ("exception", None, None)
    db.execute(
        "INSERT INTO invoices VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
        (invoice, ex.vendor, ex.number, ex.po, ex.company, dated, total, status, decision, payable, int(paid)),
    )
    db.executemany(
        "INSERT INTO invoice_lines VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (invoice, n, b.code, described, b.quantity, b.unit, each_per_unit(b.unit), b.price)
            for n, (b, described) in enumerate(bills, 1)
        ],
    )
    if paid:
        account = ACCOUNTS[CATEGORY[ex.vendor]]
        db.executemany(
            "INSERT INTO ledger VALUES (?, ?, ?, ?, ?, ?)",
            [(invoice, "expense", account, total, 0.0, dated), (invoice, "payable", AP_ACCOUNT, 0.0, total, dated)],
        )


def _history(rng: random.Random) -> list[InvoiceCase]:
    """Paid invoices of earlier months: each vendor's ordinary orders, matched and settled."""
    items = [(ex.vendor, line) for ex in EXCEPTIONS for line in ex.lines]
    out = []
    for n in range(N_HISTORY):
        vendor, line = rng.choice(items)
        quantity = float(rng.randint(1, 8) * 50)
        pieces = quantity * each_per_unit(line.unit)
        bills = tuple(dataclasses.replace(b, quantity=pieces / each_per_unit(b.unit)) for b in line.billed[:1])
        out.append(
            InvoiceCase(
                f"INV-6{n + 400:04d}",
                vendor,
                rng.choice(COMPANIES),
                f"H-{rng.randrange(10**5):05d}",
                f"PO-3{n + 400:03d}",
                f"GR-7{n + 400:03d}",
                (dataclasses.replace(line, ordered=quantity, received=quantity, billed=bills),),
                paid=True,
            )
        )
    return out


def _other_clerks(rng: random.Random) -> list[tuple[str, str, str, str, str, float]]:
    """Clerks nobody here talks about: names, badge numbers, a company and a limit."""
    taken = {e for _, e, *_ in CLERKS}
    out = []
    for n in range(N_OTHER_CLERKS):
        number = f"E-{rng.randrange(40000, 60000)}"
        while number in taken:
            number = f"E-{rng.randrange(40000, 60000)}"
        taken.add(number)
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        out.append((f"CL-{111 + n}", number, first, last, rng.choice(COMPANIES), rng.choice((2500.0, 5000.0))))
    return out


def _day(offset: int) -> str:
    """The date ``offset`` days from the queue's today, ISO."""
    return (TODAY + timedelta(days=offset)).isoformat()


def _after(day: str, days: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=days)).isoformat()
