"""The inbox operator: the human gate's tickets of runs and MCP sessions go to the inbox, where people decide them.

A trial files each ticket with the customer's words and the agent's reads, waits at its end (without holding up the
other trials of its event loop) for the decision, and carries out what is approved exactly as the simulated
operator carries out what the policy allows; a rejection carries the person's note; no decision in time expires the
ticket. The test plays the person through ``InboxStore``.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from passhat.agents import resolve_agent
from passhat.agents.mcp_wire import listening_socket
from passhat.cli import main
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.env import Environment
from passhat.guard.inbox import STOPPED_NOTE, Inbox, InboxStore, Ticket
from passhat.run.seeding import trial_seed
from passhat.run.tool_path import trial_tool_path
from passhat.run.trial import TrialOutput, TrialSpec, run_trial
from passhat.run_config import RunConfig
from passhat.serve import McpDomainServer
from passhat.serve.mcp_server import endpoint
from passhat.store import ResultStore
from passhat.trajectory import Event

RETAIL = load_domain("retail")
GATED = RETAIL.tasks["retail-047"]  # a return over the refund threshold; the task declares its own human gate
UNGATED = "retail-001"
RETURN = {"order_id": "#R2144957", "item_ids": ["V-50175"], "payment_method_id": "paypal_813444"}  # GATED's write
EMAIL = "sorenrut632@example.org"  # of the customer whose order that is


def spec(trial: int = 0) -> TrialSpec:
    return TrialSpec(GATED, PERSONAS["baseline"], trial, trial_seed(0, GATED.id, "baseline", trial))


async def trial(inbox: Inbox, number: int = 0) -> TrialOutput:
    return await run_trial(RETAIL, spec(number), resolve_agent("reference:perfect"), resolve_user("scripted"), inbox=inbox)


async def next_open(store: InboxStore, seen: int = 0) -> Ticket:
    """The first open ticket past ``seen`` tickets, once a trial has filed it."""
    while True:
        tickets, total = store.page(status="open", sort="oldest")
        if total > seen:
            return tickets[seen]
        await asyncio.sleep(0.01)


def decisions(out: TrialOutput) -> list[Event]:
    return [e for e in out.events if e.kind == "guard"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[InboxStore]:
    with InboxStore.open(tmp_path) as opened:
        yield opened


def test_an_approved_ticket_is_carried_out_and_the_trial_passes(store):
    inbox = Inbox(store, "run", "run-1", timeout=60)

    async def person_approves() -> TrialOutput:
        running = asyncio.create_task(trial(inbox))
        ticket = await next_open(store)
        store.decide(ticket.id, "approved", by="Ann Lee")
        return await running

    out = asyncio.run(person_approves())
    assert out.grade.reward == 1
    (decision,) = decisions(out)
    assert decision.guard["decision"] == "operator_done" and decision.guard["by"] == "Ann Lee"
    assert decision.text == "ticket T-1 done by Ann Lee"
    (ticket,) = store.page()[0]
    assert (ticket.status, ticket.outcome, ticket.decided_by) == ("approved", "carried out", "Ann Lee")
    assert [e.action for e in ticket.history] == ["filed", "approved", "carried out"]


def test_a_filed_ticket_holds_the_customers_words_the_agents_reads_and_the_gate_s_reason(store):
    inbox = Inbox(store, "run", "run-1", timeout=0.05)
    out = asyncio.run(trial(inbox))
    (ticket,) = store.page()[0]
    asked = [e.text for e in out.events if e.kind == "user"]
    assert ticket.request == asked[: len(ticket.request)] and "office chair" in ticket.request[0]
    assert [e["tool"] for e in ticket.evidence] == ["find_customer_by_email", "get_customer", "get_order"]
    assert ticket.evidence[-1]["args"] == {"order_id": RETURN["order_id"]} and ticket.evidence[-1]["result"]["status"] == "ok"
    assert (ticket.tool, ticket.args, ticket.rule) == ("return_items", RETURN, "refund-review")
    assert "needs a person's approval" in ticket.reason and ticket.priority == "high"
    assert (ticket.source, ticket.origin, ticket.conversation, ticket.domain) == (
        "run",
        "run-1",
        f"{GATED.id}/baseline/0",
        "retail",
    )


def test_a_rejected_ticket_is_not_carried_out_and_the_trial_shows_the_persons_note(store):
    inbox = Inbox(store, "run", "run-1", timeout=60)

    async def person_rejects() -> TrialOutput:
        running = asyncio.create_task(trial(inbox))
        store.decide((await next_open(store)).id, "rejected", by="Ann Lee", note="the chair was used; no refund")
        return await running

    out = asyncio.run(person_rejects())
    (decision,) = decisions(out)
    assert decision.guard["decision"] == "operator_rejected" and decision.guard["note"] == "the chair was used; no refund"
    assert decision.guard["by"] == "Ann Lee" and decision.result["error"]["type"] == "rejected"
    assert out.grade.reward == 0  # the return the task asks for never happened
    assert store.page()[0][0].outcome == ""


def test_no_decision_in_time_expires_the_ticket_and_counts_as_a_rejection(store):
    out = asyncio.run(trial(Inbox(store, "run", "run-1", timeout=0.5)))
    (decision,) = decisions(out)
    assert decision.guard["decision"] == "operator_rejected"
    assert (decision.guard["note"], decision.guard["by"]) == ("no decision within 0.5 s", "passhat")
    ticket = store.page()[0][0]
    assert (ticket.status, ticket.decided_by) == ("expired", "passhat")


def test_a_trial_stopped_while_it_waits_expires_its_ticket_so_no_one_decides_it_for_nothing(store):
    async def stopped() -> None:
        waiting = asyncio.create_task(trial(Inbox(store, "run", "run-1", timeout=60)))
        await next_open(store)
        waiting.cancel()  # what Ctrl-C does to a run's trials
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(stopped())
    ticket = store.page()[0][0]
    assert (ticket.status, ticket.decided_by, ticket.history[-1].text) == ("expired", "passhat", STOPPED_NOTE)


def test_two_trials_wait_at_once_and_deciding_one_lets_it_finish_while_the_other_waits(store):
    inbox = Inbox(store, "run", "run-1", timeout=60)

    async def two_trials() -> None:
        first, second = asyncio.create_task(trial(inbox, 0)), asyncio.create_task(trial(inbox, 1))
        one, other = await next_open(store, 0), await next_open(store, 1)  # both trials are waiting now
        store.decide(other.id, "approved", by="Ann Lee")
        done, pending = await asyncio.wait({first, second}, return_when=asyncio.FIRST_COMPLETED)
        waiting = first if other.conversation.endswith("/1") else second
        assert pending == {waiting} and not waiting.done()
        assert store.get(one.id).status == "open"
        store.decide(one.id, "approved", by="Bo Ng")
        assert (await waiting).grade.reward == 1 and done.pop().result().grade.reward == 1

    asyncio.run(two_trials())
    assert sorted(t.decided_by for t in store.page()[0]) == ["Ann Lee", "Bo Ng"]


def test_an_approval_the_policy_forbids_is_not_carried_out_and_the_ticket_says_why(store):
    """A person's yes is no way around the policy: here the customer was never identified in the conversation."""
    env = Environment(RETAIL)
    path = trial_tool_path(env, 1, {}, ["human_gate"], "seed-1", "c", Inbox(store, "run", "run-1").operator("c", "retail"))
    assert path.execute("return_items", RETURN).guard["decision"] == "ticket"
    store.decide(store.page()[0][0].id, "approved", by="Ann Lee")
    (decision,) = path.settle()
    assert decision.guard["decision"] == "operator_rejected" and "identity was not verified" in decision.guard["note"]
    ticket = store.page()[0][0]
    assert ticket.status == "approved" and ticket.outcome == decision.guard["note"]
    assert path.execute("get_order", {"order_id": RETURN["order_id"]}).result["data"]["status"] == "delivered"
    env.close()


def test_the_operator_is_stored_with_the_run_and_the_run_folder_is_not():
    config = RunConfig(personas=["baseline"], tasks=[GATED.id], operator="inbox", operator_timeout=5, run_folder="/runs/a")
    stored = config.model_dump()
    assert (stored["operator"], stored["operator_timeout"]) == ("inbox", 5) and "run_folder" not in stored
    assert RunConfig.model_validate(stored).operator == "inbox"
    assert RunConfig(personas=["baseline"], tasks=[GATED.id]).operator == "simulated"


# -- the command line -----------------------------------------------------------------------------------------------


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tasks", UNGATED, "--operator", "inbox"], "no human gate is on"),
        (["--tasks", UNGATED, "--operator-timeout", "5"], "add --operator inbox"),
        (["--tasks", GATED.id, "--operator", "inbox", "--executor", "ray"], "--executor"),
    ],
)
def test_run_refuses_an_inbox_operator_that_could_decide_nothing(tmp_path, flags, message):
    result = invoke("run", "--out", str(tmp_path), "--trials", "1", *flags)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []  # no run folder made


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--operator", "inbox"], "does not name human_gate"),
        (["--out", "x"], "apply to --operator inbox only"),
        (["--operator-timeout", "3"], "apply to --operator inbox only"),
    ],
)
def test_serve_mcp_refuses_an_inbox_operator_that_could_decide_nothing(flags, message):
    result = invoke("serve", "mcp", *flags)
    assert result.exit_code == 2 and message in result.output


def test_a_run_with_workers_files_every_ticket_into_one_inbox_and_carries_out_each_approved_one(tmp_path):
    """`passhat run --operator inbox --workers 2` in a process of its own; the test approves tickets as they come."""
    command = [sys.executable, "-m", "passhat.cli", "run", "--out", str(tmp_path), "--run-id", "with-people"]
    flags = ["--tasks", GATED.id, "--personas", "baseline,impatient", "--trials", "2", "--workers", "2"]
    run = subprocess.Popen(
        [*command, *flags, "--agent", "reference:perfect", "--operator", "inbox", "--operator-timeout", "120"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not (tmp_path / "inbox.sqlite").exists() and run.poll() is None:
            time.sleep(0.05)
        with InboxStore.open(tmp_path) as store:
            while run.poll() is None:
                for ticket in store.page(status="open")[0]:
                    store.decide(ticket.id, "approved", by="Ann Lee")
                time.sleep(0.05)
            tickets, total = store.page()
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, run.stderr.read()
    assert total == 4 and {t.origin for t in tickets} == {"with-people"}
    assert all((t.status, t.outcome) == ("approved", "carried out") for t in tickets)
    assert len({t.conversation for t in tickets}) == 4
    with ResultStore.open(tmp_path / "with-people") as results:
        assert results.config["operator"] == "inbox"
        assert [r.reward for r in results.trials()] == [1, 1, 1, 1]


# -- MCP sessions -----------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def mcp_server(inbox: Inbox) -> Iterator[tuple[McpDomainServer, str]]:
    server = McpDomainServer(RETAIL, guards=["human_gate"], inbox=inbox)
    sock = listening_socket("127.0.0.1", 0)
    thread = threading.Thread(target=anyio.run, args=(server.serve_http, sock))
    thread.start()
    try:
        yield server, endpoint(sock)
    finally:
        server.stop()
        thread.join()


def order_status(result: Any) -> str:
    return result.structured_content["data"]["status"]


def test_an_mcp_session_files_its_tickets_and_carries_out_a_decision_at_its_next_call(store):
    with mcp_server(Inbox(store, "mcp", "mcp:test", timeout=60)) as (server, url):

        async def session() -> None:
            async with Client(url) as client:
                await client.call_tool("find_customer_by_email", {"email": EMAIL})  # the policy: identity first
                handed = await client.call_tool("return_items", RETURN)
                assert handed.structured_content["data"]["ticket_id"] == "T-1"
                ticket = store.page()[0][0]
                assert (ticket.source, ticket.origin, ticket.request) == ("mcp", "mcp:test", [])
                assert [e["tool"] for e in ticket.evidence] == ["find_customer_by_email"]
                assert ticket.conversation.startswith("session 1: ")
                assert order_status(await client.call_tool("get_order", {"order_id": RETURN["order_id"]})) == "delivered"
                store.decide(ticket.id, "approved", by="Ann Lee")
                after = await client.call_tool("get_order", {"order_id": RETURN["order_id"]})
                assert order_status(after) == "return requested"  # carried out before this call ran

        anyio.run(session)
        (session_id,) = server.session_ids()
        kinds = [(e.kind, e.name, (e.guard or {}).get("decision")) for e in server.session_events(session_id)]
    assert kinds == [
        ("tool", "find_customer_by_email", None),
        ("tool", "return_items", "ticket"),
        ("tool", "get_order", None),
        ("guard", "return_items", "operator_done"),
        ("tool", "get_order", None),
    ]
    assert store.page()[0][0].outcome == "carried out"


def test_an_mcp_sessions_end_waits_for_the_open_tickets_and_expires_those_not_decided_in_time(store):
    with mcp_server(Inbox(store, "mcp", "mcp:test", timeout=0.3)) as (server, url):

        async def session() -> None:
            async with Client(url) as client:
                await client.call_tool("return_items", RETURN)

        anyio.run(session)  # the client's DELETE ends the session: answered once the wait is over
        (session_id,) = server.session_ids()
        last = server.session_events(session_id)[-1]
    assert last.guard["decision"] == "operator_rejected" and last.guard["note"] == "no decision within 0.3 s"
    assert store.page()[0][0].status == "expired"


def filed(out: Path) -> int:
    """The tickets filed in ``out``'s inbox so far (none while the run has not made it)."""
    if not (out / "inbox.sqlite").exists():
        return 0
    with InboxStore.open(out) as store:
        return store.page()[1]


def test_the_one_command_serve_md_gives_to_see_a_ticket_files_one_open_ticket_the_inbox_shows(tmp_path):
    """After `make run` the inbox is empty (the simulated operator decides): serve.md's command, typed as it is in a
    fresh folder, files one open ticket in runs/, the folder `passhat serve` reads, and waits for its decision."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "serve.md").read_text(encoding="utf-8")
    (command,) = [ln.strip().removesuffix("&").split() for ln in page.splitlines() if "--operator inbox &" in ln]
    assert command[:2] == ["passhat", "run"]
    running = subprocess.Popen([sys.executable, "-m", "passhat.cli", *command[1:]], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 600  # what the run needs, however busy the machine: a filed ticket
        while not filed(tmp_path / "runs"):
            assert running.poll() is None and time.monotonic() < deadline, "the run ended or stalled without a ticket"
            time.sleep(0.2)
        with InboxStore.open(tmp_path / "runs") as store:
            (ticket,), _ = store.page()
            assert (ticket.status, ticket.domain) == ("open", "benefits")
            store.decide(ticket.id, "approved", by="Ann Lee")
        assert running.wait(timeout=600) == 0
    finally:
        running.kill()
