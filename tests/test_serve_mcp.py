"""`passhat serve mcp`: a domain's tools over MCP, met with the official SDK's own client, over stdio (the command
run as a subprocess) and over streamable HTTP on 127.0.0.1 (the server in a thread, so its sessions can be read).

Each session works on a backend fork of its own; tools are listed with the schemas a run's agent sees and
annotations from their metadata; a failed call is an error result, never a protocol error; the guards and faults of
a run apply, faults seeded per session; every call is recorded as a trial's event.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

import passhat.domains.retail
from passhat.agents.mcp_wire import listening_socket
from passhat.cli import main
from passhat.domains import load_domain
from passhat.env import Environment
from passhat.serve import McpDomainServer, McpSession
from passhat.serve.mcp_server import CONNECTION_SESSION, endpoint
from passhat.trajectory import Event

RETAIL_DIR = Path(passhat.domains.retail.__file__).parent
ORDER = "#R3042198"  # a pending retail order
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
CANCEL = {"order_id": ORDER, "reason": "no longer needed"}


# -- the two transports -----------------------------------------------------------------------------------------------


def over_stdio(tmp_path: Path, *flags: str) -> Any:
    """A transport that runs `passhat serve mcp FLAGS` with this venv's python; its stderr goes to a file."""
    errlog = (tmp_path / "server-stderr.txt").open("w")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "passhat.cli", "serve", "mcp", *flags], env=dict(os.environ), cwd=str(tmp_path)
    )
    return stdio_client(params, errlog=errlog)


@contextlib.contextmanager
def http_server(domain_name: str = "retail", **options: Any) -> Iterator[tuple[McpDomainServer, str]]:
    """An McpDomainServer serving streamable HTTP on a free 127.0.0.1 port, in a thread; stopped on the way out."""
    server = McpDomainServer(load_domain(domain_name), **options)
    sock = listening_socket("127.0.0.1", 0)
    thread = threading.Thread(target=anyio.run, args=(server.serve_http, sock))
    thread.start()
    try:
        yield server, endpoint(sock)
    finally:
        server.stop()
        thread.join()


def talk(*steps: Callable[[], Awaitable[None]]) -> None:
    for step in steps:
        anyio.run(step)


def status_of(result: CallToolResult) -> str:
    assert result.structured_content is not None
    return result.structured_content["data"]["status"]


def three_shape(result: CallToolResult) -> dict[str, Any]:
    """The passhat result a call answered: structured, and the same as JSON text."""
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content


# -- over stdio -------------------------------------------------------------------------------------------------------


def test_over_stdio_a_session_lists_annotated_tools_reads_and_writes_its_own_backend(tmp_path):
    async def session() -> None:
        async with Client(over_stdio(tmp_path)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["get_order"].annotations.read_only_hint is True
            cancel = tools["cancel_order"].annotations
            assert (cancel.read_only_hint, cancel.destructive_hint, cancel.idempotent_hint) == (False, True, False)
            assert status_of(await client.call_tool("get_order", {"order_id": ORDER})) == "pending"
            assert status_of(await client.call_tool("cancel_order", CANCEL)) == "cancelled"
            assert status_of(await client.call_tool("get_order", {"order_id": ORDER})) == "cancelled"

    async def next_session() -> None:  # another process: a fresh fork, the first session's write is not there
        async with Client(over_stdio(tmp_path)) as client:
            assert status_of(await client.call_tool("get_order", {"order_id": ORDER})) == "pending"

    talk(session, next_session)


def test_over_stdio_one_fault_class_at_rate_one_answers_its_error_on_every_call(tmp_path):
    async def session() -> None:
        async with Client(over_stdio(tmp_path, "--faults", "rate_limited=1.0", "--seed", "3")) as client:
            for name, args in (("get_order", {"order_id": ORDER}), ("cancel_order", CANCEL)):
                result = await client.call_tool(name, args)
                assert result.is_error and three_shape(result)["error"]["type"] == "rate_limited"

    talk(session)


def test_over_stdio_the_confirmation_guard_refuses_a_write_nobody_confirmed(tmp_path):
    async def session() -> None:
        async with Client(over_stdio(tmp_path, "--guard", "confirmation")) as client:
            refused = await client.call_tool("cancel_order", CANCEL)
            assert refused.is_error and three_shape(refused)["error"]["type"] == "confirmation_required"
            assert status_of(await client.call_tool("get_order", {"order_id": ORDER})) == "pending"

    talk(session)


# -- over streamable HTTP ---------------------------------------------------------------------------------------------


def test_over_http_two_sessions_never_see_each_others_writes():
    with http_server() as (server, url):

        async def two_sessions() -> None:
            async with Client(url) as first, Client(url) as second:
                assert status_of(await first.call_tool("cancel_order", CANCEL)) == "cancelled"
                assert status_of(await second.call_tool("get_order", {"order_id": ORDER})) == "pending"
                assert status_of(await first.call_tool("get_order", {"order_id": ORDER})) == "cancelled"

        talk(two_sessions)
        first, second = server.session_ids()
        assert [e.name for e in server.session_events(first)] == ["cancel_order", "get_order"]
        assert [e.name for e in server.session_events(second)] == ["get_order"]


def test_over_http_tools_carry_the_run_schemas_and_annotations_from_their_metadata():
    env = Environment(load_domain("retail"))
    with http_server() as (_, url):
        listed: list[Any] = []

        async def list_tools() -> None:
            async with Client(url) as client:
                listed.extend((await client.list_tools()).tools)

        talk(list_tools)
    assert [t.name for t in listed] == [s["name"] for s in env.tool_schemas()]
    for tool in listed:
        spec = env.tools[tool.name]
        assert (tool.description, tool.input_schema) == (spec.schema["description"], spec.schema["parameters"])
        hints = tool.annotations
        assert hints.read_only_hint is not spec.meta.write and hints.open_world_hint is False
        if spec.meta.write:
            assert hints.destructive_hint is True and hints.idempotent_hint is spec.meta.idempotent
    assert {t.name: t.title for t in listed}["cancel_order"] == "Cancel order"
    env.close()


def test_over_http_tools_carry_the_guards_additions_to_their_schemas():
    with http_server(guards=["idempotency"]) as (_, url):
        schemas: dict[str, dict[str, Any]] = {}

        async def list_tools() -> None:
            async with Client(url) as client:
                schemas.update({t.name: t.input_schema for t in (await client.list_tools()).tools})

        talk(list_tools)
    assert "idempotency_key" in schemas["cancel_order"]["properties"]
    assert "idempotency_key" not in schemas["get_order"]["properties"]


def test_over_http_every_failed_call_is_an_error_result_with_its_three_shape_result():
    with http_server() as (server, url):
        answers: list[CallToolResult] = []

        async def failing_calls() -> None:
            async with Client(url) as client:
                answers.append(await client.call_tool("get_order", {"order_id": "#R0000000"}))
                answers.append(await client.call_tool("get_order", {"order": ORDER}))
                answers.append(await client.call_tool("no_such_tool", {}))
                answers.append(await client.call_tool("cancel_order", {"order_id": ORDER, "reason": "x" * 70_000}))
                answers.append(await client.call_tool("get_order", {"order_id": ORDER}))

        talk(failing_calls)
        *failed, read = answers
        assert [three_shape(r)["status"] for r in failed] == ["not_found", "error", "error", "error"]
        kinds = ["invalid_arguments", "unknown_tool", "arguments_too_large"]
        assert [three_shape(r)["error"]["type"] for r in failed[1:]] == kinds
        assert all(r.is_error for r in failed) and not read.is_error
        (session,) = server.session_ids()
        recorded = server.session_events(session)
        assert [e.result for e in recorded] == [r.structured_content for r in answers]
        assert all(e.kind == "tool" and e.call_id for e in recorded)


def test_over_http_a_session_ends_when_its_client_leaves_its_last_state_handed_over_then_its_fork_closed():
    seen: list[tuple[str, str]] = []

    def grade(session: McpSession) -> None:
        row = session.env.db.execute("SELECT status FROM orders WHERE id = ?", (ORDER,)).fetchone()
        seen.append((session.id, row[0]))

    with http_server(on_session_end=grade) as (server, url):

        async def one_session() -> None:
            async with Client(url) as client:
                await client.call_tool("cancel_order", CANCEL)

        talk(one_session)
        (session_id,) = server.session_ids()
        assert seen == [(session_id, "cancelled")]  # the client's DELETE ended it, with the server still running
        session = server.session(session_id)
        assert not session.open
        with pytest.raises(sqlite3.ProgrammingError):
            session.env.db.execute("SELECT 1")
        assert [e.name for e in server.session_events(session_id)] == ["cancel_order"]  # still readable


def test_over_http_sessions_still_open_end_when_the_server_stops():
    ended: list[str] = []
    with http_server(on_session_end=lambda s: ended.append(s.id)) as (server, url):

        async def session_left_open() -> None:
            async with Client(streamable_http_client(url, terminate_on_close=False)) as client:  # leaves without a DELETE
                await client.call_tool("get_order", {"order_id": ORDER})

        talk(session_left_open)
        assert ended == []
    assert ended == server.session_ids() and len(ended) == 1


def test_over_http_an_abandoned_session_is_ended_once_idle_for_the_timeout_and_its_id_then_says_why():
    """A client that leaves without a DELETE used to hold its fork for the server's life."""
    ended: list[str] = []
    with http_server(on_session_end=lambda s: ended.append(s.id), session_idle_timeout=60) as (server, url):

        async def abandon_one_and_keep_one() -> None:
            for _ in range(2):
                async with Client(streamable_http_client(url, terminate_on_close=False)) as client:
                    await client.call_tool("get_order", {"order_id": ORDER})

        talk(abandon_one_and_keep_one)
        abandoned, kept = server.session_ids()
        server.session(kept).active += 45  # the kept one was used 45 s after the other
        later = server.session(abandoned).active + 61
        assert anyio.run(server.end_idle_sessions, later) == [abandoned]
        assert ended == [abandoned] and server.session(kept).open
        with pytest.raises(sqlite3.ProgrammingError):  # its fork is freed
            server.session(abandoned).env.db.execute("SELECT 1")
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        headers = {
            "mcp-session-id": abandoned,
            "mcp-protocol-version": "2025-11-25",
            "accept": "application/json, text/event-stream",
        }
        answer = httpx.post(url, json=body, headers=headers)
        assert answer.status_code == 404
        assert "--session-idle-timeout" in answer.json()["error"]["message"]


def test_over_http_a_session_beyond_max_sessions_is_refused_until_one_ends():
    with http_server(max_sessions=1) as (server, url):

        async def one_too_many() -> None:
            async with Client(url) as client:
                await client.call_tool("get_order", {"order_id": ORDER})
                body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
                async with httpx.AsyncClient() as http:
                    answer = await http.post(url, json=body, headers={"accept": "application/json, text/event-stream"})
                assert answer.status_code == 503
            async with Client(url) as client:  # the first one ended: room again
                await client.call_tool("get_order", {"order_id": ORDER})

        talk(one_too_many)
        assert len(server.session_ids()) == 2


def test_over_stdio_the_connection_never_ends_by_the_clock():
    server = McpDomainServer(load_domain("retail"), session_idle_timeout=1)
    connection = server._open(CONNECTION_SESSION)  # what the first request over stdio opens
    assert anyio.run(server.end_idle_sessions, connection.active + 10**6) == [] and connection.open


def test_over_http_faults_are_seeded_per_session_the_same_seed_giving_the_same_faults():
    def outcomes(seed: int) -> list[list[str]]:
        with http_server(faults={"transient_error": 0.5}, seed=seed) as (_, url):
            seen: list[list[str]] = []

            async def two_sessions() -> None:
                for _ in range(2):
                    async with Client(url) as client:
                        results = [await client.call_tool("get_order", {"order_id": ORDER}) for _ in range(12)]
                        seen.append([three_shape(r)["status"] for r in results])

            talk(two_sessions)
            return seen

    first = outcomes(seed=7)
    assert first == outcomes(seed=7)
    assert first[0] != first[1]  # session 2 draws from a seed of its own
    assert first != outcomes(seed=8)
    assert {"ok", "error"} == set(first[0] + first[1])


def test_over_http_a_fault_is_recorded_on_the_event_as_in_a_trial():
    with http_server(faults={"lost_response": 1.0}) as (server, url):

        async def write() -> None:
            async with Client(url) as client:
                result = await client.call_tool("cancel_order", CANCEL)
                assert result.is_error and three_shape(result)["error"]["type"] == "timeout"
                assert status_of(await client.call_tool("get_order", {"order_id": ORDER})) == "cancelled"  # it took effect

        talk(write)
        event = server.session_events(server.session_ids()[0])[0]
        assert event.fault and event.fault["class"] == "lost_response" and event.took_effect
        assert Event.from_dict(event.to_dict()) == event


def test_over_http_the_human_gates_tickets_are_settled_by_the_operator_when_the_session_ends():
    with http_server(guards=["human_gate", "audit"]) as (server, url):

        async def gated_write() -> None:
            async with Client(url) as client:  # a refund over the review threshold
                await client.call_tool("cancel_order", {"order_id": "#R3589659", "reason": "no longer needed"})

        talk(gated_write)
        session = server.session(server.session_ids()[0])
    events = server.session_events(session.id)
    assert [e.kind for e in events] == ["tool", "guard"]
    assert events[0].guard["decision"] == "ticket" and events[1].guard["decision"].startswith("operator_")  # type: ignore[index]
    assert [record["decision"] for record in session.audit] == [e.guard["decision"] for e in events]  # type: ignore[index]


def test_over_http_a_client_of_the_sessionless_protocol_revision_is_told_which_versions_to_use():
    with http_server() as (server, url):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"mcp-protocol-version": "2026-07-28", "accept": "application/json, text/event-stream"}
        answer = httpx.post(url, json=body, headers=headers)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == -32022 and "2025-11-25" in error["data"]["supported"]
    assert server.session_ids() == []


def test_a_server_stopped_before_it_serves_returns_at_once():
    server = McpDomainServer(load_domain("retail"))
    server.stop()
    anyio.run(server.serve_http, listening_socket("127.0.0.1", 0))  # a stop that came first is not lost
    assert server.session_ids() == []


# -- a domain from a folder -------------------------------------------------------------------------------------------

NOTES_DOMAIN = """\
import dataclasses
from pathlib import Path

from passhat.domains import load_domain, load_task_files

from .tools import TOOLS

HERE = Path(__file__).parent
RETAIL = load_domain("retail")
DOMAIN = dataclasses.replace(
    RETAIL,
    name="noted",
    schema_sql=RETAIL.schema_sql + "CREATE TABLE notes (order_id TEXT PRIMARY KEY, body TEXT NOT NULL);\\n",
    tools=(*RETAIL.tools, *TOOLS),
    load_tasks=lambda: load_task_files(HERE / "tasks", RETAIL.task_model),
)
"""

NOTES_TOOLS = '''\
import sqlite3

from passhat.domains.toolkit import NotFound, tool


@tool(write=True, idempotent=True, needs_confirmation=False, target="order_id")
def pin_note(db: sqlite3.Connection, order_id: str, body: str) -> dict:
    """Pin a note to an order, replacing the one it had.

    Args:
        order_id: The order id, e.g. #R1234567.
        body: The note.
    """
    db.execute("INSERT OR REPLACE INTO notes VALUES (?, ?)", (order_id, body))
    return {"order_id": order_id, "body": body}


@tool()
def read_note(db: sqlite3.Connection, order_id: str) -> dict:
    """The note pinned to an order.

    Args:
        order_id: The order id, e.g. #R1234567.
    """
    row = db.execute("SELECT body FROM notes WHERE order_id = ?", (order_id,)).fetchone()
    if row is None:
        raise NotFound("note", order_id)
    return {"order_id": order_id, "body": row[0]}


TOOLS = (pin_note, read_note)
'''


def test_a_domain_folder_is_served_with_its_own_tools(tmp_path):
    folder = tmp_path / "noted"
    (folder / "tasks").mkdir(parents=True)
    shutil.copy(RETAIL_DIR / "tasks" / "retail-001.yaml", folder / "tasks")
    (folder / "domain.py").write_text(NOTES_DOMAIN, encoding="utf-8")
    (folder / "tools.py").write_text(NOTES_TOOLS, encoding="utf-8")

    async def session() -> None:
        async with Client(over_stdio(tmp_path, "--domain", str(folder))) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            pin = tools["pin_note"].annotations
            assert (pin.read_only_hint, pin.destructive_hint, pin.idempotent_hint) == (False, True, True)
            assert tools["read_note"].annotations.read_only_hint is True
            missing = await client.call_tool("read_note", {"order_id": ORDER})
            assert missing.is_error and three_shape(missing) == {
                "status": "not_found",
                "found": False,
                "message": f"no note matches {ORDER!r}",
            }
            await client.call_tool("pin_note", {"order_id": ORDER, "body": "gift"})
            assert three_shape(await client.call_tool("read_note", {"order_id": ORDER}))["data"]["body"] == "gift"

    talk(session)


# -- the command ------------------------------------------------------------------------------------------------------


def test_the_http_command_prints_where_it_listens_and_serves_there_until_interrupted(tmp_path):
    command = [sys.executable, "-m", "passhat.cli", "serve", "mcp", "--transport", "http", "--port", "0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        banner = process.stderr.readline()  # type: ignore[union-attr]
        url = banner.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        names: list[str] = []

        async def list_tools() -> None:
            async with Client(url) as client:
                names.extend(t.name for t in (await client.list_tools()).tools)

        talk(list_tools)
        assert "cancel_order" in names
    finally:
        process.send_signal(signal.SIGINT)
        rest = process.communicate()[1]
    assert process.returncode in (0, 130) and "Traceback" not in rest


def test_callers_that_vanish_mid_request_cost_the_server_no_traceback_and_no_service(tmp_path):
    """What an operator saw: clients that hang up mid-call filled the log with tracebacks. Twenty writes whose
    callers close the socket before the answer, and an event stream dropped while open: the log stays clean, each
    write completes (a cancelled order is cancelled), and the server goes on answering."""
    import socket

    command = [sys.executable, "-m", "passhat.cli", "serve", "mcp", "--transport", "http", "--port", "0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        url = process.stderr.readline().split(" at ")[1].split()[0]  # type: ignore[union-attr]
        host, port = url.removeprefix("http://").split("/")[0].split(":")
        accept = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
        opened = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}, headers=accept)
        session = opened.headers["mcp-session-id"]
        headers = {**accept, "mcp-session-id": session, "content-type": "application/json"}
        httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        for n in range(20):
            call = (
                {"name": "cancel_order", "arguments": CANCEL}
                if n == 0
                else {"name": "get_order", "arguments": {"order_id": ORDER}}
            )
            body = json.dumps({"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": call}).encode()
            head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            with socket.create_connection((host, int(port))) as raw:
                raw.sendall(
                    f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n{head}content-length: {len(body)}\r\n\r\n".encode() + body
                )
        with httpx.stream("GET", url, headers={**headers, "accept": "text/event-stream"}, timeout=5) as stream:
            assert stream.status_code == 200  # the event stream opened, and is dropped unread
        read = {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "tools/call",
            "params": {"name": "get_order", "arguments": {"order_id": ORDER}},
        }
        answer = httpx.post(url, json=read, headers=headers, timeout=10)
        assert answer.status_code == 200 and "cancelled" in answer.text  # still serving; the vanished caller's write done
    finally:
        process.send_signal(signal.SIGINT)
        log = process.communicate(timeout=30)[1]
    assert "Traceback" not in log, log


def test_host_and_port_belong_to_the_http_transport():
    result = CliRunner().invoke(main, ["serve", "mcp", "--port", "9000"])
    assert result.exit_code == 2 and "--port apply to --transport http only" in " ".join(result.output.split())


def test_a_port_in_use_is_an_error_naming_it():
    with listening_socket("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "mcp", "--transport", "http", "--port", str(port)])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and f"cannot listen on --host '127.0.0.1' --port {port}" in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    "flags",
    [["--faults", "no_such_fault=1"], ["--guard", "seatbelt"], ["--domain", "no-such-domain"], ["--transport", "carrier-pigeon"]],
)
def test_bad_flags_exit_2(flags):
    result = CliRunner().invoke(main, ["serve", "mcp", *flags])
    assert result.exit_code == 2 and "Traceback" not in result.output
