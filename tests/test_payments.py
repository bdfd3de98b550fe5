"""Sandboxed payments: the provider's validations, its ledger, and the retail domain's money going through it."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain, payments
from passhat.domains.model import Rule
from passhat.domains.payments import Movement
from passhat.domains.retail import tools as retail_tools
from passhat.domains.toolkit import ToolFailure, tool
from passhat.env import Environment, diff_backends
from passhat.errors import UserError
from passhat.guard import Gateway
from passhat.guard.payments import EnvironmentMixed, SandboxProvider, provider_for, totals
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial

RETAIL = load_domain("retail")


def sandbox_db() -> tuple[sqlite3.Connection, SandboxProvider]:
    db, provider = sqlite3.connect(":memory:"), SandboxProvider()
    provider.open(db)
    return db, provider


def move(
    kind: str,
    amount: float,
    method: str = "card_1",
    account: str = "#O1",
    owner: str = "C-1",
    method_owner: str = "C-1",
    currency: str = "USD",
    account_kind: str = "account",
) -> Movement:
    return Movement(
        kind,  # type: ignore[arg-type]
        account=account,
        owner=owner,
        method_id=method,
        method_owner=method_owner,
        amount=amount,
        currency=currency,
        account_kind=account_kind,
    )


def refused(call) -> str:
    with pytest.raises(ToolFailure) as caught:
        call()
    return caught.value.type


# -- the sandbox provider on its own ---------------------------------------------------------------


refund_requests = st.lists(
    st.tuples(st.integers(1, 6000), st.sampled_from(["card_1", "gift_1"]), st.sampled_from([None, "k1", "k2", "k3"])),
    max_size=25,
)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 10000), refund_requests)
def test_no_sequence_of_refunds_takes_back_more_than_was_charged(charged_cents, requests) -> None:
    db, provider = sandbox_db()
    provider.charge(db, "charge", move("charge", charged_cents / 100))
    accepted = 0
    for n, (asked, method, key) in enumerate(requests):
        try:
            receipt = provider.refund(db, key or f"fresh-{n}", move("refund", asked / 100, method))
            accepted += 0 if receipt.replayed else asked
        except ToolFailure as failure:
            assert failure.type in ("refund_exceeds_refundable", "payment_idempotency_conflict")
            assert not failure.retryable
    assert totals(db) == {"#O1": (charged_cents, accepted)}
    assert accepted <= charged_cents


def test_the_same_key_replays_the_first_receipt_and_moves_nothing() -> None:
    db, provider = sandbox_db()
    provider.charge(db, "c", move("charge", 100.0))
    first = provider.refund(db, "r1", move("refund", 40.0))
    again = provider.refund(db, "r1", move("refund", 40.0))
    assert again.movement_id == first.movement_id and again.replayed and not first.replayed
    assert totals(db) == {"#O1": (10000, 4000)}


def test_the_same_key_for_another_movement_is_a_conflict() -> None:
    db, provider = sandbox_db()
    provider.charge(db, "c", move("charge", 100.0))
    provider.refund(db, "r1", move("refund", 40.0))
    assert refused(lambda: provider.refund(db, "r1", move("refund", 45.0))) == "payment_idempotency_conflict"
    assert refused(lambda: provider.charge(db, "r1", move("charge", 40.0))) == "payment_idempotency_conflict"
    assert totals(db) == {"#O1": (10000, 4000)}


def test_a_method_of_another_customer_is_refused() -> None:
    db, provider = sandbox_db()
    provider.charge(db, "c", move("charge", 100.0))
    provider.charge(db, "other", move("charge", 5.0, method="card_2", account="#O2", owner="C-2", method_owner="C-2"))
    # the provider's own record says card_2 is C-2's, whatever the request claims about its owner
    claim = move("refund", 10.0, method="card_2", method_owner="C-1")
    assert refused(lambda: provider.refund(db, "r", claim)) == "payment_method_not_owned"
    assert refused(lambda: provider.refund(db, "r", move("refund", 10.0, owner="C-2"))) == "payment_method_not_owned"
    assert totals(db)["#O1"] == (10000, 0)


def test_a_currency_other_than_the_accounts_is_refused() -> None:
    db, provider = sandbox_db()
    provider.charge(db, "c", move("charge", 100.0))
    assert refused(lambda: provider.refund(db, "r", move("refund", 10.0, currency="EUR"))) == "currency_mismatch"


@pytest.mark.parametrize("amount", [0.0, -5.0, 10.005, float("nan"), float("inf")])
def test_an_amount_that_is_not_positive_whole_cents_is_refused(amount) -> None:
    db, provider = sandbox_db()
    assert refused(lambda: provider.charge(db, "c", move("charge", amount))) == "invalid_amount"


def test_an_account_met_for_the_first_time_opens_with_what_the_backend_recorded() -> None:
    db, provider = sandbox_db()
    history = dataclasses.replace(move("refund", 30.0), prior=(("card_1", 100.0), ("card_1", -50.0)))
    provider.refund(db, "r", history)
    assert totals(db) == {"#O1": (10000, 8000)}
    assert refused(lambda: provider.refund(db, "r2", move("refund", 20.01))) == "refund_exceeds_refundable"


# -- refusals in the domain's words ------------------------------------------------------------------


@pytest.mark.parametrize("account_kind", ["invoice", "membership"])
def test_refusals_call_the_account_by_the_domains_noun_for_it(account_kind) -> None:
    """The agent reads these messages: a domain's account is named as the domain names it."""
    db, provider = sandbox_db()
    paid = move("charge", 100.0, account="INV-7", account_kind=account_kind)
    provider.charge(db, "c", paid)
    provider.charge(db, "other", move("charge", 5.0, method="card_2", account="INV-8", owner="C-2", method_owner="C-2"))
    messages = []
    for key, movement in [
        ("r1", dataclasses.replace(paid, kind="refund", currency="EUR")),
        ("r2", dataclasses.replace(paid, kind="refund", method_id="card_2")),
        ("r3", dataclasses.replace(paid, kind="refund", amount=100.01)),
    ]:
        with pytest.raises(ToolFailure) as caught:
            provider.refund(db, key, movement)
        messages.append(caught.value.message)
    assert messages == [
        f"{account_kind} INV-7 is paid in USD, not EUR",
        f"payment method card_2 belongs to C-2, and {account_kind} INV-7 to C-1",
        f"a refund of $100.01 on {account_kind} INV-7 is more than the $100.00 that remains refundable",
    ]


def test_an_account_of_no_named_kind_is_called_an_account() -> None:
    db, provider = sandbox_db()
    bare = Movement("charge", account="A-1", owner="C-1", method_id="card_1", method_owner="C-1", amount=1.0, currency="USD")
    provider.charge(db, "c", bare)
    with pytest.raises(ToolFailure, match="^account A-1 is paid in USD, not EUR$"):
        provider.charge(db, "c2", dataclasses.replace(bare, currency="EUR"))


def test_retail_books_each_order_as_an_account_and_its_refusals_say_order() -> None:
    """Money taken back outside the shop leaves less to refund than the backend believes: the sandbox
    refuses the cancellation, and the agent reads which order."""
    _, cancel = cheaper_swap_then_cancel()
    order_id = cancel["order_id"]
    env = Environment(RETAIL)
    gateway = Gateway(env, ["payments"])
    customer, method = env.db.execute("SELECT customer_id, payment_method_id FROM orders WHERE id = ?", (order_id,)).fetchone()
    outside = Movement(
        "refund", order_id, customer, method, customer, 1.0, "USD", prior=tuple(retail_tools.movements(env.db, order_id))
    )
    with env.db:
        SandboxProvider().refund(env.db, "outside", outside)
    result = gateway.call("cancel_order", cancel).execution.result
    assert result["error"]["type"] == "refund_exceeds_refundable"
    assert f"on order {order_id} is more than" in result["error"]["message"]
    assert env.db.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()[0] == "pending"


# -- one payment environment per backend ------------------------------------------------------------


class LiveProvider(SandboxProvider):
    environment: ClassVar[str] = "live"


def test_a_provider_of_another_environment_is_refused_on_a_sandbox_ledger() -> None:
    db, provider = sandbox_db()
    with db:  # the provider writes in its caller's transaction
        provider.charge(db, "c", move("charge", 100.0))
    with pytest.raises(EnvironmentMixed, match="'sandbox' environment.*'live' payment provider"):
        LiveProvider().open(db)
    with pytest.raises(EnvironmentMixed):
        LiveProvider().refund(db, "r", move("refund", 1.0))
    assert isinstance(EnvironmentMixed("x"), UserError)
    assert totals(db) == {"#O1": (10000, 0)}


def test_a_gateway_for_another_environment_is_refused_on_a_sandbox_backend() -> None:
    env = Environment(RETAIL)
    Gateway(env, ["payments"])
    with pytest.raises(EnvironmentMixed):
        Gateway(env, ["payments"], payments=LiveProvider())


def test_only_the_sandbox_is_shipped() -> None:
    assert isinstance(provider_for("sandbox"), SandboxProvider)
    with pytest.raises(UserError, match="no payment provider for the 'live' environment"):
        provider_for("live")


# -- the ledger moves with the tool's transaction ------------------------------------------------------


@tool(write=True, needs_confirmation=False, target="order")
def pay_then_fail(db: sqlite3.Connection, order: str) -> dict:
    """Charge an order through the provider, then fail.

    Args:
        order: the order
    """
    channel = payments.current_channel()
    assert channel is not None
    channel.move(db, move("charge", 10.0, account=order))
    raise ToolFailure("out_of_stock", "nothing left to sell")


def test_a_tool_that_fails_after_the_provider_said_yes_leaves_no_ledger_entry() -> None:
    db = sqlite3.connect(":memory:")
    out = Gateway.over([pay_then_fail], db, guards=["payments"]).call("pay_then_fail", {"order": "#O9"})
    assert out.execution.result["error"]["type"] == "out_of_stock"
    assert totals(db) == {}


@tool(write=True, needs_confirmation=False, target="order")
def refund_order(db: sqlite3.Connection, order: str, amount: float) -> dict:
    """Refund part of an order's $100 charge through the provider; a replayed movement records nothing.

    Args:
        order: the order
        amount: dollars
    """
    channel = payments.current_channel()
    assert channel is not None
    prior = (
        ("card_1", 100.0),
        *(("card_1", -r[0]) for r in db.execute("SELECT amount FROM refunds WHERE order_id = ?", (order,))),
    )
    movement = dataclasses.replace(move("refund", amount, account=order), prior=prior)
    if not channel.move(db, movement).replayed:
        db.execute("INSERT INTO refunds (order_id, amount) VALUES (?, ?)", (order, amount))
    return {"order": order, "amount": amount}


def refunds_db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE refunds (order_id TEXT, amount REAL)")
    return db


@pytest.mark.parametrize("conversations", [("chat", "chat"), ("chat-1", "chat-2")])
def test_calls_through_two_gateways_on_one_database_are_two_movements(conversations) -> None:
    """Without caller keys each call is its own movement, whichever gateway instance makes it: a second
    gateway's first call is neither refused as a conflict nor replayed with no money moved."""
    db = refunds_db()
    one, two = (Gateway.over([refund_order], db, guards=["payments"], conversation_id=c) for c in conversations)
    calls = [(one, "#O1", 10.0), (two, "#O1", 10.0), (two, "#O2", 15.0), (one, "#O2", 5.0)]
    for gateway, order, amount in calls:
        assert gateway.call("refund_order", {"order": order, "amount": amount}).execution.result["status"] == "ok"
    assert db.execute("SELECT order_id, amount FROM refunds").fetchall() == [(o, a) for _, o, a in calls]
    assert totals(db) == {"#O1": (10000, 2000), "#O2": (10000, 2000)}


def test_the_operators_of_two_gateways_key_each_tickets_money_by_the_ticket() -> None:
    db = refunds_db()
    big = Rule(
        "big",
        "refunds over $50 need a person",
        ("refund_order",),
        lambda db, call, history: "over $50" if call.args["amount"] > 50 else None,
    )
    one, two = (Gateway.over([refund_order], db, guards=["payments", "human_gate"], gates=(big,)) for _ in range(2))
    one.call("refund_order", {"order": "#O1", "amount": 60.0})
    assert [p.guard["status"] for p in one.resolve_tickets()] == ["done"]
    two.call("refund_order", {"order": "#O2", "amount": 70.0})
    assert [p.guard["status"] for p in two.resolve_tickets()] == ["done"]
    assert totals(db) == {"#O1": (10000, 6000), "#O2": (10000, 7000)}


# -- the retail domain's money through the provider --------------------------------------------------


def cheaper_swap_then_cancel() -> tuple[dict, dict]:
    """A pending order, an item of it with a cheaper option, and a gift card of the same customer."""
    env = Environment(RETAIL)
    row = env.db.execute(
        "SELECT o.id, i.variant_id, v2.id, g.id FROM orders o JOIN order_items i ON i.order_id = o.id"
        " JOIN variants v ON v.id = i.variant_id JOIN variants v2 ON v2.product_id = v.product_id AND v2.id <> v.id"
        " AND v2.available = 1 AND v2.price < i.price JOIN payment_methods g ON g.customer_id = o.customer_id"
        " AND g.kind = 'gift_card' AND g.id <> o.payment_method_id WHERE o.status = 'pending' ORDER BY o.id LIMIT 1"
    ).fetchone()
    swap = {"order_id": row[0], "item_ids": [row[1]], "new_item_ids": [row[2]], "payment_method_id": row[3]}
    return swap, {"order_id": row[0], "reason": "no longer needed"}


def paid_and_refunded(db: sqlite3.Connection, order_id: str) -> tuple[float, float]:
    return tuple(
        db.execute("SELECT COALESCE(SUM(amount), 0) FROM payments WHERE order_id = ? AND kind = ?", (order_id, kind)).fetchone()[
            0
        ]
        for kind in ("payment", "refund")
    )  # type: ignore[return-value]


def test_cancelling_after_a_cheaper_swap_refunds_what_remains_with_or_without_the_sandbox() -> None:
    """The retail backend once refunded the full charge again here; the sandbox is what caught it."""
    swap, cancel = cheaper_swap_then_cancel()
    plain, guarded = Environment(RETAIL), Environment(RETAIL)
    gateway = Gateway(guarded, ["payments"])
    for env, call in ((plain, plain.execute), (guarded, lambda n, a: gateway.call(n, a).execution)):
        assert call("change_order_items", swap).result["status"] == "ok"  # the difference goes to a gift card
        assert call("cancel_order", cancel).result["status"] == "ok"
        paid, refunded = paid_and_refunded(env.db, cancel["order_id"])
        assert refunded == pytest.approx(paid)  # everything paid comes back, and not a cent more


def retail_orders() -> list[str]:
    env = Environment(RETAIL)
    return [
        r[0]
        for r in env.db.execute(
            "SELECT o.id FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.status IN ('pending', 'delivered')"
            " GROUP BY o.id HAVING COUNT(*) >= 2 ORDER BY o.id LIMIT 6"
        )
    ]


ORDERS = retail_orders()
retail_calls = st.lists(
    st.tuples(st.sampled_from(ORDERS), st.sampled_from(["cancel", "return", "swap", "pay"]), st.integers(0, 3)), max_size=12
)


def money_call(db: sqlite3.Connection, order_id: str, what: str, pick: int) -> tuple[str, dict]:
    """A money-moving retail call on the order, its arguments picked by ``pick`` among the valid-looking ones."""
    customer, method = db.execute("SELECT customer_id, payment_method_id FROM orders WHERE id = ?", (order_id,)).fetchone()
    items = [r[0] for r in db.execute("SELECT variant_id FROM order_items WHERE order_id = ? ORDER BY variant_id", (order_id,))]
    methods = [r[0] for r in db.execute("SELECT id FROM payment_methods WHERE customer_id = ? ORDER BY id", (customer,))]
    other = methods[pick % len(methods)]
    item = items[pick % len(items)]
    sibling = db.execute(
        "SELECT v2.id FROM variants v JOIN variants v2 ON v2.product_id = v.product_id AND v2.id <> v.id"
        " WHERE v.id = ? AND v2.available = 1 ORDER BY v2.id",
        (item,),
    ).fetchone()
    if what == "cancel":
        return "cancel_order", {"order_id": order_id, "reason": "no longer needed"}
    if what == "return":
        return "return_items", {"order_id": order_id, "item_ids": items[: pick % len(items) + 1], "payment_method_id": other}
    if what == "swap" and sibling:
        return "change_order_items", {
            "order_id": order_id,
            "item_ids": [item],
            "new_item_ids": [sibling[0]],
            "payment_method_id": other,
        }
    return "change_order_payment", {"order_id": order_id, "payment_method_id": other if other != method else methods[0]}


@settings(max_examples=40, deadline=None)
@given(retail_calls)
def test_retail_refunds_never_exceed_the_charge_and_the_ledger_reconciles_with_the_payments_rows(calls) -> None:
    env = Environment(RETAIL)
    gateway = Gateway(env, ["payments"])
    for order_id, what, pick in calls:
        result = gateway.call(*money_call(env.db, order_id, what, pick)).execution.result
        assert result["status"] in ("ok", "error", "not_found")
    ledger = totals(env.db)
    for order_id in ORDERS:
        paid, refunded = paid_and_refunded(env.db, order_id)
        assert refunded <= paid + 0.005
        if order_id in ledger:
            assert ledger[order_id] == (round(paid * 100), round(refunded * 100))


def test_with_idempotency_on_the_payment_keys_are_the_writes_own() -> None:
    env = Environment(RETAIL)
    gateway = Gateway(env, ["idempotency", "payments"])
    order = ORDERS[0]
    status = env.db.execute("SELECT status FROM orders WHERE id = ?", (order,)).fetchone()[0]
    name, args = money_call(env.db, order, "cancel" if status == "pending" else "return", 0)
    assert gateway.call(name, args, idempotency_key="w-1").execution.result["status"] == "ok"
    assert gateway.call(name, args, idempotency_key="w-1").guard["decision"] == "replayed"
    keys = [r[0] for r in env.db.execute("SELECT key FROM _passhat_payment_ledger WHERE key IS NOT NULL")]
    assert keys and all(k.startswith("run/conversation/w-1#") for k in keys)  # the key, in its conversation


def test_the_ledger_never_shows_in_a_state_diff() -> None:
    guarded, plain = Environment(RETAIL), Environment(RETAIL)
    name, args = money_call(plain.db, ORDERS[0], "pay", 1)
    assert Gateway(guarded, ["payments"]).call(name, args).execution.result == plain.execute(name, args).result
    assert totals(guarded.db)
    assert diff_backends(guarded.db, plain.db, guarded.template, RETAIL.ignored_columns) == []


# -- end to end ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("guards", [["payments"], ["idempotency", "confirmation", "policy", "payments", "human_gate", "audit"]])
def test_the_perfect_reference_agent_still_solves_every_task_with_payments_sandboxed(guards) -> None:
    failed = []
    for task in RETAIL.tasks.values():
        spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(0, task.id, "baseline", 0))
        out = asyncio.run(run_trial(RETAIL, spec, resolve_agent("reference:perfect"), resolve_user("scripted"), guards=guards))
        if out.grade.reward != 1:
            failed.append((task.id, out.grade.signature))
    assert failed == []
