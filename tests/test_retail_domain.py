"""The retail domain: its generated data, its tools' three result shapes, its policy rules, its wording."""

from __future__ import annotations

import contextlib
import re
import sqlite3

import pytest

from passhat.domains import load_domain
from passhat.domains.model import Action
from passhat.domains.retail.model import Shopper
from passhat.env import Environment

DOMAIN = load_domain("retail")


@contextlib.contextmanager
def trial():
    """A fresh fork: one conversation, so one customer."""
    environment = Environment(DOMAIN)
    try:
        yield environment
    finally:
        environment.close()


@pytest.fixture
def env():
    with trial() as environment:
        yield environment


def fresh_db(seed: int) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.executescript(DOMAIN.schema_sql)
    DOMAIN.generate(db, seed)
    db.commit()
    return db


def scalar(env, sql, *params):
    row = env.db.execute(sql, params).fetchone()
    return None if row is None else row[0]


def login(env, customer_id):
    email = scalar(env, "SELECT email FROM customers WHERE id = ?", customer_id)
    assert env.execute("find_customer_by_email", {"email": email}).result["data"] == customer_id


def order_of(env, status, extra="1"):
    """Some order in ``status`` (and meeting the SQL condition ``extra`` on o), with its customer logged in."""
    row = env.db.execute(
        f"SELECT o.id, o.customer_id FROM orders o WHERE o.status = ? AND {extra} ORDER BY o.id LIMIT 1", (status,)
    ).fetchone()
    assert row is not None, f"the data has no {status} order with {extra}"
    login(env, row["customer_id"])
    return row["id"]


def swap(env, status, price="v2.price >= oi.price"):
    """(order id, item id, new item id): an in-stock other option of an item's product, not yet in the order."""
    row = env.db.execute(
        f"""SELECT oi.order_id, oi.variant_id, v2.id, o.customer_id FROM order_items oi
            JOIN orders o ON o.id = oi.order_id
            JOIN variants v1 ON v1.id = oi.variant_id
            JOIN variants v2 ON v2.product_id = v1.product_id AND v2.id != v1.id AND v2.available = 1
            WHERE o.status = ? AND o.items_modified = 0 AND {price}
              AND v2.id NOT IN (SELECT variant_id FROM order_items WHERE order_id = o.id)
            ORDER BY oi.order_id, oi.variant_id, v2.id LIMIT 1""",
        (status,),
    ).fetchone()
    login(env, row[3])
    return row[0], row[1], row[2]


def method_of(env, order_id):
    return scalar(env, "SELECT payment_method_id FROM orders WHERE id = ?", order_id)


def rule_ids(execution):
    return {v.rule for v in execution.violations}


ADDRESS = {"address1": "12 Heron Lane", "address2": "", "city": "Harrowgate", "state": "OR", "zip": "97301", "country": "USA"}


# -- generated data ---------------------------------------------------------------------------------


def test_generator_is_deterministic_and_seed_sensitive():
    assert fresh_db(5).serialize() == fresh_db(5).serialize()
    assert fresh_db(5).serialize() != fresh_db(6).serialize()


def test_generator_scale_and_mix():
    db = fresh_db(DOMAIN.data_seed)
    count = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
    assert count("SELECT COUNT(*) FROM customers") >= 500
    assert count("SELECT COUNT(*) FROM products") >= 50
    assert count("SELECT COUNT(*) FROM orders") >= 1000
    assert count("SELECT COUNT(DISTINCT category) FROM products") >= 8
    assert count("SELECT MIN(n) FROM (SELECT COUNT(*) n FROM variants GROUP BY product_id)") >= 3
    assert count("SELECT MAX(n) FROM (SELECT COUNT(*) n FROM variants GROUP BY product_id)") <= 12
    assert count("SELECT COUNT(*) FROM variants WHERE available = 0") > 0
    assert count("SELECT MAX(n) FROM (SELECT COUNT(*) n FROM order_items GROUP BY order_id)") <= 5
    assert count("SELECT COUNT(*) FROM orders WHERE status = 'pending'") >= 200
    assert count("SELECT COUNT(*) FROM orders WHERE status = 'delivered'") >= 200
    assert (
        count(
            "SELECT COUNT(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id"
            " AND p.seq = 1 AND p.payment_method_id = o.payment_method_id)"
        )
        == 0
    )
    assert (
        count(
            "SELECT COUNT(*) FROM orders o WHERE status IN ('processed', 'delivered')"
            " AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)"
        )
        == 0
    )
    assert count("SELECT MAX(n) FROM (SELECT COUNT(*) n FROM payment_methods GROUP BY customer_id)") <= 3


def test_ids_have_their_documented_formats():
    db = fresh_db(DOMAIN.data_seed)
    formats = {
        "customers": r"C-\d{6}",
        "orders": r"#R\d{7}",
        "products": r"P-\d{3}",
        "variants": r"V-\d{5}",
        "payment_methods": r"(card|gift|paypal)_\d{4,6}",
    }
    for table, pattern in formats.items():
        ids = [r[0] for r in db.execute(f"SELECT id FROM {table}")]
        assert ids and all(re.fullmatch(pattern, i) for i in ids), table
        assert all(re.fullmatch(DOMAIN.id_pattern, i) for i in ids), table


def test_every_table_declares_a_primary_key():
    db = fresh_db(DOMAIN.data_seed)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert len(tables) == 9
    for table in tables:
        assert any(col[5] for col in db.execute(f"PRAGMA table_info({table})")), table


# -- read tools -------------------------------------------------------------------------------------


def test_customer_lookups(env):
    c = env.db.execute("SELECT * FROM customers ORDER BY id LIMIT 1").fetchone()
    assert env.execute("find_customer_by_email", {"email": c["email"].upper()}).result == {"status": "ok", "data": c["id"]}
    by_name = env.execute(
        "find_customer_by_name_zip", {"first_name": c["first_name"].lower(), "last_name": c["last_name"], "zip": c["zip"]}
    )
    assert by_name.result["data"] == c["id"]
    missing = env.execute("find_customer_by_email", {"email": "nobody@example.com"}).result
    assert missing["status"] == "not_found" and missing["found"] is False
    wrong_zip = env.execute(
        "find_customer_by_name_zip", {"first_name": c["first_name"], "last_name": c["last_name"], "zip": "00000"}
    )
    assert wrong_zip.result["status"] == "not_found"


def test_get_customer_lists_methods_and_orders(env):
    cid = scalar(env, "SELECT customer_id FROM payment_methods WHERE kind = 'gift_card' ORDER BY id LIMIT 1")
    data = env.execute("get_customer", {"customer_id": cid}).result["data"]
    gift = next(m for m in data["payment_methods"] if m["kind"] == "gift_card")
    assert isinstance(gift["balance"], float)
    assert set(data["orders"]) == {r[0] for r in env.db.execute("SELECT id FROM orders WHERE customer_id = ?", (cid,))}
    assert env.execute("get_customer", {"customer_id": "C-000000"}).result["status"] == "not_found"


def test_get_order_shows_items_payments_and_shipment(env):
    oid = scalar(env, "SELECT id FROM orders WHERE status = 'delivered' ORDER BY id LIMIT 1")
    data = env.execute("get_order", {"order_id": oid}).result["data"]
    assert data["status"] == "delivered" and data["shipment"]["tracking_id"]
    item = data["items"][0]
    assert re.fullmatch(r"V-\d{5}", item["item_id"]) and item["product_name"] and isinstance(item["options"], dict)
    assert data["payments"][0] == {
        "kind": "payment",
        "payment_method_id": data["payment_method_id"],
        "amount": round(sum(i["price"] for i in data["items"]), 2),
    }
    assert env.execute("get_order", {"order_id": "#R0000000"}).result["status"] == "not_found"


def test_catalogue_reads(env):
    categories = env.execute("list_categories", {}).result["data"]
    assert len(categories) == 10 and sum(len(c["products"]) for c in categories) == 50
    found = env.execute("find_product", {"name": "LAMP"}).result["data"]
    assert [p["name"] for p in found] == ["Desk Lamp", "Headlamp"]  # substring, any case
    product = env.execute("get_product", {"product_id": found[0]["product_id"]}).result["data"]
    assert product["variants"] and {"item_id", "options", "price", "available"} <= set(product["variants"][0])
    assert env.execute("find_product", {"name": "submarine"}).result["status"] == "not_found"
    assert env.execute("get_product", {"product_id": "P-000"}).result["status"] == "not_found"


@pytest.mark.parametrize("expression, value", [("1 + 2 * 3", 7.0), ("(54.30 + 12.5) * 2 - 10", 123.6), ("-10 / 3", -3.33)])
def test_calculate_does_arithmetic(env, expression, value):
    assert env.execute("calculate", {"expression": expression}).result == {"status": "ok", "data": value}


@pytest.mark.parametrize("expression", ["__import__('os').getcwd()", "2 ** 10", "abs(-3)", "x + 1", "1 / 0", "1 +", "True + 1"])
def test_calculate_refuses_anything_but_arithmetic(env, expression):
    result = env.execute("calculate", {"expression": expression}).result
    assert result["status"] == "error" and result["error"]["type"] == "invalid_expression"


# -- write tools ------------------------------------------------------------------------------------


def test_cancel_refunds_and_cannot_repeat(env):
    oid = order_of(env, "pending", "o.payment_method_id LIKE 'gift_%'")
    gift = method_of(env, oid)
    before = scalar(env, "SELECT balance FROM payment_methods WHERE id = ?", gift)
    paid = scalar(env, "SELECT SUM(amount) FROM payments WHERE order_id = ?", oid)
    result = env.execute("cancel_order", {"order_id": oid, "reason": "no longer needed"}).result
    assert result["data"]["status"] == "cancelled" and result["data"]["cancel_reason"] == "no longer needed"
    assert result["data"]["payments"][-1] == {"kind": "refund", "payment_method_id": gift, "amount": paid}
    assert scalar(env, "SELECT balance FROM payment_methods WHERE id = ?", gift) == round(before + paid, 2)
    again = env.execute("cancel_order", {"order_id": oid, "reason": "no longer needed"}).result
    assert again["status"] == "error" and again["error"]["type"] == "already_cancelled"
    assert env.execute("cancel_order", {"order_id": "#R0000000", "reason": "no longer needed"}).result["status"] == "not_found"


def test_change_order_address(env):
    oid = order_of(env, "pending")
    data = env.execute("change_order_address", {"order_id": oid, **ADDRESS}).result["data"]
    assert data["address"] == ADDRESS


def test_change_order_payment_moves_the_money(env):
    oid = order_of(
        env,
        "pending",
        "o.payment_method_id LIKE 'card_%' AND EXISTS (SELECT 1 FROM payment_methods m"
        " WHERE m.customer_id = o.customer_id AND m.kind = 'gift_card')",
    )
    old = method_of(env, oid)
    gift = scalar(
        env,
        "SELECT m.id FROM payment_methods m JOIN orders o ON o.customer_id = m.customer_id"
        " WHERE o.id = ? AND m.kind = 'gift_card'",
        oid,
    )
    env.db.execute("UPDATE payment_methods SET balance = 0.5 WHERE id = ?", (gift,))
    env.db.commit()
    short = env.execute("change_order_payment", {"order_id": oid, "payment_method_id": gift}).result
    assert short["status"] == "error" and short["error"]["type"] == "insufficient_balance"
    env.db.execute("UPDATE payment_methods SET balance = 10000 WHERE id = ?", (gift,))
    env.db.commit()
    data = env.execute("change_order_payment", {"order_id": oid, "payment_method_id": gift}).result["data"]
    total = data["payments"][0]["amount"]
    assert data["payment_method_id"] == gift
    assert data["payments"][-2:] == [
        {"kind": "refund", "payment_method_id": old, "amount": total},
        {"kind": "payment", "payment_method_id": gift, "amount": total},
    ]
    assert scalar(env, "SELECT balance FROM payment_methods WHERE id = ?", gift) == round(10000 - total, 2)


def test_payment_method_of_another_customer_is_refused(env):
    oid = order_of(env, "pending")
    stranger = scalar(
        env, "SELECT id FROM payment_methods WHERE customer_id != (SELECT customer_id FROM orders WHERE id = ?)", oid
    )
    result = env.execute("change_order_payment", {"order_id": oid, "payment_method_id": stranger}).result
    assert result["error"]["type"] == "payment_method_not_owned"
    assert (
        env.execute("change_order_payment", {"order_id": oid, "payment_method_id": "card_0000"}).result["status"] == "not_found"
    )


def test_change_order_items_swaps_and_charges_the_difference(env):
    oid, old, new = swap(env, "pending", "v2.price > oi.price")
    method = method_of(env, oid)
    paid, price = (
        scalar(env, "SELECT price FROM order_items WHERE variant_id = ? AND order_id = ?", old, oid),
        scalar(env, "SELECT price FROM variants WHERE id = ?", new),
    )
    data = env.execute(
        "change_order_items", {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": method}
    ).result["data"]
    assert new in {i["item_id"] for i in data["items"]} and old not in {i["item_id"] for i in data["items"]}
    assert data["items_modified"] is True
    assert data["payments"][-1] == {"kind": "payment", "payment_method_id": method, "amount": round(price - paid, 2)}


def test_replacement_items_must_be_real_in_stock_options_of_the_same_product(env):
    oid, old, new = swap(env, "pending")
    method = method_of(env, oid)
    other_product = scalar(
        env, "SELECT id FROM variants WHERE available = 1 AND product_id != (SELECT product_id FROM variants WHERE id = ?)", old
    )
    out_of_stock = scalar(
        env,
        "SELECT id FROM variants WHERE available = 0 AND id != ? AND product_id = (SELECT product_id FROM variants WHERE id = ?)",
        old,
        old,
    )
    not_in_order = scalar(
        env, "SELECT id FROM variants WHERE id NOT IN (SELECT variant_id FROM order_items WHERE order_id = ?)", oid
    )
    cases = {
        "different_product": ([old], [other_product]),
        "item_not_in_order": ([not_in_order], [new]),
        "invalid_arguments": ([old], [new, new]),
    }
    if out_of_stock:
        cases["item_unavailable"] = ([old], [out_of_stock])
    for expected, (items, new_items) in cases.items():
        result = env.execute(
            "change_order_items", {"order_id": oid, "item_ids": items, "new_item_ids": new_items, "payment_method_id": method}
        ).result
        assert result["status"] == "error" and result["error"]["type"] == expected, expected
    missing = env.execute(
        "change_order_items", {"order_id": oid, "item_ids": [old], "new_item_ids": ["V-00000"], "payment_method_id": method}
    ).result
    assert missing["status"] == "not_found"


def test_change_customer_address(env):
    cid = scalar(env, "SELECT id FROM customers ORDER BY id LIMIT 1")
    assert env.execute("change_customer_address", {"customer_id": cid, **ADDRESS}).result["data"]["address"] == ADDRESS
    assert env.execute("change_customer_address", {"customer_id": "C-000000", **ADDRESS}).result["status"] == "not_found"


def test_return_items_refunds_what_was_paid(env):
    oid = order_of(env, "delivered")
    items = [r[0] for r in env.db.execute("SELECT variant_id FROM order_items WHERE order_id = ? ORDER BY variant_id", (oid,))]
    paid = scalar(env, "SELECT price FROM order_items WHERE order_id = ? AND variant_id = ?", oid, items[0])
    method = method_of(env, oid)
    data = env.execute("return_items", {"order_id": oid, "item_ids": items[:1], "payment_method_id": method}).result["data"]
    assert data["status"] == "return requested"
    assert data["payments"][-1] == {"kind": "refund", "payment_method_id": method, "amount": paid}
    twice = env.execute("return_items", {"order_id": oid, "item_ids": items[:1], "payment_method_id": method}).result
    assert twice["error"]["type"] == "item_already_requested"


def test_exchange_items_records_the_new_item(env):
    oid, old, new = swap(env, "delivered")
    data = env.execute(
        "exchange_items", {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": method_of(env, oid)}
    ).result["data"]
    assert data["status"] == "exchange requested"
    assert next(i for i in data["items"] if i["item_id"] == old)["exchange_for"] == new


def test_a_failed_write_changes_nothing(env):
    oid, old, new = swap(env, "delivered")
    before = env.db.execute("SELECT COUNT(*) FROM _passhat_changes").fetchone()[0]
    result = env.execute(
        "exchange_items",
        {"order_id": oid, "item_ids": [old, "V-00000"], "new_item_ids": [new, new], "payment_method_id": method_of(env, oid)},
    ).result
    assert result["status"] == "error"
    assert env.db.execute("SELECT COUNT(*) FROM _passhat_changes").fetchone()[0] == before


def test_transfer_to_human_records_a_handoff(env):
    cid = scalar(env, "SELECT id FROM customers ORDER BY id LIMIT 1")
    login(env, cid)
    result = env.execute("transfer_to_human", {"customer_id": cid, "summary": "parcel arrived damaged"}).result
    assert result["status"] == "ok"
    assert [tuple(r) for r in env.db.execute("SELECT customer_id, summary FROM handoffs")] == [(cid, "parcel arrived damaged")]


@pytest.mark.parametrize(
    "name, args",
    [
        ("get_order", {}),
        ("get_order", {"order_id": 12}),
        ("get_order", {"order_id": "#R1234567", "extra": 1}),
        ("return_items", {"order_id": "#R1234567", "item_ids": "V-12345", "payment_method_id": "card_1234"}),
        ("get_order", ["#R1234567"]),
        ("delete_everything", {}),
    ],
)
def test_invalid_calls_are_error_results(env, name, args):
    result = env.execute(name, args).result
    assert result["status"] == "error" and result["error"]["type"] in {"invalid_arguments", "unknown_tool"}


# -- rules ------------------------------------------------------------------------------------------


def test_authenticate_first_covers_every_write_including_the_transfer(env):
    cid = scalar(env, "SELECT id FROM customers ORDER BY id LIMIT 1")
    assert "authenticate-first" in rule_ids(env.execute("transfer_to_human", {"customer_id": cid, "summary": "x"}))
    with trial() as verified:
        login(verified, cid)
        assert rule_ids(verified.execute("transfer_to_human", {"customer_id": cid, "summary": "x"})) == set()


def test_one_customer(env):
    first, second = [
        r[0]
        for r in env.db.execute(
            "SELECT customer_id FROM orders WHERE status = 'pending' GROUP BY customer_id ORDER BY customer_id LIMIT 2"
        )
    ]
    login(env, first)
    login(env, second)
    theirs = scalar(env, "SELECT id FROM orders WHERE customer_id = ? AND status = 'pending'", second)
    assert rule_ids(env.execute("change_order_address", {"order_id": theirs, **ADDRESS})) == {"one-customer"}
    mine = scalar(env, "SELECT id FROM orders WHERE customer_id = ? AND status = 'pending'", first)
    assert rule_ids(env.execute("change_order_address", {"order_id": mine, **ADDRESS})) == set()


@pytest.mark.parametrize(
    "status, reason, broken",
    [
        ("delivered", "ordered by mistake", {"cancel-pending-only"}),
        ("pending", "found it cheaper", {"cancel-reason"}),
        ("pending", "ordered by mistake", set()),
    ],
)
def test_cancel_rules(env, status, reason, broken):
    assert rule_ids(env.execute("cancel_order", {"order_id": order_of(env, status), "reason": reason})) == broken


@pytest.mark.parametrize("status, broken", [("processed", {"modify-pending-only"}), ("pending", set())])
def test_modify_pending_only(env, status, broken):
    assert rule_ids(env.execute("change_order_address", {"order_id": order_of(env, status), **ADDRESS})) == broken


def test_items_modified_once(env):
    oid, old, new = swap(env, "pending")
    args = {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": method_of(env, oid)}
    assert rule_ids(env.execute("change_order_items", args)) == set()
    back = {**args, "item_ids": [new], "new_item_ids": [old]}
    assert rule_ids(env.execute("change_order_items", back)) == {"items-modified-once"}


def test_return_needs_a_delivered_order(env):
    pending = order_of(env, "pending")
    item = scalar(env, "SELECT variant_id FROM order_items WHERE order_id = ?", pending)
    returned = env.execute(
        "return_items", {"order_id": pending, "item_ids": [item], "payment_method_id": method_of(env, pending)}
    )
    assert rule_ids(returned) == {"return-delivered-only"}


def test_exchange_needs_a_delivered_order_and_happens_once(env):
    oid, old, new = swap(env, "delivered")
    args = {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": method_of(env, oid)}
    assert rule_ids(env.execute("exchange_items", args)) == set()
    others = [
        r[0] for r in env.db.execute("SELECT variant_id FROM order_items WHERE order_id = ? AND status = 'ordered'", (oid,))
    ]
    if others:  # a second exchange on the same order: the order is no longer delivered
        again = {**args, "item_ids": others[:1], "new_item_ids": [new]}
        assert "exchange-delivered-only" in rule_ids(env.execute("exchange_items", again))


DESTINATIONS = {  # SQL picking a payment method of the order's customer, on m and o
    "other": "m.kind != 'gift_card' AND m.id != o.payment_method_id",
    "original": "m.id = o.payment_method_id",
    "gift": "m.kind = 'gift_card' AND m.id != o.payment_method_id",
}


@pytest.mark.parametrize("destination, broken", [("other", {"refund-destination"}), ("original", set()), ("gift", set())])
def test_refund_destination(env, destination, broken):
    has = lambda where: f"EXISTS (SELECT 1 FROM payment_methods m WHERE m.customer_id = o.customer_id AND {where})"  # noqa: E731
    oid = order_of(env, "delivered", f"{has(DESTINATIONS['other'])} AND {has(DESTINATIONS['gift'])}")
    item = scalar(env, "SELECT variant_id FROM order_items WHERE order_id = ?", oid)
    method = scalar(
        env,
        f"SELECT m.id FROM payment_methods m JOIN orders o ON o.customer_id = m.customer_id"
        f" WHERE o.id = ? AND {DESTINATIONS[destination]}",
        oid,
    )
    assert rule_ids(env.execute("return_items", {"order_id": oid, "item_ids": [item], "payment_method_id": method})) == broken


def test_a_cheaper_exchange_refunds_like_a_return(env):
    oid, old, new = swap(
        env,
        "delivered",
        "v2.price < oi.price AND EXISTS (SELECT 1 FROM payment_methods m"
        " WHERE m.customer_id = o.customer_id AND m.kind != 'gift_card' AND m.id != o.payment_method_id)",
    )
    other = scalar(
        env,
        f"SELECT m.id FROM payment_methods m JOIN orders o ON o.customer_id = m.customer_id"
        f" WHERE o.id = ? AND {DESTINATIONS['other']}",
        oid,
    )
    args = {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": other}
    assert rule_ids(env.execute("exchange_items", args)) == {"refund-destination"}


def test_payment_change_different(env):
    oid = order_of(
        env,
        "pending",
        "(SELECT COUNT(*) FROM payment_methods m WHERE m.customer_id = o.customer_id AND m.kind != 'gift_card') >= 2",
    )
    current = method_of(env, oid)
    other = scalar(
        env,
        "SELECT m.id FROM payment_methods m JOIN orders o ON o.customer_id = m.customer_id"
        " WHERE o.id = ? AND m.kind != 'gift_card' AND m.id != ?",
        oid,
        current,
    )
    assert rule_ids(env.execute("change_order_payment", {"order_id": oid, "payment_method_id": current})) == {
        "payment-change-different"
    }
    assert rule_ids(env.execute("change_order_payment", {"order_id": oid, "payment_method_id": other})) == set()


def test_rules_stay_silent_about_missing_entities(env):
    login(env, scalar(env, "SELECT id FROM customers ORDER BY id LIMIT 1"))
    for name, args in [
        ("cancel_order", {"order_id": "#R0000000", "reason": "ordered by mistake"}),
        ("return_items", {"order_id": "#R0000000", "item_ids": ["V-00000"], "payment_method_id": "gift_0000"}),
        (
            "exchange_items",
            {"order_id": "#R0000000", "item_ids": ["V-00000"], "new_item_ids": ["V-00001"], "payment_method_id": "x"},
        ),
        ("transfer_to_human", {"customer_id": "C-000000", "summary": "x"}),
    ]:
        execution = env.execute(name, args)
        assert execution.violations == () and execution.result["status"] == "not_found", name


# -- conversation helpers ---------------------------------------------------------------------------


def test_describe_action_names_ids_items_and_amounts(env):
    oid = order_of(env, "delivered")
    item = scalar(env, "SELECT variant_id FROM order_items WHERE order_id = ?", oid)
    price = scalar(env, "SELECT price FROM order_items WHERE order_id = ? AND variant_id = ?", oid, item)
    name = scalar(env, "SELECT p.name FROM variants v JOIN products p ON p.id = v.product_id WHERE v.id = ?", item)
    method = method_of(env, oid)
    text = DOMAIN.describe_action(
        env.db, Action(tool="return_items", args={"order_id": oid, "item_ids": [item], "payment_method_id": method})
    )
    assert all(s in text for s in (oid, f"{item} ({name}, ", f"${price:.2f}", method, "return"))
    ids = set(re.findall(DOMAIN.id_pattern, text))
    assert {oid, item, method} <= ids


def test_every_write_has_a_proposal_with_its_keywords(env):
    oid, old, new = swap(env, "pending")
    cid, method = scalar(env, "SELECT customer_id FROM orders WHERE id = ?", oid), method_of(env, oid)
    swap_args = {"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": method}
    cases = {
        "cancel": Action(tool="cancel_order", args={"order_id": oid, "reason": "no longer needed"}),
        "change_order_address": Action(tool="change_order_address", args={"order_id": oid, **ADDRESS}),
        "change_order_payment": Action(tool="change_order_payment", args={"order_id": oid, "payment_method_id": method}),
        "change_order_items": Action(tool="change_order_items", args=swap_args),
        "change_customer_address": Action(tool="change_customer_address", args={"customer_id": cid, **ADDRESS}),
        "exchange": Action(tool="exchange_items", args=swap_args),
        "transfer": Action(tool="transfer_to_human", args={"customer_id": cid, "summary": "damaged"}),
    }
    for kind, action in cases.items():
        text = DOMAIN.describe_action(env.db, action).lower()
        assert any(word in text for word in DOMAIN.proposal_keywords[kind]), kind
    assert ADDRESS["zip"] in DOMAIN.describe_action(env.db, cases["change_order_address"])
    assert f"{new} (" in DOMAIN.describe_action(env.db, cases["exchange"])


def test_authenticate_reads_email_or_name_and_zip():
    who = Shopper(customer_id="C-123456", first_name="Wren", last_name="Delacroix-Hunt", zip="05607", email="w@example.com")
    by_email = DOMAIN.authenticate(who, "Hi, it's Wren.Hunt9@Example.com, thanks.")
    assert by_email == Action(tool="find_customer_by_email", args={"email": "Wren.Hunt9@Example.com"})
    by_name = DOMAIN.authenticate(who, "I'm wren delacroix-hunt, about V-12345 in #R1234567; zip 05607.")
    assert by_name == Action(
        tool="find_customer_by_name_zip", args={"first_name": "Wren", "last_name": "Delacroix-Hunt", "zip": "05607"}
    )
    assert DOMAIN.authenticate(who, "I'm Wren, zip 05607") is None
    assert DOMAIN.authenticate(who, "Wren Delacroix-Hunt here, item V-12345") is None


def test_lookups_and_near_misses(env):
    oid, old, new = swap(env, "delivered")
    product = scalar(env, "SELECT product_id FROM variants WHERE id = ?", new)
    action = Action(
        tool="exchange_items",
        args={"order_id": oid, "item_ids": [old], "new_item_ids": [new], "payment_method_id": method_of(env, oid)},
    )
    assert DOMAIN.lookups(env.db, action) == [
        Action(tool="get_order", args={"order_id": oid}),
        Action(tool="get_product", args={"product_id": product}),
    ]
    for near in DOMAIN.near_misses(env.db, action):
        miss = near.call
        assert miss != action and miss.tool == action.tool
        if near.label == "wrong_order":
            assert near.signature == "wrong_entity_write"
            assert miss.args["order_id"] != oid
            assert scalar(env, "SELECT customer_id FROM orders WHERE id = ?", miss.args["order_id"]) == scalar(
                env, "SELECT customer_id FROM orders WHERE id = ?", oid
            )
        elif near.label == "wrong_new_item":  # the right item given back, for another option of the wanted product
            assert near.signature == "wrong_arguments" and miss.args["item_ids"] == [old]
            assert miss.args["new_item_ids"][0] not in (new, old)
            assert scalar(env, "SELECT product_id FROM variants WHERE id = ?", miss.args["new_item_ids"][0]) == product
        else:
            assert near.label == "wrong_item" and near.signature == "wrong_arguments" and miss.args["item_ids"] != [old]
            assert scalar(env, "SELECT 1 FROM order_items WHERE order_id = ? AND variant_id = ?", oid, miss.args["item_ids"][0])
    address = Action(tool="change_customer_address", args={"customer_id": "C-123456", **ADDRESS})
    assert DOMAIN.lookups(env.db, address) == [Action(tool="get_customer", args={"customer_id": "C-123456"})]
    assert DOMAIN.near_misses(env.db, address) == []
