"""The seeded generator of the retail backend: an invented shop, its customers and their orders.

Everything is drawn from one ``random.Random(seed)`` in a fixed order, so the same seed always gives
the same database, byte for byte; nothing reads the clock or the network. Names, places and products
are invented here. The scale (600 customers, 50 products, ~1,600 orders) is that of a real shop's test
set, yet the whole build takes a few tens of milliseconds.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
from datetime import datetime, timedelta

N_CUSTOMERS = 600
CANCEL_REASONS = ("no longer needed", "ordered by mistake")

FIRST_NAMES = (
    "Adaeze",
    "Bram",
    "Calla",
    "Dorian",
    "Elowen",
    "Fintan",
    "Greer",
    "Hollis",
    "Imara",
    "Jonas",
    "Kestrel",
    "Linnea",
    "Mateo",
    "Nadia",
    "Oren",
    "Priya",
    "Quill",
    "Rosalind",
    "Soren",
    "Talia",
    "Ulric",
    "Vesna",
    "Wren",
    "Xavi",
    "Yara",
    "Zeke",
    "Anouk",
    "Basil",
    "Clementine",
    "Dashiell",
    "Esme",
    "Florian",
    "Gideon",
    "Hana",
    "Idris",
    "Juno",
    "Kofi",
    "Lorcan",
    "Marisol",
    "Nikolai",
    "Odette",
    "Pavel",
    "Rhea",
    "Silas",
    "Tamsin",
    "Uma",
    "Viggo",
    "Winona",
    "Yusra",
    "Zoltan",
)
LAST_NAMES = (
    "Abernathy",
    "Brightwater",
    "Castellane",
    "Delacroix-Hunt",
    "Eckhart",
    "Fairbanks",
    "Galloway",
    "Hawthorne",
    "Ishikawa",
    "Jankowski",
    "Kettleby",
    "Lindqvist",
    "Marchetti",
    "Nakagawa",
    "Okonkwo",
    "Pemberton",
    "Quintero",
    "Ravensworth",
    "Szabo",
    "Thackeray",
    "Underhill",
    "Valdivia",
    "Whitlock",
    "Yamamura",
    "Zelenko",
    "Ashdown",
    "Blackwood",
    "Corrigan",
    "Drummond",
    "Estrada",
    "Fennimore",
    "Grünewald",
    "Holloway",
    "Iversen",
    "Juarez",
    "Kowalczyk",
    "Larkspur",
    "Moreau",
    "Northcott",
    "Oyelaran",
    "Prescott",
    "Rutledge",
    "Sandoval",
    "Trevino",
    "Umberfield",
    "Vasquez",
    "Wexley",
    "Ximenes",
    "Yardley",
    "Zimmerly",
)
STREET_NAMES = (
    "Amberline",
    "Birchcroft",
    "Cobalt",
    "Driftwood",
    "Elderberry",
    "Foxglove",
    "Granary",
    "Heron",
    "Ironbridge",
    "Juniper",
    "Kingfisher",
    "Lanternfly",
    "Millstone",
    "Nettlebed",
    "Orchard",
    "Pinecrest",
    "Quarry",
    "Rookery",
    "Saltmarsh",
    "Thistle",
    "Upland",
    "Vineyard",
    "Willowbank",
    "Yarrow",
)
STREET_KINDS = ("Street", "Avenue", "Road", "Lane", "Court", "Way", "Drive", "Terrace")
CITIES = (  # (invented town, state, first three digits of its zips)
    ("Harrowgate", "OR", "973"),
    ("Lindenfield", "OH", "441"),
    ("Copper Hollow", "AZ", "853"),
    ("Marlow Bay", "ME", "041"),
    ("Ashbury Falls", "NC", "286"),
    ("Westerby", "TX", "765"),
    ("Fenwick Springs", "CO", "806"),
    ("Quayside", "WA", "982"),
    ("Stonemere", "PA", "173"),
    ("Tallowbrook", "MN", "556"),
    ("Redfern", "GA", "305"),
    ("Evenmoor", "WI", "537"),
    ("Glasswater", "NV", "894"),
    ("Brindle Creek", "TN", "372"),
    ("Port Alder", "CA", "955"),
    ("Oakhaven", "MI", "496"),
    ("Saltmere", "FL", "324"),
    ("Kilnsey", "VT", "056"),
)
CARD_BRANDS = ("visa", "mastercard", "amex", "discover")
CARRIERS = ("Parcelwing", "NorthPost", "SwiftRoute", "Bluebox Freight")

# (category, product name, base price, option axes): 10 categories of 5 products each.
CATALOGUE: tuple[tuple[str, str, float, dict[str, tuple[str, ...]]], ...] = (
    (
        "kitchen",
        "Pour-Over Kettle",
        64.0,
        {"material": ("stainless steel", "copper", "matte black"), "capacity": ("0.8 L", "1.2 L")},
    ),
    ("kitchen", "Chef's Knife", 89.0, {"blade": ("6 in", "8 in", "10 in"), "handle": ("walnut", "resin", "steel")}),
    ("kitchen", "Cast Iron Skillet", 42.0, {"size": ("8 in", "10 in", "12 in"), "finish": ("pre-seasoned", "enameled")}),
    ("kitchen", "Burr Coffee Grinder", 119.0, {"color": ("black", "white", "red"), "burr": ("steel", "ceramic")}),
    ("kitchen", "Glass Food Containers", 34.0, {"pieces": ("4", "8", "12"), "lid": ("bamboo", "plastic")}),
    ("outdoor", "Camping Hammock", 48.0, {"color": ("olive", "orange", "navy", "grey"), "capacity": ("single", "double")}),
    ("outdoor", "Trekking Poles", 72.0, {"material": ("aluminum", "carbon"), "grip": ("cork", "foam", "rubber")}),
    (
        "outdoor",
        "Insulated Water Bottle",
        29.0,
        {"capacity": ("500 ml", "750 ml", "1 L"), "color": ("black", "sage", "sand", "blue")},
    ),
    ("outdoor", "Folding Camp Chair", 55.0, {"color": ("green", "black", "red"), "frame": ("steel", "aluminum")}),
    ("outdoor", "Headlamp", 31.0, {"brightness": ("200 lm", "400 lm", "800 lm"), "battery": ("AAA", "rechargeable")}),
    ("audio", "Wireless Earbuds", 129.0, {"color": ("black", "white", "blue"), "noise cancelling": ("yes", "no")}),
    ("audio", "Bookshelf Speakers", 219.0, {"finish": ("walnut", "black", "white"), "connection": ("bluetooth", "wired")}),
    ("audio", "Over-Ear Headphones", 179.0, {"color": ("black", "silver", "green"), "connection": ("wireless", "wired")}),
    ("audio", "Portable Radio", 58.0, {"bands": ("AM/FM", "AM/FM/shortwave"), "color": ("black", "red", "cream")}),
    ("audio", "USB Microphone", 99.0, {"color": ("black", "silver"), "pattern": ("cardioid", "multi-pattern")}),
    ("office", "Desk Lamp", 46.0, {"color": ("black", "white", "brass"), "bulb": ("LED", "halogen")}),
    (
        "office",
        "Ergonomic Office Chair",
        289.0,
        {"color": ("black", "grey", "blue"), "armrests": ("fixed", "adjustable"), "material": ("mesh", "leather")},
    ),
    (
        "office",
        "Mechanical Keyboard",
        139.0,
        {"switch": ("linear", "tactile", "clicky"), "layout": ("full size", "tenkeyless"), "backlight": ("none", "white", "RGB")},
    ),
    ("office", "Standing Desk Converter", 199.0, {"width": ("28 in", "32 in", "36 in"), "color": ("black", "white", "oak")}),
    ("office", "Paper Notebook", 14.0, {"size": ("A5", "A4"), "ruling": ("lined", "dotted", "blank"), "cover": ("hard", "soft")}),
    ("fitness", "Yoga Mat", 38.0, {"thickness": ("4 mm", "6 mm", "8 mm"), "color": ("purple", "teal", "black", "pink")}),
    (
        "fitness",
        "Adjustable Dumbbells",
        249.0,
        {"weight range": ("5-25 lb", "5-52 lb", "10-90 lb"), "grip": ("knurled", "rubber")},
    ),
    ("fitness", "Jump Rope", 17.0, {"length": ("adjustable", "9 ft", "10 ft"), "handle": ("foam", "aluminum")}),
    ("fitness", "Resistance Bands", 24.0, {"strength": ("light", "medium", "heavy"), "material": ("latex", "fabric")}),
    ("fitness", "Foam Roller", 27.0, {"density": ("soft", "firm"), "length": ("12 in", "18 in", "36 in")}),
    ("home decor", "Wall Clock", 52.0, {"diameter": ("10 in", "12 in", "16 in"), "style": ("modern", "rustic", "minimalist")}),
    ("home decor", "Throw Blanket", 61.0, {"material": ("cotton", "fleece", "wool"), "color": ("grey", "cream", "rust", "navy")}),
    (
        "home decor",
        "Table Vase",
        33.0,
        {"material": ("ceramic", "glass"), "color": ("white", "amber", "green"), "height": ("short", "tall")},
    ),
    ("home decor", "Scented Candle", 22.0, {"scent": ("cedar", "lavender", "citrus", "vanilla"), "size": ("small", "large")}),
    ("home decor", "Picture Frame", 19.0, {"size": ("5x7", "8x10", "11x14"), "finish": ("black", "white", "oak")}),
    ("apparel", "Hooded Sweatshirt", 54.0, {"size": ("S", "M", "L", "XL"), "color": ("grey", "black", "navy", "forest")}),
    ("apparel", "Rain Jacket", 96.0, {"size": ("S", "M", "L", "XL"), "color": ("yellow", "navy", "black")}),
    ("apparel", "Wool Socks", 16.0, {"size": ("S", "M", "L"), "pattern": ("solid", "striped")}),
    ("apparel", "Denim Jeans", 68.0, {"fit": ("slim", "straight", "relaxed"), "waist": ("30", "32", "34", "36")}),
    ("apparel", "Knit Beanie", 21.0, {"color": ("charcoal", "mustard", "cream", "red")}),
    ("footwear", "Running Shoes", 124.0, {"size": ("8", "9", "10", "11", "12"), "color": ("black", "white", "orange")}),
    ("footwear", "Hiking Boots", 158.0, {"size": ("7", "8", "9", "10", "11"), "waterproof": ("yes", "no")}),
    ("footwear", "House Slippers", 36.0, {"size": ("S", "M", "L"), "material": ("wool", "fleece")}),
    ("footwear", "Canvas Sneakers", 58.0, {"size": ("6", "7", "8", "9", "10", "11"), "color": ("white", "black", "red")}),
    ("footwear", "Trail Sandals", 64.0, {"size": ("7", "8", "9", "10", "11"), "color": ("brown", "black")}),
    ("travel", "Carry-On Suitcase", 189.0, {"color": ("black", "silver", "teal"), "shell": ("hard", "soft")}),
    ("travel", "Travel Backpack", 112.0, {"capacity": ("20 L", "30 L", "40 L"), "color": ("black", "grey", "olive")}),
    ("travel", "Packing Cubes", 29.0, {"set": ("3-piece", "5-piece"), "color": ("blue", "grey", "coral")}),
    ("travel", "Neck Pillow", 26.0, {"material": ("memory foam", "inflatable"), "color": ("grey", "navy")}),
    ("travel", "Toiletry Bag", 32.0, {"size": ("small", "large"), "material": ("nylon", "leather")}),
    ("games", "Jigsaw Puzzle", 23.0, {"pieces": ("500", "1000", "2000"), "theme": ("mountains", "harbour", "garden")}),
    ("games", "Building Blocks Set", 74.0, {"pieces": ("250", "500", "1000"), "theme": ("castle", "space", "city")}),
    ("games", "Strategy Board Game", 45.0, {"edition": ("standard", "deluxe", "collector")}),
    ("games", "Remote Control Car", 84.0, {"color": ("red", "blue", "green"), "scale": ("1:16", "1:10")}),
    ("games", "Stunt Kite", 39.0, {"shape": ("delta", "diamond", "box"), "color": ("rainbow", "blue", "red")}),
)

STATUS_WEIGHTS = {
    "pending": 30,
    "processed": 12,
    "delivered": 38,
    "cancelled": 8,
    "return requested": 6,
    "exchange requested": 6,
}
ORDERS_PER_CUSTOMER_WEIGHTS = (5, 20, 25, 20, 15, 10, 5)  # for 0..6 orders
LAST_DAY = datetime(2024, 12, 31, 18, 0)


def generate(db: sqlite3.Connection, seed: int) -> None:
    """Fill an empty retail schema; the same seed always yields the same rows."""
    rng = random.Random(seed)
    variants = _catalogue(db, rng)
    customers = _customers(db, rng)
    _orders(db, rng, customers, variants)


def _catalogue(db: sqlite3.Connection, rng: random.Random) -> dict[str, list[tuple]]:
    """Products and their variants; returns each product's variants as (id, price, available)."""
    product_ids = rng.sample(range(100, 1000), len(CATALOGUE))
    variant_numbers = iter(rng.sample(range(10000, 100000), 12 * len(CATALOGUE)))
    by_product: dict[str, list[tuple]] = {}
    for (category, name, base, axes), number in zip(CATALOGUE, product_ids, strict=False):
        pid = f"P-{number:03d}"
        db.execute("INSERT INTO products VALUES (?, ?, ?)", (pid, name, category))
        combos = list(itertools.product(*axes.values()))
        chosen = sorted(rng.sample(range(len(combos)), min(len(combos), rng.randint(3, 12))))
        rows = []
        for i in chosen:
            options = json.dumps(dict(zip(axes, combos[i], strict=False)))
            price = round(base * rng.uniform(0.85, 1.25), 2)
            rows.append([f"V-{next(variant_numbers)}", pid, options, price, int(rng.random() < 0.78)])
        out_of_stock = [r for r in rows if not r[4]]
        for row in out_of_stock[: max(0, 2 - (len(rows) - len(out_of_stock)))]:  # every product keeps two in stock
            row[4] = 1
        db.executemany("INSERT INTO variants VALUES (?, ?, ?, ?, ?)", rows)
        by_product[pid] = [(r[0], r[3], r[4]) for r in rows]
    return by_product


def _customers(db: sqlite3.Connection, rng: random.Random) -> list[tuple[str, list[str], tuple]]:
    """Customers with 1–3 payment methods; returns (id, payment method ids, address) for each."""
    ids = rng.sample(range(100000, 1000000), N_CUSTOMERS)
    seen_people, seen_emails, seen_methods = set(), set(), set()
    out = []
    for number in ids:
        while True:
            first, last, address = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES), _address(rng)
            if (first, last, address[4]) not in seen_people:  # name + zip identifies one customer
                break
        seen_people.add((first, last, address[4]))
        email = _email(rng, first, last, seen_emails)
        cid = f"C-{number}"
        db.execute("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (cid, first, last, email, *address))
        out.append((cid, _payment_methods(db, rng, cid, seen_methods), address))
    return out


def _address(rng: random.Random) -> tuple[str, str, str, str, str, str]:
    city, state, prefix = rng.choice(CITIES)
    street = f"{rng.randint(1, 9899)} {rng.choice(STREET_NAMES)} {rng.choice(STREET_KINDS)}"
    unit = rng.choice(("", "", "", f"Apt {rng.randint(1, 40)}", f"Unit {rng.randint(100, 499)}"))
    return street, unit, city, state, f"{prefix}{rng.randint(0, 99):02d}", "USA"


def _email(rng: random.Random, first: str, last: str, seen: set[str]) -> str:
    """A unique, lower-case address at a reserved example domain."""
    plain_last = last.lower().replace("ü", "u").replace("-", "")
    while True:
        local = rng.choice((f"{first}.{plain_last}", f"{first[0]}{plain_last}", f"{first}{plain_last[:3]}")).lower()
        email = f"{local}{rng.randint(1, 999)}@{rng.choice(('example.com', 'example.net', 'example.org'))}"
        if email not in seen:
            seen.add(email)
            return email


_PREFIX = {"credit_card": "card", "gift_card": "gift", "paypal": "paypal"}


def _payment_methods(db: sqlite3.Connection, rng: random.Random, cid: str, seen: set[str]) -> list[str]:
    """A main card or PayPal account, sometimes a second card, a gift card or (card holders) PayPal."""
    kinds = ["credit_card"] if rng.random() < 0.8 else ["paypal"]
    extras = ["credit_card", "gift_card"] + (["paypal"] if kinds == ["credit_card"] else [])
    kinds += rng.sample(extras, rng.choice((0, 1, 1, 2)))
    ids = []
    for kind in kinds:
        while (pm := f"{_PREFIX[kind]}_{rng.randint(1000, 999999)}") in seen:
            pass
        seen.add(pm)
        if kind == "credit_card":
            row = (pm, cid, kind, rng.choice(CARD_BRANDS), f"{rng.randint(0, 9999):04d}", None)
        elif kind == "gift_card":
            row = (pm, cid, kind, None, None, round(rng.uniform(5, 400), 2))
        else:
            row = (pm, cid, kind, None, None, None)
        db.execute("INSERT INTO payment_methods VALUES (?, ?, ?, ?, ?, ?)", row)
        ids.append(pm)
    return ids


def _orders(db: sqlite3.Connection, rng: random.Random, customers: list, variants: dict[str, list[tuple]]) -> None:
    """Each customer's 0–6 orders with items, payments and (once shipped) a shipment."""
    counts = rng.choices(range(7), weights=ORDERS_PER_CUSTOMER_WEIGHTS, k=len(customers))
    order_numbers = iter(rng.sample(range(1_000_000, 10_000_000), sum(counts)))
    tracking_numbers = iter(rng.sample(range(10**11, 10**12), sum(counts)))
    statuses, weights = list(STATUS_WEIGHTS), list(STATUS_WEIGHTS.values())
    products = list(variants)
    for (cid, methods, home), count in zip(customers, counts, strict=False):
        for _ in range(count):
            oid = f"#R{next(order_numbers)}"
            status = rng.choices(statuses, weights)[0]
            picks = _pick_items(rng, products, variants)
            method = rng.choice(methods)
            address = home if rng.random() < 0.9 else _address(rng)
            days_ago = rng.randint(0, 12) if status in ("pending", "processed") else rng.randint(13, 330)
            created = (LAST_DAY - timedelta(days=days_ago, minutes=rng.randint(0, 1439))).isoformat()
            modified = int(status == "pending" and rng.random() < 0.1)
            reason = rng.choice(CANCEL_REASONS) if status == "cancelled" else None
            db.execute(
                "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (oid, cid, status, method, *address, created, modified, reason),
            )
            total = round(sum(price for _, price, _ in picks), 2)
            payments = [("payment", method, total)]
            items = [[oid, vid, price, "ordered", None] for vid, price, _ in picks]
            if status == "cancelled":
                payments.append(("refund", method, total))
            elif status == "return requested":
                returned = items[: rng.randint(1, len(items))]
                for item in returned:
                    item[3] = "return requested"
                payments.append(("refund", method, round(sum(i[2] for i in returned), 2)))
            elif status == "exchange requested":
                payments.append(_request_exchange(rng, items[0], variants[picks[0][2]], method))
            db.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?, ?)", items)
            db.executemany(
                "INSERT INTO payments VALUES (?, ?, ?, ?, ?)",
                [(oid, seq, kind, pm, amount) for seq, (kind, pm, amount) in enumerate(payments, 1) if amount > 0],
            )
            if status not in ("pending", "cancelled"):
                db.execute("INSERT INTO shipments VALUES (?, ?, ?)", (str(next(tracking_numbers)), oid, rng.choice(CARRIERS)))


def _pick_items(rng: random.Random, products: list[str], variants: dict[str, list[tuple]]) -> list[tuple[str, float, str]]:
    """1–5 distinct variants as (variant id, price paid, product id)."""
    picked: dict[str, tuple[str, float, str]] = {}
    for _ in range(rng.choices((1, 2, 3, 4, 5), weights=(30, 28, 20, 13, 9))[0]):
        product = rng.choice(products)
        vid, price, _ = rng.choice(variants[product])
        picked[vid] = (vid, price, product)
    return list(picked.values())


def _request_exchange(rng: random.Random, item: list, siblings: list[tuple], method: str) -> tuple[str, str, float]:
    """Mark ``item`` for exchange against another in-stock variant; returns the price-difference payment.

    Every product keeps two variants in stock, so there is always one to exchange for.
    """
    target_id, target_price, _ = rng.choice([v for v in siblings if v[2] and v[0] != item[1]])
    item[3], item[4] = "exchange requested", target_id
    difference = round(target_price - item[2], 2)
    return ("payment" if difference > 0 else "refund", method, abs(difference))
