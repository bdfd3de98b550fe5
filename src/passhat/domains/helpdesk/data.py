"""The seeded generator of the service-desk backend: an invented freight company's staff, systems and tickets.

The staff the tasks are about, with their incidents and change requests, are written out by hand
(``DESK_STAFF``), so a task file reads like the records it talks about; a few dozen more are drawn from
one ``random.Random(seed)`` in a fixed sequence, so the same seed always gives the same database and
nothing reads the clock.
"""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from typing import Literal, get_args

Group = Literal["network", "endpoint", "identity", "applications", "telephony"]
GROUPS: tuple[str, ...] = get_args(Group)
Category = Literal["hardware", "software", "network", "access"]
CATEGORIES: tuple[str, ...] = get_args(Category)
Priority = Literal["low", "medium", "high", "critical"]
PRIORITIES: tuple[str, ...] = get_args(Priority)  # lowest first
SERVICES = ("email", "vpn", "routeplanner", "analytics", "cad", "payroll")
N_OTHER_STAFF = 30

# (id, name, kind, owner group, business-critical): the systems everyone shares.
SHARED_ITEMS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("CI-401", "Staff VPN", "vpn", "network", False),
    ("CI-402", "Staff mail", "email", "applications", False),
    ("CI-403", "RoutePlanner", "erp", "applications", True),
    ("CI-404", "North depot wifi", "wifi", "network", True),
    ("CI-405", "South depot wifi", "wifi", "network", True),
    ("CI-406", "Dock 3 label printer", "printer", "endpoint", False),
    ("CI-407", "Dispatch label printer", "printer", "endpoint", False),
    ("CI-408", "Staff directory", "account", "identity", True),
    ("CI-409", "Payroll portal", "payroll", "applications", True),
)
# Personal devices: a kind's name and owner group; each desk employee's is numbered after them.
DEVICE_KINDS = {"laptop": ("Laptop", "endpoint"), "phone": ("Desk phone", "telephony")}

# (id, kind of item, symptom, workaround, retired)
KNOWN_ERRORS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("KE-11", "laptop", "screen flickers when docked", "update the dock firmware from the Software Centre", False),
    ("KE-12", "laptop", "battery drains overnight", "turn off fast startup in the power settings", False),
    ("KE-13", "laptop", "fan runs constantly", "set the cooling policy to passive", True),
    ("KE-21", "printer", "labels print blank", "hold the feed button for five seconds to recalibrate the sensor", False),
    ("KE-22", "printer", "printer jams on thick labels", "switch the media setting to thick stock", False),
    ("KE-31", "vpn", "vpn disconnects every hour", "switch the VPN client to the TCP profile", False),
    ("KE-32", "vpn", "vpn rejects the one-time code", "resync the clock of the authenticator app", False),
    ("KE-41", "email", "calendar invites arrive twice", "remove the duplicate shared calendar from the mail client", False),
    ("KE-42", "email", "mailbox full warning", "archive mail older than one year", False),
    ("KE-51", "erp", "route export hangs", "export routes in batches of under 200 stops", False),
    ("KE-52", "erp", "sign-in loops back", "clear the site data of RoutePlanner in the browser", False),
    ("KE-61", "wifi", "handhelds drop off the wifi", "forget the network and rejoin with the depot certificate", False),
    ("KE-62", "wifi", "wifi is slow at the loading bays", "use the KF-Dock network at the bays", False),
    ("KE-71", "phone", "desk phone shows no service", "reseat the cable in the port marked LAN", False),
    ("KE-72", "phone", "calls drop after ten minutes", "turn off the phone's power saving mode", False),
)


@dataclasses.dataclass(frozen=True)
class Incident:
    id: str
    ci: str  # a shared item's id, or a device kind ("laptop"): the caller's own device
    summary: str
    priority: str = "medium"
    users: int = 1
    category: str | None = None
    status: str = "new"
    groups: tuple[tuple[str, str], ...] = ()  # (group, state) in sequence: the assignment history
    workaround: str | None = None


@dataclasses.dataclass(frozen=True)
class Change:
    id: str
    ci: str
    service: str
    description: str
    kind: str = "standard"
    approval: str = "not requested"
    status: str = "planned"


@dataclasses.dataclass(frozen=True)
class Staff:
    id: str
    staff_number: str
    birth_date: str
    first_name: str
    last_name: str
    department: str
    services: tuple[str, ...] = ("email",)
    incidents: tuple[Incident, ...] = ()
    changes: tuple[Change, ...] = ()


def rejected(*groups: str) -> tuple[tuple[str, str], ...]:
    """An assignment history in which each group in turn sent the incident back."""
    return tuple((g, "rejected") for g in groups)


DESK_STAFF: tuple[Staff, ...] = (
    Staff(
        "U-2001",
        "418207",
        "1986-04-12",
        "Alba",
        "Moreau",
        "Dispatch",
        incidents=(Incident("INC-1011", "laptop", "Screen flickers on the desk dock"),),
    ),
    Staff(
        "U-2002",
        "527319",
        "1979-09-30",
        "Bram",
        "Kowalik",
        "Finance",
        incidents=(
            Incident("INC-1021", "laptop", "Laptop is flat every morning"),
            Incident("INC-1022", "phone", "Desk phone has no dial tone"),
        ),
    ),
    Staff(
        "U-2003",
        "630428",
        "1991-01-07",
        "Carys",
        "Lindholm",
        "Planning",
        incidents=(Incident("INC-1031", "laptop", "Laptop fan is loud all day"),),
    ),
    Staff(
        "U-2004",
        "741536",
        "1983-06-22",
        "Dario",
        "Pellegrini",
        "Sales",
        services=("email", "vpn"),
        incidents=(Incident("INC-1041", "CI-401", "VPN keeps dropping while working from home"),),
    ),
    Staff(
        "U-2005",
        "852647",
        "1995-11-03",
        "Edda",
        "Holm",
        "Warehouse",
        incidents=(Incident("INC-1051", "CI-406", "Dock 3 labels come out empty", users=4),),
    ),
    Staff(
        "U-2006",
        "963758",
        "1972-02-18",
        "Femi",
        "Adeyemi",
        "Customer service",
        incidents=(Incident("INC-1061", "phone", "Desk phone crackles on every call", category="hardware"),),
    ),
    Staff(
        "U-2007",
        "174869",
        "1988-08-09",
        "Greer",
        "Lachance",
        "Planning",
        services=("email", "routeplanner"),
        incidents=(Incident("INC-1071", "CI-403", "Weekly report shows the wrong depot", users=3, category="software"),),
    ),
    Staff(
        "U-2008",
        "285970",
        "1990-05-27",
        "Hugo",
        "Brandvold",
        "Finance",
        incidents=(
            Incident(
                "INC-1081",
                "laptop",
                "Several keys stick on the keyboard",
                category="hardware",
                status="assigned",
                groups=rejected("network"),
            ),
        ),
    ),
    Staff(
        "U-2009",
        "396081",
        "1984-12-14",
        "Ines",
        "Carvalho",
        "Human resources",
        incidents=(
            Incident(
                "INC-1091",
                "CI-408",
                "Cannot open the HR shared drive",
                category="access",
                status="assigned",
                groups=rejected("network", "applications"),
            ),
        ),
    ),
    Staff(
        "U-2010",
        "407192",
        "1977-03-05",
        "Jonas",
        "Weber",
        "Sales",
        incidents=(
            Incident(
                "INC-1101",
                "laptop",
                "Touchpad stops responding",
                category="hardware",
                status="assigned",
                groups=rejected("network"),
            ),
        ),
    ),
    Staff(
        "U-2011",
        "518203",
        "1993-07-19",
        "Kalinda",
        "Rourke",
        "Planning",
        services=("email", "routeplanner"),
        incidents=(
            Incident(
                "INC-1111",
                "CI-403",
                "RoutePlanner will not load any routes",
                users=30,
                category="software",
                status="assigned",
                groups=(("applications", "active"),),
            ),
        ),
    ),
    Staff(
        "U-2012",
        "629314",
        "1982-10-01",
        "Lior",
        "Ben-Ami",
        "Legal",
        incidents=(Incident("INC-1121", "laptop", "Laptop is slow to start"),),
    ),
    Staff(
        "U-2013",
        "730425",
        "1989-04-25",
        "Mireille",
        "Fontaine",
        "Warehouse",
        incidents=(
            Incident(
                "INC-1131",
                "CI-404",
                "Wifi outage in aisles 10 to 14",
                users=8,
                category="network",
                status="assigned",
                groups=(("network", "active"),),
            ),
        ),
    ),
    Staff(
        "U-2014",
        "841536",
        "1975-09-12",
        "Nils",
        "Ekdahl",
        "Warehouse",
        incidents=(
            Incident(
                "INC-1141",
                "CI-406",
                "Dock 3 printer is offline",
                priority="low",
                users=6,
                category="hardware",
                status="assigned",
                groups=(("endpoint", "active"),),
            ),
        ),
    ),
    Staff(
        "U-2015",
        "952647",
        "1994-01-30",
        "Odile",
        "Marchetti",
        "Finance",
        services=("email", "analytics"),
        changes=(Change("CHG-5151", "laptop", "analytics", "Install the Tally analytics client"),),
    ),
    Staff(
        "U-2016",
        "163758",
        "1980-06-08",
        "Pavel",
        "Novak",
        "Planning",
        services=("email", "routeplanner"),
        changes=(Change("CHG-5161", "CI-403", "routeplanner", "Connect the depot scales to RoutePlanner", kind="normal"),),
    ),
    Staff(
        "U-2017",
        "274869",
        "1987-11-21",
        "Quinn",
        "Harlow",
        "Sales",
        changes=(Change("CHG-5171", "laptop", "cad", "Install the CAD viewer"),),
    ),
    Staff(
        "U-2018",
        "385970",
        "1992-03-16",
        "Rosa",
        "Villanueva",
        "Customer service",
        changes=(
            Change("CHG-5181", "CI-402", "email", "A 50 GB mailbox quota", approval="approved"),
            Change("CHG-5182", "CI-402", "email", "Add the Returns shared mailbox"),
        ),
    ),
    Staff(
        "U-2019",
        "496081",
        "1985-08-04",
        "Sten",
        "Aalto",
        "Planning",
        services=("email", "routeplanner"),
        changes=(
            Change(
                "CHG-5191", "CI-403", "routeplanner", "Add the Harwich depot to RoutePlanner", kind="normal", approval="pending"
            ),
        ),
    ),
    Staff(
        "U-2020",
        "507192",
        "1996-12-29",
        "Tamsin",
        "Grey",
        "Dispatch",
        incidents=(
            Incident(
                "INC-1201",
                "laptop",
                "Screen flickers on the desk dock",
                status="workaround",
                category="hardware",
                workaround="KE-11",
            ),
        ),
    ),
    Staff(
        "U-2021",
        "618203",
        "1978-05-11",
        "Umar",
        "Siddiqui",
        "Planning",
        services=("email", "routeplanner"),
        incidents=(
            Incident(
                "INC-1211",
                "CI-403",
                "RoutePlanner down for every depot",
                priority="critical",
                users=45,
                category="software",
                status="assigned",
                groups=(("applications", "active"),),
            ),
        ),
    ),
    Staff(
        "U-2022",
        "729314",
        "1990-09-17",
        "Vera",
        "Lindqvist",
        "Sales",
        services=("email", "vpn"),
        incidents=(Incident("INC-1221", "CI-401", "Cannot sign in to the VPN from home"),),
    ),
    Staff(
        "U-2023",
        "830425",
        "1983-02-02",
        "Wendel",
        "Okoro",
        "Warehouse",
        incidents=(Incident("INC-1231", "CI-405", "Handheld scanners lose connection near dock 1", users=3),),
    ),
    Staff(
        "U-2024",
        "941536",
        "1986-07-24",
        "Xenia",
        "Petrakis",
        "Customer service",
        incidents=(Incident("INC-1241", "phone", "Desk phone handset is cracked"),),
    ),
    Staff(
        "U-2025",
        "152647",
        "1981-10-15",
        "Yusuf",
        "Demir",
        "Sales",
        services=("email", "vpn"),
        incidents=(Incident("INC-1251", "CI-401", "VPN slow in the evening"),),
    ),
    Staff("U-2026", "263758", "1994-04-06", "Zora", "Kovac", "Finance"),
    Staff(
        "U-2027",
        "374869",
        "1976-01-19",
        "Anselm",
        "Richter",
        "Dispatch",
        incidents=(
            Incident(
                "INC-1271",
                "laptop",
                "Docking station does not charge the laptop",
                category="hardware",
                status="assigned",
                groups=(("network", "rejected"), ("endpoint", "active")),
            ),
        ),
    ),
    Staff(
        "U-2028",
        "485970",
        "1988-06-28",
        "Bettina",
        "Sorensen",
        "Planning",
        services=("email", "routeplanner"),
        incidents=(
            Incident(
                "INC-1281",
                "CI-403",
                "Route export fails for the night shift",
                priority="high",
                users=12,
                category="software",
                status="assigned",
                groups=(("applications", "active"),),
            ),
        ),
    ),
    Staff(
        "U-2029",
        "596081",
        "1991-09-09",
        "Cosmin",
        "Dragan",
        "Warehouse",
        incidents=(
            Incident(
                "INC-1291",
                "CI-405",
                "South depot wifi drops in the yard",
                users=6,
                category="network",
                status="assigned",
                groups=rejected("applications"),
            ),
        ),
    ),
    Staff(
        "U-2030",
        "607192",
        "1984-11-20",
        "Delphine",
        "Arnaud",
        "Customer service",
        incidents=(Incident("INC-1301", "CI-402", "Meeting invites show up twice"),),
        changes=(Change("CHG-5301", "CI-402", "email", "A 50 GB mailbox quota"),),
    ),
    Staff(
        "U-2031",
        "718203",
        "1979-04-13",
        "Emeka",
        "Obi",
        "Finance",
        services=("email", "analytics"),
        changes=(Change("CHG-5311", "laptop", "analytics", "Install the Tally analytics client"),),
    ),
    Staff(
        "U-2032",
        "829314",
        "1993-08-01",
        "Freya",
        "Lund",
        "Dispatch",
        changes=(
            Change("CHG-5321", "CI-402", "email", "Add the Dispatch shared mailbox"),
            Change("CHG-5322", "CI-402", "email", "A 50 GB mailbox quota"),
        ),
    ),
    Staff(
        "U-2033",
        "930425",
        "1987-02-26",
        "Gideon",
        "Mbeki",
        "Legal",
        incidents=(Incident("INC-1331", "CI-409", "Payslips page shows an error"),),
    ),
    Staff(
        "U-2034",
        "141536",
        "1995-05-05",
        "Hanne",
        "Voss",
        "Warehouse",
        incidents=(Incident("INC-1341", "CI-404", "Wifi at the north gate is gone", users=2),),
    ),
    Staff(
        "U-2035",
        "252647",
        "1982-12-08",
        "Ivo",
        "Jankovic",
        "Sales",
        incidents=(Incident("INC-1351", "laptop", "Screen goes on and off at my desk"),),
    ),
    Staff(
        "U-2036",
        "363758",
        "1990-03-03",
        "Jia",
        "Wen",
        "Warehouse",
        incidents=(Incident("INC-1361", "CI-407", "Dispatch printer gives blank labels", users=3),),
    ),
    Staff(
        "U-2037",
        "474869",
        "1985-07-14",
        "Kofi",
        "Boateng",
        "Sales",
        services=("email", "vpn"),
        incidents=(Incident("INC-1371", "CI-401", "VPN drops during calls"),),
    ),
    Staff(
        "U-2038",
        "585970",
        "1992-10-27",
        "Lena",
        "Fischer",
        "Warehouse",
        incidents=(Incident("INC-1381", "CI-404", "Scanners keep losing the wifi", users=4),),
    ),
    Staff(
        "U-2039",
        "696081",
        "1980-01-31",
        "Marek",
        "Zielinski",
        "Customer service",
        incidents=(Incident("INC-1391", "CI-402", "Every meeting invite twice"),),
    ),
    Staff(
        "U-2041",
        "818203",
        "1983-03-22",
        "Oskar",
        "Lindgren",
        "Sales",
        services=("email", "vpn"),
        incidents=(Incident("INC-1411", "laptop", "Laptop loses the VPN every hour"),),
    ),
    Staff(
        "U-2042",
        "919314",
        "1997-09-08",
        "Pia",
        "Rasmussen",
        "Dispatch",
        incidents=(Incident("INC-1421", "laptop", "Laptop dead every morning"),),
    ),
    Staff(
        "U-2040",
        "707192",
        "1989-06-17",
        "Nadia",
        "Haddad",
        "Customer service",
        incidents=(Incident("INC-1401", "phone", "Calls cut off mid-conversation"),),
    ),
)

FIRST_NAMES = (
    "Aune",
    "Bex",
    "Cyril",
    "Dagny",
    "Eero",
    "Flora",
    "Gunnar",
    "Hild",
    "Isak",
    "Joost",
    "Kirsi",
    "Lasse",
    "Mads",
    "Nele",
    "Olli",
    "Petra",
    "Rasmus",
    "Signe",
    "Tuva",
    "Ulf",
    "Vilja",
    "Wout",
    "Ylva",
    "Zeno",
)
LAST_NAMES = (
    "Aasen",
    "Berggren",
    "Claes",
    "Dahl",
    "Eklund",
    "Fagerlund",
    "Gylling",
    "Haug",
    "Isaksen",
    "Jokinen",
    "Kask",
    "Lunde",
    "Magnusson",
    "Nurmi",
    "Oja",
    "Persen",
    "Ruud",
    "Strand",
    "Tamm",
    "Vik",
)
DEPARTMENTS = ("Dispatch", "Finance", "Planning", "Sales", "Warehouse", "Legal", "Human resources", "Customer service")
OTHER_SUMMARIES = ("Cannot print", "Slow sign-in", "Wifi drops", "Mail not syncing", "Screen is dim", "Phone echoes")


def device_id(staff_id: str, kind: str) -> str:
    """The id of an employee's own laptop (CI-3xxx) or desk phone (CI-6xxx): U-2007's laptop is CI-3007."""
    base = {"laptop": 3000, "phone": 6000}[kind]
    return f"CI-{base + int(staff_id[2:]) - 2000}"


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill a fresh schema: the shared systems and known errors, the desk's staff, then others drawn from ``seed``."""
    rng = random.Random(seed)
    db.executemany(
        "INSERT INTO config_items VALUES (?, ?, ?, ?, ?, NULL)",
        [(i, name, kind, group, int(critical)) for i, name, kind, group, critical in SHARED_ITEMS],
    )
    db.executemany("INSERT INTO known_errors VALUES (?, ?, ?, ?, ?)", [(*k[:4], int(k[4])) for k in KNOWN_ERRORS])
    for staff in (*DESK_STAFF, *_other_staff(rng)):
        _insert(db, staff)


def _insert(db: sqlite3.Connection, s: Staff) -> None:
    email = f"{s.first_name}.{s.last_name}".lower().replace(" ", "") + f"{s.id[2:]}@kestrelfreight.example"
    db.execute(
        "INSERT INTO employees VALUES (?, ?, ?, ?, ?, ?, ?)",
        (s.id, s.staff_number, s.birth_date, s.first_name, s.last_name, email, s.department),
    )
    db.executemany("INSERT INTO entitlements VALUES (?, ?)", [(s.id, service) for service in s.services])
    for kind, (name, group) in DEVICE_KINDS.items():
        db.execute(
            "INSERT INTO config_items VALUES (?, ?, ?, ?, 0, ?)",
            (device_id(s.id, kind), f"{name} of {s.first_name} {s.last_name}", kind, group, s.id),
        )
    for inc in s.incidents:
        ci = device_id(s.id, inc.ci) if inc.ci in DEVICE_KINDS else inc.ci
        active = next((g for g, state in inc.groups if state == "active"), None)
        db.execute(
            "INSERT INTO incidents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (inc.id, s.id, ci, inc.summary, inc.category, inc.priority, inc.users, inc.status, active, inc.workaround),
        )
        db.executemany(
            "INSERT INTO assignments VALUES (?, ?, ?, ?)", [(inc.id, n, g, state) for n, (g, state) in enumerate(inc.groups, 1)]
        )
    for chg in s.changes:
        ci = device_id(s.id, chg.ci) if chg.ci in DEVICE_KINDS else chg.ci
        db.execute(
            "INSERT INTO changes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (chg.id, s.id, ci, chg.service, chg.description, chg.kind, chg.approval, chg.status),
        )


def _other_staff(rng: random.Random) -> list[Staff]:
    """Staff nobody asks about: a badge, a department, a few services and an incident or two."""
    numbers = {s.staff_number for s in DESK_STAFF}
    shared = [item[0] for item in SHARED_ITEMS]
    out = []
    for n in range(N_OTHER_STAFF):
        number = 2101 + n
        badge = f"{rng.randrange(10**6):06d}"
        while badge in numbers:
            badge = f"{rng.randrange(10**6):06d}"
        numbers.add(badge)
        incidents = tuple(
            Incident(
                f"INC-{2000 + 10 * n + k}",
                rng.choice([*shared, "laptop", "phone"]),
                rng.choice(OTHER_SUMMARIES),
                priority=rng.choice(PRIORITIES[:3]),
                users=rng.randint(1, 9),
                status=(status := rng.choice(("new", "assigned", "resolved"))),
                category=rng.choice(CATEGORIES) if status != "new" else None,
                groups=((rng.choice(GROUPS), "active" if status == "assigned" else "closed"),) if status != "new" else (),
            )
            for k in range(rng.randint(0, 2))
        )
        out.append(
            Staff(
                f"U-{number}",
                badge,
                f"{rng.randint(1958, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                rng.choice(FIRST_NAMES),
                rng.choice(LAST_NAMES),
                rng.choice(DEPARTMENTS),
                services=("email", *rng.sample(SERVICES[1:], rng.randint(0, 2))),
                incidents=incidents,
            )
        )
    return out
