"""The inbox's ticket store: what each change does, who may change what, paging, and two deciders at once."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, get_args

import pytest

from passhat.guard.inbox import INBOX_FILE, MAX_TEXT, InboxStore, TicketClosed, TicketNotFound, TicketStatus, priority_of


@pytest.fixture
def store(tmp_path: Path):
    with InboxStore.open(tmp_path) as opened:
        yield opened


def filed(store: InboxStore, **given: Any):
    fields = {
        "source": "run",
        "origin": "run-1",
        "conversation": "retail-001/baseline/0",
        "domain": "retail",
        "tool": "refund_order",
        "args": {"order_id": "#W1", "amount": 180.5},
        "rule": "refund-review",
        "reason": "a refund over $150 needs a person",
        "priority": "high",
        "note": "",
        "request": ["I want my money back for order #W1."],
        "evidence": [{"tool": "get_order", "args": {"order_id": "#W1"}, "result": {"status": "ok"}}],
    }
    return store.file(**{**fields, **given})


def actions(ticket) -> list[tuple[str, str]]:
    return [(e.action, e.by) for e in ticket.history]


def test_a_filed_ticket_is_open_unassigned_and_keeps_what_the_agent_saw(store):
    ticket = filed(store, note="member since 2019")
    assert ticket.number == f"T-{ticket.id}"
    assert (ticket.status, ticket.owner, ticket.outcome) == ("open", "", "")
    assert ticket.args == {"order_id": "#W1", "amount": 180.5}
    assert ticket.request == ["I want my money back for order #W1."]
    assert ticket.evidence[0]["tool"] == "get_order"
    assert [(n.by, n.text) for n in ticket.notes] == [("gate", "member since 2019")]
    assert actions(ticket) == [("filed", "run-1")]
    assert ticket.decided_at is None and ticket.decided_by is None
    assert store.get(ticket.id) == ticket


def test_a_ticket_filed_with_an_owner_says_so_in_its_history(store):
    ticket = filed(store, owner="Dana")
    assert ticket.owner == "Dana"
    assert actions(ticket) == [("filed", "run-1"), ("assigned", "run-1")]


def test_every_change_is_in_the_history_with_who_and_when(store):
    number = filed(store).id
    store.assign(number, "Sam", by="lead")
    store.set_priority(number, "urgent", by="lead")
    store.add_note(number, "checked the order", by="Sam")
    store.reply(number, "We are on it.", by="Sam")
    store.decide(number, "approved", by="Sam", note="fine")
    ticket = store.record_outcome(number, "carried out", by="harness")
    assert actions(ticket) == [
        ("filed", "run-1"),
        ("assigned", "lead"),
        ("priority", "lead"),
        ("note added", "Sam"),
        ("replied", "Sam"),
        ("approved", "Sam"),
        ("carried out", "harness"),
    ]
    assert all(e.at.endswith("+00:00") for e in ticket.history)
    assert (ticket.owner, ticket.priority, ticket.status, ticket.outcome) == ("Sam", "urgent", "approved", "carried out")
    assert (ticket.decided_by, ticket.history[-2].text) == ("Sam", "fine")
    assert [n.text for n in ticket.notes] == ["checked the order"]
    assert [r.text for r in ticket.replies] == ["We are on it."]


def test_a_ticket_can_be_unassigned(store):
    number = filed(store, owner="Dana").id
    assert store.assign(number, "", by="lead").owner == ""
    assert store.get(number).history[-1].action == "unassigned"


def test_deciding_twice_is_refused_and_changes_nothing(store):
    number = filed(store).id
    store.decide(number, "rejected", by="Sam", note="no receipt")
    with pytest.raises(TicketClosed, match=f"T-{number} is rejected"):
        store.decide(number, "approved", by="Dana")
    with pytest.raises(TicketClosed):
        store.expire(number, by="harness", note="late")
    ticket = store.get(number)
    assert (ticket.status, ticket.decided_by) == ("rejected", "Sam")
    assert actions(ticket)[-1] == ("rejected", "Sam")


def test_a_decided_ticket_takes_notes_only(store):
    number = filed(store).id
    store.decide(number, "approved", by="Sam")
    for change in (
        lambda: store.reply(number, "hi", by="Sam"),
        lambda: store.assign(number, "Dana", by="Sam"),
        lambda: store.set_priority(number, "low", by="Sam"),
    ):
        with pytest.raises(TicketClosed):
            change()
    assert store.add_note(number, "done by phone too", by="Sam").notes[-1].text == "done by phone too"


def test_only_an_approved_ticket_records_an_outcome(store):
    number = filed(store).id
    with pytest.raises(TicketClosed, match="needs an approved ticket"):
        store.record_outcome(number, "carried out", by="harness")
    store.expire(number, by="harness", note="no decision within 1 s")
    with pytest.raises(TicketClosed):
        store.record_outcome(number, "carried out", by="harness")
    assert store.get(number).status == "expired"


def race(out: Path, number: int) -> list[str]:
    """An approver and a rejecter deciding ticket ``number`` at the same instant, each on its own connection;
    returns the decisions that went through."""
    stores = [InboxStore.open(out) for _ in range(2)]
    start = threading.Barrier(2)
    won: list[str] = []

    def decide(store: InboxStore, decision: str) -> None:
        start.wait()
        try:
            won.append(store.decide(number, decision, by=decision).status)
        except TicketClosed:
            pass

    threads = [threading.Thread(target=decide, args=pair) for pair in zip(stores, ("approved", "rejected"), strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    return won


def test_two_deciders_at_once_from_two_connections_exactly_one_wins(store, tmp_path):
    for _ in range(20):
        number = filed(store).id
        won = race(tmp_path, number)
        ticket = store.get(number)
        assert len(won) == 1 and ticket.status == won[0] == ticket.decided_by
        assert [e.action for e in ticket.history].count(won[0]) == 1


def test_an_unknown_ticket_is_not_found(store):
    for change in (lambda: store.get(7), lambda: store.decide(7, "approved", by="Sam"), lambda: store.add_note(7, "x", by="S")):
        with pytest.raises(TicketNotFound, match="T-7"):
            change()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s, n: s.add_note(n, "x" * (MAX_TEXT + 1), by="Sam"), "4,000"),
        (lambda s, n: s.reply(n, "   ", by="Sam"), "reply must not be empty"),
        (lambda s, n: s.add_note(n, "fine", by=""), "by must not be empty"),
        (lambda s, n: s.assign(n, "x" * 201, by="Sam"), "owner"),
        (lambda s, n: s.set_priority(n, "asap", by="Sam"), "priority must be one of low, normal, high, urgent"),
        (lambda s, n: s.decide(n, "maybe", by="Sam"), "decision"),
        (lambda s, n: s.decide(n, "approved", by="Sam", note="x" * (MAX_TEXT + 1)), "note"),
        (lambda s, n: s.page(limit=0), "limit"),
        (lambda s, n: s.page(offset=-1), "offset"),
        (lambda s, n: s.page(sort="loudest"), "sort"),
        (lambda s, n: s.page(status="pending"), "status"),
    ],
)
def test_out_of_bounds_input_is_a_value_error_saying_what_is_wrong_and_changes_nothing(store, change, message):
    before = filed(store)
    with pytest.raises(ValueError, match=message):
        change(store, before.id)
    assert store.get(before.id) == before


def test_a_priority_the_inbox_does_not_know_is_high():
    assert [priority_of(p) for p in ("urgent", "normal", "low", "critical", "")] == ["urgent", "normal", "low", "high", "high"]


@pytest.fixture
def many(store):
    """2,400 tickets over three origins, two sources, four priorities and three owners, some decided."""
    priorities, owners = ("low", "normal", "high", "urgent"), ("", "Dana", "Sam")
    for i in range(2400):
        ticket = filed(
            store,
            source="mcp" if i % 5 == 0 else "run",
            origin=f"run-{i % 3}",
            priority=priorities[i % 4],
            owner=owners[i % 3],
            tool="refund_order" if i % 2 else "cancel_order",
        )
        if i % 7 == 0:
            store.decide(ticket.id, "approved", by="Sam")
    return store


def test_pages_are_distinct_and_cover_every_match_once_with_the_total(many):
    seen: list[int] = []
    for offset in range(0, 2400, 500):
        page, total = many.page(offset=offset, limit=500)
        assert total == 2400
        seen += [t.id for t in page]
    assert seen == sorted(seen, reverse=True) and len(set(seen)) == 2400
    assert many.page(offset=2400)[0] == []


def test_filters_combine_and_the_total_counts_every_match(many):
    page, total = many.page(status="open", priority="urgent", owner="Dana", source="run", origin="run-1", limit=500)
    expected = [
        i + 1
        for i in range(2400)
        if i % 7 and i % 4 == 3 and i % 3 == 1 and i % 5 and i % 3 == 1  # owner Dana and origin run-1 are both i % 3 == 1
    ]
    assert total == len(expected) == len(page)
    assert sorted(t.id for t in page) == expected
    assert many.page(owner="", limit=1)[1] == 800  # unassigned


def test_sorts(many):
    oldest = [t.id for t in many.page(sort="oldest", limit=10)[0]]
    assert oldest == list(range(1, 11))
    by_priority = many.page(sort="priority", limit=500, offset=300)[0]
    assert {t.priority for t in by_priority} == {"urgent", "high"}
    assert [t.priority for t in by_priority] == sorted((t.priority for t in by_priority), key=["urgent", "high"].index)
    by_status = many.page(sort="status", limit=500, offset=1900)[0]
    assert [t.status for t in by_status][-1] == "approved" and by_status[0].status == "open"


def test_search_finds_text_in_the_ticket_and_takes_like_wildcards_literally(many):
    assert many.page(search="cancel_ORDER", limit=1)[1] == 1200
    assert many.page(search="T-2399")[0][0].id == 2399
    assert many.page(search="%")[1] == 0
    assert many.page(search="_order")[1] == 2400


@pytest.mark.parametrize(
    "filters",
    [{}, {"priority": "urgent", "owner": "Dana"}, {"owner": ""}, {"source": "mcp", "origin": "run-2"}, {"search": "refund"}],
)
def test_the_counts_by_status_are_the_totals_of_each_statuss_page(many, filters):
    counts = many.counts(**filters)
    assert counts == {status: many.page(status=status, **filters, limit=1)[1] for status in get_args(TicketStatus)}
    assert counts["approved"] > 0 and sum(counts.values()) == many.page(**filters, limit=1)[1]


def test_counts_refuse_what_pages_refuse(many):
    with pytest.raises(ValueError, match="priority"):
        many.counts(priority="sometimes")
    with pytest.raises(ValueError, match="search"):
        many.counts(search="x" * 10_000)
    with pytest.raises(TypeError, match="no ticket filter sort"):
        many.counts(sort="newest")


def test_owners_and_origins_list_each_once(many):
    assert many.owners() == ["Dana", "Sam"]
    assert many.origins() == ["run-0", "run-1", "run-2"]


def test_a_reopened_store_reads_what_was_written(tmp_path):
    with InboxStore.open(tmp_path) as store:
        number = filed(store, note="check").id
        store.add_note(number, "later", by="Sam")
        written = store.decide(number, "approved", by="Sam")
    assert (tmp_path / INBOX_FILE).exists()
    with InboxStore.open(tmp_path) as store:
        assert store.get(number) == written
        assert filed(store).id == number + 1


def test_waiting_for_a_decision_lets_the_loop_run_and_returns_the_decided_ticket(store):
    number = filed(store).id

    async def person() -> None:
        await asyncio.sleep(0.05)
        store.decide(number, "approved", by="Sam")

    async def both():
        return await asyncio.gather(store.wait_for_decision(number, timeout=30, poll=0.01), person())

    ticket, _ = asyncio.run(both())
    assert (ticket.status, ticket.decided_by) == ("approved", "Sam")


def test_waiting_past_the_timeout_returns_the_ticket_still_open(store):
    number = filed(store).id
    assert asyncio.run(store.wait_for_decision(number, timeout=0.05, poll=0.01)).status == "open"
