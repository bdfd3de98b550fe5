"""The Gateway's guards, each on its own, outside the harness and in it; and the measured comparison."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import tempfile
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.domains.model import Call, Rule
from passhat.domains.toolkit import Review, ToolFailure, tool
from passhat.env import Environment, diff_backends
from passhat.errors import UserError
from passhat.guard import GUARDS, Gateway, ToolPath, parse_guards
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event

RETAIL = load_domain("retail")


@tool(write=True, target="account", confirm_keys=("account", "amount"))
def refund(db: sqlite3.Connection, account: str, amount: float) -> dict:
    """Refund an amount to an account; every call is a new refund (not idempotent by itself).

    Args:
        account: the account, e.g. A-1
        amount: dollars
    """
    if amount <= 0:
        raise ToolFailure("invalid_amount", "the amount must be positive")
    cursor = db.execute("INSERT INTO refunds (account, amount) VALUES (?, ?)", (account, amount))
    return {"refund_id": cursor.lastrowid, "account": account, "amount": amount}


@tool()
def list_refunds(db: sqlite3.Connection, account: str) -> list:
    """The refunds of an account.

    Args:
        account: the account
    """
    return [
        dict(zip(("id", "amount"), r, strict=False))
        for r in db.execute("SELECT id, amount FROM refunds WHERE account = ?", (account,))
    ]


def shop_db(path: str = ":memory:") -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, timeout=30)
    with db:
        db.execute("CREATE TABLE IF NOT EXISTS refunds (id INTEGER PRIMARY KEY, account TEXT NOT NULL, amount REAL NOT NULL)")
    return db


def refunds(db: sqlite3.Connection) -> list[tuple]:
    return db.execute("SELECT account, amount FROM refunds ORDER BY id").fetchall()


def confirmed(account: str, amount: float) -> list[tuple[str, str]]:
    return [("agent", f"I can refund ${amount} to {account}. Shall I go ahead?"), ("user", "Yes, please.")]


# -- idempotency ----------------------------------------------------------------------------------


def test_same_key_same_arguments_returns_the_first_result_and_writes_once() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["idempotency"])
    first = gw.call("refund", {"account": "A-1", "amount": 20.0}, idempotency_key="k1")
    again = gw.call("refund", {"account": "A-1", "amount": 20.0, "idempotency_key": "k1"})
    assert again.execution.result == first.execution.result
    assert again.guard == {"guard": "idempotency", "decision": "replayed", "key": "k1"}
    assert refunds(db) == [("A-1", 20.0)]


def test_same_key_other_arguments_is_a_conflict() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["idempotency"])
    gw.call("refund", {"account": "A-1", "amount": 20.0}, idempotency_key="k1")
    other = gw.call("refund", {"account": "A-1", "amount": 25.0}, idempotency_key="k1")
    assert other.execution.result["error"]["type"] == "idempotency_conflict"
    assert "k1" in other.execution.result["error"]["message"]
    assert refunds(db) == [("A-1", 20.0)]


def test_without_a_key_the_gateway_derives_one_per_conversation_and_action() -> None:
    db = shop_db()
    one = Gateway.over([refund], db, guards=["idempotency"], conversation_id="c1")
    one.call("refund", {"account": "A-1", "amount": 20.0})
    assert one.call("refund", {"account": "A-1", "amount": 20.0}).guard["decision"] == "replayed"
    one.call("refund", {"account": "A-1", "amount": 30.0})
    Gateway.over([refund], db, guards=["idempotency"], conversation_id="c2").call("refund", {"account": "A-1", "amount": 20.0})
    assert refunds(db) == [("A-1", 20.0), ("A-1", 30.0), ("A-1", 20.0)]


def test_without_the_guard_a_retry_writes_twice() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=[])
    for _ in range(2):
        gw.call("refund", {"account": "A-1", "amount": 20.0})
    assert len(refunds(db)) == 2


def test_a_failed_write_keeps_no_key() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["idempotency"])
    assert gw.call("refund", {"account": "A-1", "amount": -1.0}, idempotency_key="k").execution.result["status"] == "error"
    assert gw.call("refund", {"account": "A-1", "amount": 5.0}, idempotency_key="k").execution.result["status"] == "ok"


@pytest.mark.parametrize("how", ["argument", "keyword"])
def test_a_null_key_is_no_key(how) -> None:
    """JSON null from a model (or None in Python) means "no key": two different writes are two writes, not a
    conflict over a key "None", and the same write again is the derived key's replay."""
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["idempotency"])

    def call(amount: float):
        if how == "argument":
            return gw.call("refund", {"account": "A-1", "amount": amount, "idempotency_key": None})
        return gw.call("refund", {"account": "A-1", "amount": amount}, idempotency_key=None)

    assert call(20.0).guard is None and call(30.0).guard is None
    assert call(20.0).guard["decision"] == "replayed"
    assert refunds(db) == [("A-1", 20.0), ("A-1", 30.0)]


def test_a_key_that_is_not_text_is_an_error_the_agent_can_read() -> None:
    db = shop_db()
    out = Gateway.over([refund], db, guards=["idempotency"]).call(
        "refund", {"account": "A-1", "amount": 20.0, "idempotency_key": [1]}
    )
    assert (
        out.execution.result["error"]["type"] == "invalid_arguments"
        and "idempotency_key" in out.execution.result["error"]["message"]
    )
    assert refunds(db) == []


def test_a_key_belongs_to_its_conversation() -> None:
    """Two conversations on one backend that happen to pick the same key make two writes, neither a replay
    nor a conflict; another gateway on the same conversation (a restarted process) shares the key."""
    db = shop_db()
    first, restarted, other = (Gateway.over([refund], db, guards=["idempotency"], conversation_id=c) for c in ("c1", "c1", "c2"))
    first.call("refund", {"account": "A-1", "amount": 20.0}, idempotency_key="refund-1")
    assert other.call("refund", {"account": "A-1", "amount": 20.0}, idempotency_key="refund-1").guard is None
    assert other.call("refund", {"account": "A-2", "amount": 5.0}, idempotency_key="refund-2").guard is None
    assert (
        restarted.call("refund", {"account": "A-1", "amount": 20.0}, idempotency_key="refund-1").guard["decision"] == "replayed"
    )
    conflict = restarted.call("refund", {"account": "A-1", "amount": 25.0}, idempotency_key="refund-1")
    assert conflict.execution.result["error"]["type"] == "idempotency_conflict"
    assert refunds(db) == [("A-1", 20.0), ("A-1", 20.0), ("A-2", 5.0)]


requests = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([10.0, 20.0])), min_size=1, max_size=24)


@settings(max_examples=40, deadline=None)
@given(requests, st.integers(1, 4))
def test_any_interleaving_of_duplicate_and_concurrent_requests_has_one_effect_per_key(reqs, threads) -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["idempotency"])
    results: dict[int, list] = {}

    def worker(part):
        for key, amount in part:
            r = gw.call("refund", {"account": f"A-{key}", "amount": amount}, idempotency_key=f"key-{key}")
            results.setdefault(key, []).append((amount, r.execution.result))

    parts = [reqs[i::threads] for i in range(threads)]
    pool = [threading.Thread(target=worker, args=(p,)) for p in parts]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    rows = refunds(db)
    assert sorted({a for a, _ in rows}) == sorted({f"A-{k}" for k, _ in reqs})
    assert len(rows) == len({k for k, _ in reqs})  # exactly one effect per key
    for key, seen in results.items():
        (amount,) = [a for acc, a in rows if acc == f"A-{key}"]
        for asked, result in seen:  # the first action's result again, or a conflict for other arguments
            if asked == amount:
                assert result["status"] == "ok" and result["data"]["amount"] == amount
            else:
                assert result["error"]["type"] == "idempotency_conflict"


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=2, max_size=10))
def test_two_gateways_on_two_connections_still_write_once_per_key(keys) -> None:
    path = os.path.join(tempfile.mkdtemp(), "shop.sqlite")
    a, b = shop_db(path), shop_db(path)
    gws = [Gateway.over([refund], a, guards=["idempotency"]), Gateway.over([refund], b, guards=["idempotency"])]
    pool = [
        threading.Thread(
            target=lambda i=i, k=k: gws[i % 2].call("refund", {"account": f"A-{k}", "amount": 1.0}, idempotency_key=f"k{k}")
        )
        for i, k in enumerate(keys)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert len(refunds(a)) == len(set(keys))


def test_the_key_table_never_shows_in_a_state_diff() -> None:
    guarded, plain = Environment(RETAIL), Environment(RETAIL)
    call = {"order_id": "#R3042198", "reason": "no longer needed"}
    Gateway(guarded, ["idempotency"]).call("cancel_order", call)
    plain.execute("cancel_order", call)
    assert guarded.db.execute("SELECT COUNT(*) FROM _passhat_idempotency").fetchone()[0] == 1
    assert diff_backends(guarded.db, plain.db, guarded.template, RETAIL.ignored_columns) == []


def retail_orders(status: str) -> list[str]:
    env = Environment(RETAIL)
    return [
        r[0]
        for r in env.db.execute(
            "SELECT o.id FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.status = ? GROUP BY o.id"
            " HAVING COUNT(*) >= 3 ORDER BY o.id LIMIT 3",
            (status,),
        )
    ]


DELIVERED, PENDING = retail_orders("delivered"), retail_orders("pending")
refund_calls = st.lists(
    st.tuples(st.sampled_from(DELIVERED + PENDING), st.integers(1, 7), st.sampled_from([None, "k1", "k2"])), max_size=10
)


@settings(max_examples=40, deadline=None)
@given(refund_calls)
def test_refunds_never_exceed_what_was_charged(calls) -> None:
    env = Environment(RETAIL)
    gw = Gateway(env, ["idempotency"])
    for order, mask, key in calls:
        items = [
            r[0] for r in env.db.execute("SELECT variant_id FROM order_items WHERE order_id = ? ORDER BY variant_id", (order,))
        ]
        chosen = [v for i, v in enumerate(items) if mask >> i & 1] or items[:1]
        method = env.db.execute("SELECT payment_method_id FROM orders WHERE id = ?", (order,)).fetchone()[0]
        if order in PENDING:
            gw.call("cancel_order", {"order_id": order, "reason": "no longer needed"}, idempotency_key=key)
        else:
            gw.call("return_items", {"order_id": order, "item_ids": chosen, "payment_method_id": method}, idempotency_key=key)
    for order in DELIVERED + PENDING:
        paid, refunded = (
            env.db.execute(
                "SELECT COALESCE(SUM(amount), 0) FROM payments WHERE order_id = ? AND kind = ?", (order, kind)
            ).fetchone()[0]
            for kind in ("payment", "refund")
        )
        assert refunded <= paid + 0.005


# -- confirmation ---------------------------------------------------------------------------------


def test_a_write_without_a_yes_is_refused_with_instructions_to_ask() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["confirmation"])
    out = gw.call("refund", {"account": "A-1", "amount": 20.0}, messages=[("user", "I want a refund for A-1")])
    assert out.execution.result["error"]["type"] == "confirmation_required"
    assert "ask them to confirm" in out.execution.result["error"]["message"]
    assert out.guard == {"guard": "confirmation", "decision": "refused"} and refunds(db) == []


def test_a_yes_to_this_very_proposal_lets_the_write_through() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["confirmation"])
    assert gw.call("refund", {"account": "A-1", "amount": 20.0}, messages=confirmed("A-1", 20.0)).guard is None
    assert refunds(db) == [("A-1", 20.0)]


def test_a_yes_to_other_arguments_or_an_old_yes_does_not_count() -> None:
    gw = Gateway.over([refund], shop_db(), guards=["confirmation"])
    other_amount = gw.call("refund", {"account": "A-1", "amount": 90.0}, messages=confirmed("A-1", 20.0))
    stale = confirmed("A-1", 20.0) + [("agent", "Anything else?"), ("user", "Also, where is my parcel?")]
    old_yes = gw.call("refund", {"account": "A-1", "amount": 20.0}, messages=stale)
    assert other_amount.guard["decision"] == old_yes.guard["decision"] == "refused"


def test_the_guard_binds_a_yes_to_the_domains_terms_of_the_write() -> None:
    """In the harness the guard asks the domain what a write commits to: a yes to a counter-proposal, to a
    wrong amount or to the right action on another order lets nothing through; the right proposal does."""
    cancel = {"order_id": "#R3042198", "reason": "no longer needed"}
    right = "I can cancel order #R3042198 and refund $244.87 to your Amex ending in 2447. Shall I go ahead?"
    wrong = {
        "counter-proposal": "Instead of cancelling order #R3042198, I can put it on hold. Shall I go ahead?",
        "wrong amount": "I can cancel order #R3042198 and refund $999.99 to your card. Shall I go ahead?",
        "other order": "I can cancel order #R7106969. Shall I go ahead?",
        "another card": "I can cancel order #R3042198 and refund $244.87 to your card ending in 8069. Shall I go ahead?",
    }
    for label, proposal in wrong.items():
        path = ToolPath(Environment(RETAIL), ["confirmation"])
        event = path.execute("cancel_order", cancel, [Event("agent", proposal), Event("user", "Yes, please.")])
        assert (event.guard or {}).get("decision") == "refused", label
    path = ToolPath(Environment(RETAIL), ["confirmation"])
    event = path.execute("cancel_order", cancel, [Event("agent", right), Event("user", "Yes, please.")])
    assert event.guard is None and event.ok and event.commitment["tool"] == "cancel_order"


# -- policy ---------------------------------------------------------------------------------------


def test_a_policy_violation_is_refused_with_the_rule_and_reason(toy_domain) -> None:
    env = Environment(toy_domain)
    out = Gateway(env, ["policy"]).call("close_account", {"account_id": "A-2"})  # A-2 is already closed
    assert out.execution.result["error"]["type"] == "policy_violation"
    assert (
        "close-open-only" in out.execution.result["error"]["message"] and "not open" in out.execution.result["error"]["message"]
    )
    assert out.guard == {"guard": "policy", "decision": "refused", "rule": "close-open-only"}
    assert env.db.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 0


# -- human gate -----------------------------------------------------------------------------------

BIG = Rule(
    "big-refund",
    "refunds over $100 need a person",
    ("refund",),
    lambda db, call, history: "over $100" if call.args["amount"] > 100 else None,
)
NO_A9 = Rule(
    "no-a9",
    "account A-9 gets no refunds",
    ("refund",),
    lambda db, call, history: "A-9 is blocked" if call.args["account"] == "A-9" else None,
)


def test_the_human_gate_files_a_ticket_and_names_who_has_it() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["human_gate"], gates=(BIG,))
    small = gw.call("refund", {"account": "A-1", "amount": 20.0})
    big = gw.call("refund", {"account": "A-1", "amount": 500.0})
    assert small.guard is None and refunds(db) == [("A-1", 20.0)]
    assert big.guard["decision"] == "ticket" and big.execution.result["status"] == "ok"
    data = big.execution.result["data"]
    assert data["owner"] in data["message"] and data["ticket_id"] == "T-1" and data["priority"] == "high"
    row = db.execute("SELECT owner, status, history FROM _passhat_tickets").fetchone()
    assert row[0] == data["owner"] and row[1] == "open" and "over $100" in row[2]


BY_SIZE = Rule(
    "refund-by-size",
    "refunds over $100 need a person; over $1,000 urgently",
    ("refund",),
    lambda db, call, history: (
        Review(
            "over $100",
            "urgent" if call.args["amount"] > 1000 else "normal",
            f"check account {call.args['account']} before paying back",
        )
        if call.args["amount"] > 100
        else None
    ),
)


def test_a_gate_rule_sets_the_tickets_priority_and_internal_note_which_the_agent_does_not_see() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["human_gate"], gates=(BY_SIZE,))
    shown = [gw.call("refund", {"account": "A-1", "amount": amount}).execution.result["data"] for amount in (500.0, 5000.0)]
    assert [d["priority"] for d in shown] == ["normal", "urgent"]
    assert not any("check account" in json.dumps(d) for d in shown)
    rows = db.execute("SELECT priority, note, reason, history FROM _passhat_tickets ORDER BY id").fetchall()
    assert [r[:3] for r in rows] == [("normal", "check account A-1 before paying back", "over $100")] + [
        ("urgent", "check account A-1 before paying back", "over $100")
    ]
    assert json.loads(rows[0][3]) == [{"status": "open", "by": "gateway", "note": "over $100"}]


def test_a_plain_reason_files_a_high_priority_ticket_with_no_note() -> None:
    db = shop_db()
    Gateway.over([refund], db, guards=["human_gate"], gates=(BIG,)).call("refund", {"account": "A-1", "amount": 500.0})
    assert db.execute("SELECT priority, note FROM _passhat_tickets").fetchall() == [("high", "")]


def test_a_gated_write_keeps_its_key_the_same_call_gets_its_ticket_again_and_other_arguments_a_conflict() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["idempotency", "human_gate"], gates=(BIG,))
    first = gw.call("refund", {"account": "A-1", "amount": 500.0}, idempotency_key="big-1")
    again = gw.call("refund", {"account": "A-1", "amount": 500.0}, idempotency_key="big-1")
    other = gw.call("refund", {"account": "A-1", "amount": 600.0}, idempotency_key="big-1")
    assert first.guard["decision"] == "ticket"
    assert again.guard == {"guard": "idempotency", "decision": "replayed", "key": "big-1"}
    assert again.execution.result == first.execution.result
    assert other.execution.result["error"]["type"] == "idempotency_conflict"
    assert db.execute("SELECT COUNT(*) FROM _passhat_tickets").fetchone()[0] == 1
    assert [p.guard["status"] for p in gw.resolve_tickets()] == ["done"] and refunds(db) == [("A-1", 500.0)]


def test_a_gated_write_without_a_key_asked_twice_is_one_ticket() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, guards=["idempotency", "human_gate"], gates=(BIG,))
    first, again = (gw.call("refund", {"account": "A-1", "amount": 500.0}) for _ in range(2))
    assert again.guard["decision"] == "replayed" and again.execution.result == first.execution.result
    assert db.execute("SELECT COUNT(*) FROM _passhat_tickets").fetchone()[0] == 1


def test_the_operator_carries_out_allowed_tickets_and_rejects_the_rest() -> None:
    db = shop_db()
    gw = Gateway.over([refund], db, rules=(NO_A9,), guards=["human_gate"], gates=(BIG,))
    gw.call("refund", {"account": "A-1", "amount": 500.0})
    gw.call("refund", {"account": "A-9", "amount": 700.0})
    done, rejected = gw.resolve_tickets()
    assert done.guard["status"] == "done" and rejected.guard["status"] == "rejected" and "blocked" in rejected.guard["note"]
    assert refunds(db) == [("A-1", 500.0)]
    statuses = [r[0] for r in db.execute("SELECT status FROM _passhat_tickets ORDER BY id")]
    assert statuses == ["done", "rejected"]
    assert gw.resolve_tickets() == []  # nothing open any more


def test_a_gated_retail_refund_is_completed_by_the_operator_and_the_trial_passes() -> None:
    fresh = Environment(RETAIL)
    task = next(
        t
        for t in RETAIL.tasks.values()
        if any(a.tool in RETAIL.gates[0].tools and RETAIL.gates[0].check(fresh.db, Call(a.tool, a.args), []) for a in t.actions)
    )
    spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(0, task.id, "baseline", 0))
    out = asyncio.run(run_trial(RETAIL, spec, resolve_agent("reference:perfect"), resolve_user("scripted"), guards=GUARDS))
    assert any(e.guard and e.guard["decision"] == "ticket" for e in out.events)
    assert out.events[-1].kind == "guard" and out.events[-1].took_effect
    assert out.grade.reward == 1 and out.grade.details["required_writes_done"] is True


# -- options and the measured comparison ------------------------------------------------------------


def test_parse_guards() -> None:
    assert parse_guards("off") == [] and parse_guards("all") == list(GUARDS)
    assert parse_guards("confirmation, idempotency") == ["idempotency", "confirmation"]
    with pytest.raises(UserError, match="unknown guard 'sandbox'"):
        parse_guards("sandbox")


def hasty_totals(guards) -> dict[str, int]:
    totals = {"duplicate_writes": 0, "unconfirmed_writes": 0, "passed": 0}
    for task_id in ("retail-005", "retail-006", "retail-007", "retail-017"):
        task = RETAIL.tasks[task_id]
        for trial in range(4):
            spec = TrialSpec(task, PERSONAS["baseline"], trial, trial_seed(0, task_id, "baseline", trial))
            out = asyncio.run(
                run_trial(
                    RETAIL,
                    spec,
                    resolve_agent("reference:hasty"),
                    resolve_user("scripted"),
                    faults={"lost_response": 0.5},
                    guards=guards,
                )
            )
            totals["duplicate_writes"] += len(out.grade.details["duplicate_writes"])
            totals["unconfirmed_writes"] += len(out.grade.details["unconfirmed_writes"])
            totals["passed"] += out.grade.reward
    return totals


def test_guard_all_removes_the_duplicate_refunds_and_unconfirmed_writes_that_guard_off_produces() -> None:
    off, on = hasty_totals(()), hasty_totals(GUARDS)
    assert off["duplicate_writes"] > 0 and off["unconfirmed_writes"] > 0
    assert on["duplicate_writes"] == 0 and on["unconfirmed_writes"] == 0
    assert on["passed"] > off["passed"]
