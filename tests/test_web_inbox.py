"""The operator inbox pages of `passhat serve`: the list (filters, sorts, pages, counts), the ticket page, and the
actions on a ticket — each one changes the store, is audited under the person's name, and is refused (with a
4xx page, never a 500) to a role too low, to bad input and to a ticket already decided.

Tickets are filed in code straight into the store; people sign in through the app's real routes. Signing in
costs argon2 hashes, so one app and its signed-in people serve the whole module, and each test starts from an
empty inbox and an empty audit trail."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from web_support import csrf, make_app, signed_in

from passhat.guard.audit import signing_key
from passhat.guard.inbox import MAX_TEXT, InboxStore, Ticket
from passhat.serve.web.accounts import Role

SCRIPT = "<script>alert('owned')</script>"


def file(out: Path, **changes: Any) -> Ticket:
    """A ticket as a run files it: a refund the gate held, with the customer's words and what the agent read."""
    ticket = {
        "source": "run", "origin": "run-1", "conversation": "refund_big/calm/0", "domain": "retail",
        "tool": "refund_order", "args": {"order_id": "O-1001", "amount": 180.0}, "rule": "refund_over_150",
        "reason": "a refund of $180.00 is over the $150 limit", "priority": "high", "note": "a loyal customer",
        "request": ["Hi, I want my money back for order O-1001."],
        "evidence": [{"tool": "get_order", "args": {"order_id": "O-1001"}, "result": {"status": "delivered", "total": 180.0}}],
    }  # fmt: skip
    with InboxStore.open(out) as store:
        return store.file(**(ticket | changes))


def stored(out: Path, number: int) -> Ticket:
    with InboxStore.open(out) as store:
        return store.get(number)


def post(client: TestClient, path: str, **form: str) -> Any:
    return client.post(path, data={"csrf_token": csrf(client), **form}, follow_redirects=False)


def audited(out: Path) -> list[dict[str, Any]]:
    """The ticket entries of the runs folder's audit trail, oldest first."""
    log = out / "audit" / "audit.jsonl"
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
    return [entry for entry in entries if entry.get("action", "").startswith("ticket.")]


def listed(html: str) -> list[str]:
    """The ticket numbers of a list page, in the order shown."""
    return re.findall(r'<a href="/inbox/\d+">(T-\d+)</a>', html)


def counts(html: str) -> dict[str, int]:
    """The status tabs' counts."""
    return {
        status: int(n)
        for status, n in re.findall(r'>(all|open|approved|rejected|expired)\s*<span class="inbox-count">(\d+)', html)
    }


Person = Callable[[Role, str], TestClient]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Starlette]:
    out = tmp_path_factory.mktemp("inbox") / "runs"
    return out, make_app(out)


@pytest.fixture(scope="module")
def person(site: tuple[Path, Starlette]) -> Person:
    """A client signed in as ``name``, an account of ``role`` (made on first use, kept for the module)."""
    out, app = site
    clients: dict[str, TestClient] = {}

    def signed_in_as(role: Role, name: str) -> TestClient:
        if name not in clients:
            clients[name] = signed_in(app, out, role, name=name)
        assert app.state.accounts.require(name).role == role
        return clients[name]

    return signed_in_as


@pytest.fixture
def out(site: tuple[Path, Starlette]) -> Path:
    """The module's runs folder without tickets or audit trail; the accounts and their sessions stay."""
    out, _ = site
    for path in out.glob("inbox.sqlite*"):
        path.unlink()
    shutil.rmtree(out / "audit", ignore_errors=True)
    return out


@pytest.fixture
def operator(person: Person) -> TestClient:
    return person("operator", "olga")


@pytest.fixture
def approver(person: Person) -> TestClient:
    return person("approver", "abe")


# -- the list ------------------------------------------------------------------------------------------


def test_the_list_shows_each_tickets_number_time_priority_status_owner_domain_tool_rule_reason_and_conversation(person, out):
    file(out, priority="urgent", owner="olga")
    page = person("viewer", "vic").get("/inbox")
    assert page.status_code == 200
    row = page.text[page.text.index('<a href="/inbox/1">') :]
    for shown in (
        "T-1",
        "urgent",
        "open",
        "olga",
        "retail",
        "refund_order",
        "refund_over_150",
        "is over the $150 limit",
        "run-1",
        "refund_big/calm/0",
    ):
        assert shown in row
    assert re.search(r"<td>\d{4}-\d\d-\d\d \d\d:\d\d UTC</td>", row)


@pytest.fixture
def varied(out: Path, approver: TestClient) -> dict[str, str]:
    """Five tickets that differ in one filtered field each; the approver (abe) decided the last."""
    numbers = {
        "low run-a unassigned": file(out, priority="low", origin="run-a").number,
        "urgent run-b bob": file(out, priority="urgent", origin="run-b", owner="bob", tool="cancel_order").number,
        "mcp abe": file(out, source="mcp", origin="mcp:stdio", owner="abe", request=[], priority="normal").number,
        "searchable": file(out, reason="the customer's address in Lisbon changed", origin="run-b").number,
        "approved": file(out, priority="low", origin="run-a").number,
    }
    with InboxStore.open(out) as store:
        store.decide(int(numbers["approved"][2:]), "approved", by="abe")
    return numbers


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("status=approved", ["approved"]),
        ("status=open&priority=low", ["low run-a unassigned"]),
        ("priority=urgent", ["urgent run-b bob"]),
        ("owner=bob", ["urgent run-b bob"]),
        ("owner=mine", ["mcp abe"]),
        ("owner=unassigned&status=open", ["searchable", "low run-a unassigned"]),
        ("source=mcp", ["mcp abe"]),
        ("origin=run-b", ["searchable", "urgent run-b bob"]),
        ("q=lisbon", ["searchable"]),
        ("q=cancel_order", ["urgent run-b bob"]),
    ],
)
def test_each_filter_lists_exactly_the_tickets_that_match_it(approver, varied, query, expected):
    page = approver.get(f"/inbox?{query}")
    assert page.status_code == 200
    assert listed(page.text) == [varied[name] for name in expected]


def test_the_counts_per_status_follow_the_other_filters(approver, varied):
    assert counts(approver.get("/inbox").text) == {"all": 5, "open": 4, "approved": 1, "rejected": 0, "expired": 0}
    assert counts(approver.get("/inbox?priority=low").text) == {"all": 2, "open": 1, "approved": 1, "rejected": 0, "expired": 0}


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("newest", ["approved", "searchable", "mcp abe", "urgent run-b bob", "low run-a unassigned"]),
        ("oldest", ["low run-a unassigned", "urgent run-b bob", "mcp abe", "searchable", "approved"]),
        ("priority", ["urgent run-b bob", "searchable", "mcp abe", "approved", "low run-a unassigned"]),
        ("status", ["searchable", "mcp abe", "urgent run-b bob", "low run-a unassigned", "approved"]),
    ],
)
def test_each_sort_orders_the_list(approver, varied, sort, expected):
    assert listed(approver.get(f"/inbox?sort={sort}").text) == [varied[name] for name in expected]


def test_pages_hold_fifty_distinct_tickets_and_their_links_keep_the_filters(operator, out):
    for n in range(120):
        file(out, priority="urgent" if n % 2 else "low")
    pages = [listed(operator.get(f"/inbox?priority=urgent&sort=oldest&page={n}").text) for n in (1, 2)]
    assert [len(p) for p in pages] == [50, 10]
    assert len(set(pages[0]) | set(pages[1])) == 60
    assert pages[0][:2] == ["T-2", "T-4"]
    first = operator.get("/inbox?priority=urgent&sort=oldest").text
    assert re.search(r'href="/inbox\?priority=urgent&amp;sort=oldest&amp;page=2" rel="next"', first)
    everything = [listed(operator.get(f"/inbox?page={n}").text) for n in (1, 2, 3)]
    assert [len(p) for p in everything] == [50, 50, 20]
    assert len({number for p in everything for number in p}) == 120


@pytest.mark.parametrize(
    "query",
    [
        "status=pending",
        "priority=critical",
        "source=email",
        "sort=random",
        "page=0",
        "page=two",
        "page=99999999999",
        "q=" + "x" * 201,
    ],
)
def test_a_filter_no_form_offers_is_a_400_naming_it(operator, query):
    page = operator.get(f"/inbox?{query}")
    assert page.status_code == 400
    assert query.split("=")[0] in page.text


# -- one ticket ----------------------------------------------------------------------------------------


def test_the_ticket_page_shows_the_request_the_proposal_the_evidence_the_notes_and_the_history(person, out):
    number = file(out).id
    page = person("viewer", "vic").get(f"/inbox/{number}")
    assert page.status_code == 200
    sections = {
        name: page.text[page.text.index(f'id="{name}"') :] for name in ("request", "proposal", "evidence", "notes", "history")
    }
    assert "I want my money back for order O-1001." in sections["request"]
    assert re.search(r"<th[^>]*>order_id</th><td>\s*O-1001\s*</td>", sections["proposal"])
    assert re.search(r"<th[^>]*>amount</th><td>\s*180.0\s*</td>", sections["proposal"])
    assert "refund_over_150" in sections["proposal"] and "over the $150 limit" in sections["proposal"]
    assert "get_order" in sections["evidence"] and re.search(
        r"<th[^>]*>status</th><td>\s*delivered\s*</td>", sections["evidence"]
    )
    assert "a loyal customer" in sections["notes"]
    assert re.search(r"<td>run-1</td><td><strong>filed</strong>", sections["history"])


def test_the_ticket_page_offers_each_role_only_the_forms_it_may_send(person, out):
    number = file(out).id
    forms = {
        role: set(re.findall(rf'action="/inbox/{number}/(\w+)"', person(role, f"{role}1").get(f"/inbox/{number}").text))
        for role in ("viewer", "operator", "approver")
    }
    assert forms == {
        "viewer": set(),
        "operator": {"assign", "priority", "note", "reply"},
        "approver": {"assign", "priority", "note", "reply", "approve", "reject"},
    }


def test_a_decided_ticket_offers_a_note_only(approver, out):
    number = file(out).id
    post(approver, f"/inbox/{number}/approve")
    assert re.findall(rf'action="/inbox/{number}/(\w+)"', approver.get(f"/inbox/{number}").text) == ["note"]


@pytest.mark.parametrize("address", ["/inbox/99", "/inbox/T-99", "/inbox/nothing", "/inbox/" + "9" * 40])
def test_a_ticket_that_does_not_exist_is_a_404(operator, out, address):
    file(out)
    assert operator.get(address).status_code == 404
    assert post(operator, address + "/note", text="hello").status_code == 404


def test_the_ticket_number_as_listed_is_an_address_too(operator, out):
    file(out)
    assert "refund_order" in operator.get("/inbox/T-1").text


# -- actions -------------------------------------------------------------------------------------------


def test_assign_gives_the_ticket_to_me_by_default_to_a_named_worker_or_back_to_no_one(person, out, operator):
    person("operator", "pat")
    number = file(out).id
    for owner, expected in (("", "olga"), ("pat", "pat"), ("unassigned", "")):
        answer = post(operator, f"/inbox/{number}/assign", owner=owner)
        assert (answer.status_code, answer.headers["location"]) == (303, f"/inbox/{number}?done=assign")
        assert stored(out, number).owner == expected
    assert [(e["by"], e["owner"]) for e in audited(out)] == [("olga", "olga"), ("olga", "pat"), ("olga", "")]
    assert "Ticket assigned." in operator.get(f"/inbox/{number}?done=assign").text


def test_assign_refuses_a_name_that_cannot_work_tickets(person, out, operator):
    person("viewer", "vic")
    number = file(out).id
    for owner in ("vic", "nobody-here"):
        answer = post(operator, f"/inbox/{number}/assign", owner=owner)
        assert answer.status_code == 400
        assert "is not an account that can work tickets" in answer.text
    assert stored(out, number).owner == "" and audited(out) == []


def test_reply_note_and_priority_change_the_ticket_and_are_audited_under_the_operators_name(operator, out):
    number = file(out).id
    assert post(operator, f"/inbox/{number}/reply", text="We are on it.").status_code == 303
    assert post(operator, f"/inbox/{number}/note", text="Checked the order.").status_code == 303
    assert post(operator, f"/inbox/{number}/priority", priority="urgent").status_code == 303
    ticket = stored(out, number)
    assert [(e.by, e.text) for e in ticket.replies] == [("olga", "We are on it.")]
    assert [(e.by, e.text) for e in ticket.notes][-1] == ("olga", "Checked the order.")
    assert ticket.priority == "urgent"
    assert [(e["action"], e["by"], e["ticket"]) for e in audited(out)] == [
        ("ticket.reply", "olga", "T-1"),
        ("ticket.note", "olga", "T-1"),
        ("ticket.priority", "olga", "T-1"),
    ]
    assert [e.get("text") or e.get("priority") for e in audited(out)] == ["We are on it.", "Checked the order.", "urgent"]
    page = operator.get(f"/inbox/{number}").text
    assert "We are on it." in page[page.index('id="replies"') :] and "Checked the order." in page[page.index('id="notes"') :]


def test_approve_and_reject_decide_the_ticket_and_are_audited_under_the_approvers_name(approver, out):
    approved, rejected = file(out).id, file(out).id
    assert post(approver, f"/inbox/{approved}/approve").status_code == 303
    assert post(approver, f"/inbox/{rejected}/reject", note="Over the limit without a receipt.").status_code == 303
    assert (stored(out, approved).status, stored(out, approved).decided_by) == ("approved", "abe")
    assert (stored(out, rejected).status, stored(out, rejected).history[-1].text) == (
        "rejected",
        "Over the limit without a receipt.",
    )
    assert [(e["action"], e["by"], e["ticket"], e["note"]) for e in audited(out)] == [
        ("ticket.approve", "abe", "T-1", ""),
        ("ticket.reject", "abe", "T-2", "Over the limit without a receipt."),
    ]


def test_a_decision_the_trail_cannot_record_is_refused_and_not_taken(approver, out, site, monkeypatch):
    first, second = file(out).id, file(out).id
    assert post(approver, f"/inbox/{first}/approve").status_code == 303  # the trail now holds an entry under the key
    monkeypatch.setenv("PASSHAT_AUDIT_KEY", "b" * 64)
    state = site[1].state  # the module's app: its key is put back below (monkeypatch would delete a State's field)
    key, state.audit_key = state.audit_key, signing_key()  # another key: the trail cannot go on
    try:
        refused = post(approver, f"/inbox/{second}/approve")
    finally:
        state.audit_key = key
    assert refused.status_code == 400 and "cannot be continued" in " ".join(refused.text.split())
    assert stored(out, second).status == "open"
    assert [e["action"] for e in audited(out)] == ["ticket.approve"]


VALID_FORMS = {
    "assign": {"owner": ""},
    "reply": {"text": "We are on it."},
    "note": {"text": "Checked."},
    "priority": {"priority": "low"},
    "approve": {"note": ""},
    "reject": {"note": "No receipt."},
}
MAY = {
    "viewer": set(),
    "operator": {"assign", "reply", "note", "priority"},
    "approver": set(VALID_FORMS),
}


@pytest.mark.parametrize("role", sorted(MAY))
@pytest.mark.parametrize("action", sorted(VALID_FORMS))
def test_each_role_may_send_exactly_its_actions(person, out, role, action):
    client = person(role, f"sam-{role}")
    number = file(out).id
    before = stored(out, number)
    answer = post(client, f"/inbox/{number}/{action}", **VALID_FORMS[action])
    if action in MAY[role]:
        assert answer.status_code == 303
        assert stored(out, number).history != before.history
        assert [(e["action"], e["by"]) for e in audited(out)] == [(f"ticket.{action}", f"sam-{role}")]
    else:
        assert answer.status_code == 403
        assert stored(out, number) == before and audited(out) == []


def test_approving_a_decided_ticket_is_a_409_and_the_first_decision_stands(person, out, approver):
    other = person("approver", "ann")
    number = file(out).id
    assert post(approver, f"/inbox/{number}/approve").status_code == 303
    for client, action, form in ((other, "approve", {}), (approver, "approve", {}), (other, "reject", {"note": "No."})):
        answer = post(client, f"/inbox/{number}/{action}", **form)
        assert answer.status_code == 409
        assert "is approved" in answer.text
    ticket = stored(out, number)
    assert (ticket.status, ticket.decided_by) == ("approved", "abe")
    assert [e["action"] for e in audited(out)] == ["ticket.approve"]


def test_a_decided_ticket_takes_notes_but_no_reply_assignment_or_priority(approver, out):
    number = file(out).id
    post(approver, f"/inbox/{number}/reject", note="No receipt.")
    assert post(approver, f"/inbox/{number}/note", text="Customer called back.").status_code == 303
    for action in ("reply", "assign", "priority"):
        assert post(approver, f"/inbox/{number}/{action}", **VALID_FORMS[action]).status_code == 409


@pytest.mark.parametrize(
    ("action", "form", "message"),
    [
        ("reject", {"note": "  "}, "write why it is rejected"),
        ("reject", {}, "write why it is rejected"),
        ("reply", {"text": ""}, "write the reply first"),
        ("note", {"text": "\n"}, "write the note first"),
        ("priority", {"priority": "critical"}, "choose a priority"),
        ("priority", {}, "choose a priority"),
        ("note", {"text": "x" * (MAX_TEXT + 1)}, "at most 4,000"),
        ("reply", {"text": "x" * (MAX_TEXT + 1)}, "at most 4,000"),
        ("approve", {"note": "x" * (MAX_TEXT + 1)}, "at most 4,000"),
        ("assign", {"owner": "x" * 300}, "is not an account"),
    ],
)
def test_bad_input_is_a_400_with_the_reason_and_changes_nothing(approver, out, action, form, message):
    number = file(out).id
    before = stored(out, number)
    answer = post(approver, f"/inbox/{number}/{action}", **form)
    assert answer.status_code == 400
    assert message in answer.text
    assert stored(out, number) == before and audited(out) == []


def test_a_refused_form_gives_back_what_was_typed(operator, out):
    number = file(out).id
    answer = post(operator, f"/inbox/{number}/note", text="y" * (MAX_TEXT + 1))
    assert f'name="text" rows="3" maxlength="{MAX_TEXT}">{"y" * (MAX_TEXT + 1)}</textarea>' in answer.text


def test_an_action_needs_a_signed_in_session_and_the_pages_token(site, out, operator):
    number = file(out).id
    assert TestClient(site[1]).post(f"/inbox/{number}/note", data={"text": "hi"}, follow_redirects=False).status_code in (
        401,
        403,
    )
    assert operator.post(f"/inbox/{number}/note", data={"text": "hi"}, follow_redirects=False).status_code == 403
    assert stored(out, number).notes[-1].text == "a loyal customer"


# -- untrusted text ------------------------------------------------------------------------------------


def test_what_the_agent_and_the_customer_wrote_renders_as_text(approver, out):
    number = file(
        out,
        args={"order_id": SCRIPT, SCRIPT: [{"nested": SCRIPT}]},
        request=[SCRIPT],
        reason=SCRIPT,
        tool=SCRIPT,
        conversation=SCRIPT,
        evidence=[{"tool": SCRIPT, "args": {"q": SCRIPT}, "result": f"line one\n{SCRIPT}"}],
    ).id
    post(approver, f"/inbox/{number}/note", text=SCRIPT)
    escaped = "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;"
    for page in (approver.get(f"/inbox/{number}").text, approver.get("/inbox").text):
        assert "<script>alert(" not in page
        assert escaped in page
    page = approver.get(f"/inbox/{number}").text
    for section in ("request", "proposal", "evidence", "notes", "history"):
        assert escaped in page[page.index(f'id="{section}"') :].split("</section>")[0], section


@pytest.mark.parametrize("query", ["q=%00", "q=lisbon%00", "owner=%00bob"])
def test_a_control_character_in_a_filter_is_refused_not_read_as_match_everything(approver, varied, query):
    """SQLite's LIKE ends a pattern at a NUL: unchecked, q=%00 listed every ticket."""
    page = approver.get(f"/inbox?{query}")
    assert page.status_code == 400
    assert "control character (U+0000)" in page.text and not listed(page.text)


def test_a_tab_in_the_search_is_text_and_the_store_refuses_a_nul_too(approver, varied, out):
    assert approver.get("/inbox?q=lisbon%09").status_code == 200  # stripped like any edge whitespace
    with InboxStore.open(out) as store, pytest.raises(ValueError, match="control character"):
        store.page(search="\x00")
