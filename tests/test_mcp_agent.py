"""A team's agent service that calls its tools itself over MCP (``--agent mcp+http://...``): passhat tells it each
trial's MCP endpoint, records every call made there as the trial's own, in order between its messages, and judges the
trial as it judges any other. The framework example (the OpenAI Agents SDK) runs end to end against a scripted
chat-completions server; scripted services with the MCP SDK's own client misbehave in every way the protocol allows.

Every server here is real and on 127.0.0.1: the model (``llm_fake_server``), the agent services, passhat's MCP server.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_fake_server import FakeOpenAI, Reply, call, say
from mcp import Client
from test_external_agents import (
    CALLS,
    Service,
    agent_texts,
    infra_error,
    judged_calls,
    judged_failure,
    run,
    tool_results,
    trials,
)
from test_external_agents import Reply as ServiceReply
from test_llm_agent import ASK_EMAIL, DONE, EMAIL, KEY, ORDER, PROPOSAL, report, run_cli

from passhat.agents.mcp_agent import McpTrial
from passhat.trajectory import INFRA_ERROR, Event

REPO = Path(__file__).resolve().parent.parent
CANCEL = {"order_id": ORDER, "reason": "no longer needed"}
Request = dict[str, Any]


# --- the framework example against a scripted model -----------------------------------------------------------------


def said_by(messages: list[dict[str, Any]], role: str) -> list[str]:
    return [m["content"] for m in messages if m["role"] == role and isinstance(m.get("content"), str)]


def called(messages: list[dict[str, Any]]) -> list[str]:
    return [c["function"]["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]


def model_script(careful: bool) -> Callable[[Request], Reply]:
    """A model for retail-001 that reads where the conversation is (so trials may run at once): ask for the email,
    look the customer and the order up (two calls at once), then, if ``careful``, propose the cancellation and wait for
    the yes; cancel; report."""

    def reply(body: Request) -> Reply:
        messages = body["messages"]
        if not any(EMAIL in text for text in said_by(messages, "user")):
            return say(ASK_EMAIL)
        if "get_order" not in called(messages):
            return say(None, call("find_customer_by_email", {"email": EMAIL}, "c1"), call("get_order", {"order_id": ORDER}, "c2"))
        if careful and PROPOSAL not in said_by(messages, "assistant"):
            return say(PROPOSAL)
        if "cancel_order" not in called(messages):
            return say(None, call("cancel_order", CANCEL, "c3"))
        return say(DONE)

    return reply


@pytest.fixture(scope="module")
def framework_example() -> Any:
    spec = importlib.util.spec_from_file_location("framework_agent_example", REPO / "examples/framework_agent/server.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example  # its dataclass looks its module up while it is made
    spec.loader.exec_module(example)
    return example


def serving(server: Any) -> Iterator[str]:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"mcp+http://127.0.0.1:{server.server_address[1]}/agent"
    finally:
        server.shutdown()
        server.server_close()


def framework_run(example: Any, model: FakeOpenAI, out: Path, *extra: str) -> Any:
    endpoint = example.ModelEndpoint(model.url, KEY, "gpt-4.1")
    for agent in serving(example.make_server("127.0.0.1", 0, endpoint, "You serve the shop's customers.")):
        return run_cli(
            "run", "--agent", agent, "--tasks", "retail-001", "--personas", "baseline", "--trials", "2",
            "--out", str(out), "--run-id", "r1", "--json", str(out / "r1.json"), *extra,
        )  # fmt: skip


@pytest.fixture(scope="module")
def local_model() -> Iterator[str]:
    """The framework example's offline stand-in model (examples/framework_agent/local_model.py), served on a free
    port; yields its base URL."""
    spec = importlib.util.spec_from_file_location("framework_local_model", REPO / "examples/framework_agent/local_model.py")
    assert spec and spec.loader
    stub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stub)
    server = stub.ThreadingHTTPServer(("127.0.0.1", 0), stub.ModelHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_framework_example_runs_offline_on_its_local_model_and_passes_a_cancellation(
    framework_example: Any, local_model: str, tmp_path: Path
) -> None:
    """As the example's README runs it, without a key or a network: the stand-in asks, proposes, waits for the yes."""
    endpoint = framework_example.ModelEndpoint(local_model, "unused", "local-clerk")
    for agent in serving(framework_example.make_server("127.0.0.1", 0, endpoint, "You serve the shop's customers.")):
        result = run_cli(
            "run", "--agent", agent, "--tasks", "retail-001", "--personas", "baseline", "--trials", "1",
            "--out", str(tmp_path), "--run-id", "r1", "--json", str(tmp_path / "r1.json"),
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    [trial] = trials(tmp_path)
    assert trial.reward == 1 and kinds_and_tools(trial.events).count("cancel_order") == 1


def kinds_and_tools(events: list[dict[str, Any]]) -> list[str]:
    return [e["name"] if e["kind"] == "tool" else e["kind"] for e in events]


def test_a_framework_agent_that_asks_first_passes_every_trial(framework_example: Any, tmp_path: Path) -> None:
    with FakeOpenAI(then=model_script(careful=True)) as model:
        result = framework_run(framework_example, model, tmp_path, "--concurrency", "2")
    assert result.exit_code == 0, result.output
    metrics = report(tmp_path)["metrics"]
    assert (metrics["avg_reward"], metrics["infra_errors"]) == (1.0, 0)
    for trial in trials(tmp_path):  # each trial's calls, made by the SDK through MCP, recorded between its messages
        assert kinds_and_tools(trial.events) == [
            "user", "agent", "user", "find_customer_by_email", "get_order", "agent", "user", "cancel_order", "agent", "user", "end",
        ]  # fmt: skip
        assert [e["text"] for e in trial.events if e["kind"] == "agent"] == [ASK_EMAIL, PROPOSAL, DONE]
    assert {t["function"]["name"] for t in model.requests[0]["tools"]} >= {"cancel_order", "get_order"}  # listed over MCP


def test_a_framework_agent_that_writes_without_asking_fails_with_unconfirmed_write(
    framework_example: Any, tmp_path: Path
) -> None:
    with FakeOpenAI(then=model_script(careful=False)) as model:
        result = framework_run(framework_example, model, tmp_path)
    assert result.exit_code == 0, result.output
    assert [(t.reward, t.signature) for t in trials(tmp_path)] == [(0, "unconfirmed_write")] * 2


def test_the_confirmation_guard_refuses_the_careless_write_made_over_mcp(framework_example: Any, tmp_path: Path) -> None:
    with FakeOpenAI(then=model_script(careful=False)) as model:
        framework_run(framework_example, model, tmp_path, "--guard", "confirmation")
    for trial in trials(tmp_path):
        (cancel,) = [e for e in trial.events if e.get("name") == "cancel_order"]
        assert cancel["result"]["error"]["type"] == "confirmation_required" and trial.reward == 0


# --- scripted services: the MCP SDK's own client ------------------------------------------------------------------


def over_mcp(script: Callable[[Client, Request], Any]) -> Callable[[Request], ServiceReply]:
    """A service whose every turn runs ``script(client, request)`` with an MCP client of the request's endpoint and
    answers what it returns (a ServiceReply, or an answer's body)."""

    def answer(request: Request) -> ServiceReply:
        async def turn() -> Any:
            async with Client(request["mcp"]["url"]) as client:
                return await script(client, request)

        reply = asyncio.run(turn())
        return reply if isinstance(reply, ServiceReply) else ServiceReply(body=reply)

    return answer


def result_of(result: Any) -> dict[str, Any]:
    """What passhat answered a call made over MCP: its three-shape result, and whether MCP marked it an error."""
    assert json.loads(result.content[0].text) == result.structured_content
    assert result.is_error == (result.structured_content["status"] != "ok")
    return result.structured_content


async def calls_inside(client: Client, request: Request) -> Any:
    """Look up (two calls at once), then write without asking, all over MCP; then say what it saw."""
    if any(m["role"] == "assistant" and m["content"] for m in request["conversation"]):
        return {"message": "Goodbye."}
    found, order = await asyncio.gather(*(client.call_tool(name, args) for name, args in CALLS[:2]))
    cancelled = await client.call_tool(*CALLS[2])
    seen = [result_of(r)["status"] for r in (found, order, cancelled)]
    return {"message": f"I saw {seen[0]}, {seen[1]} and {seen[2]}."}


@pytest.mark.parametrize("options", [(), ("--guard", "confirmation"), ("--faults", "transient_error=1.0")])
def test_calls_made_over_mcp_are_carried_out_recorded_and_judged_like_calls_in_answers(
    tmp_path: Path, options: tuple[str, ...]
) -> None:
    with Service(over_mcp(calls_inside)) as service:
        result = run(tmp_path, service.url.replace("http://", "mcp+http://"), *options, run_id="mcp")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    answered = run(tmp_path, "python:test_external_agents:make_answering_agent", *options, run_id="answered")
    assert answered.exit_code == 0, answered.output
    over, asked = judged_calls(tmp_path, "mcp"), judged_calls(tmp_path, "answered")
    assert over == asked  # the same calls, results, faults, guard decisions and verdict
    assert [c[0] for c in over[1]] == [name for name, _ in CALLS]
    later = service.requests[-1]["conversation"]  # the next turn's conversation shows the calls made over MCP
    assert [m["role"] for m in later] == ["user", *["assistant", "tool"] * 3, "assistant", "user"]
    assert {m["tool_calls"][0]["id"] for m in later if m.get("tool_calls")} == {
        "passhat_call_1",
        "passhat_call_2",
        "passhat_call_3",
    }


def test_the_request_names_the_trials_own_endpoint_and_lists_annotated_tools(tmp_path: Path) -> None:
    listed: list[Any] = []

    async def lists(client: Client, request: Request) -> Any:
        listed.append({t.name: t for t in (await client.list_tools()).tools})
        return {"message": "Goodbye."}

    with Service(over_mcp(lists)) as service:
        run(tmp_path, service.url.replace("http://", "mcp+http://"), "--max-turns", "1")
    (request,) = service.requests
    assert set(request) == {"protocol", "trial", "conversation", "tools", "mcp"}
    assert request["mcp"]["url"].endswith(f"/trials/{request['trial']['id']}/mcp")
    tools = listed[0]
    assert set(tools) == {t["function"]["name"] for t in request["tools"]}
    assert tools["get_order"].annotations.read_only_hint is True
    assert tools["cancel_order"].annotations.destructive_hint is True


@pytest.mark.parametrize(
    "name, arguments, error_type",
    [("launch_rockets", {}, "unknown_tool"), ("get_order", {"order": ORDER}, "invalid_arguments")],
)
def test_a_bad_call_over_mcp_is_an_error_result_the_agent_is_judged_on(
    tmp_path: Path, name: str, arguments: dict[str, Any], error_type: str
) -> None:
    async def bad_call(client: Client, request: Request) -> Any:
        result = await client.call_tool(name, arguments)
        return {"message": f"that gave {result_of(result)['error']['type']}"}

    with Service(over_mcp(bad_call)) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url.replace("http://", "mcp+http://")))
    assert tool_results(events) and all(r["error"]["type"] == error_type for r in tool_results(events))
    assert agent_texts(events)[0] == f"that gave {error_type}"


def test_a_call_on_a_trial_that_is_over_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    urls: list[str] = []

    async def calls_the_last_trial(client: Client, request: Request) -> Any:
        urls.append(request["mcp"]["url"])
        if len(urls) == 1:
            return {"message": "Goodbye."}
        name, arguments = CALLS[2]
        stale = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
        return {"message": f"HTTP {httpx.post(urls[0], json=stale, headers=headers).status_code}"}

    agent = Service(over_mcp(calls_the_last_trial))
    with agent as service:
        result = run_cli(
            "run", "--agent", service.url.replace("http://", "mcp+http://"), "--tasks", "retail-001", "--personas",
            "baseline", "--trials", "2", "--concurrency", "1", "--max-turns", "1", "--out", str(tmp_path), "--run-id", "r1",
            "--json", str(tmp_path / "r1.json"),
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    first, second = trials(tmp_path)
    assert urls[0] != urls[1]
    assert agent_texts(second.events) == ["HTTP 404"]
    assert not [e for t in (first, second) for e in t.events if e["kind"] == "tool"]


def test_a_handoff_made_over_mcp_ends_the_trial_while_its_request_is_still_open(tmp_path: Path) -> None:
    async def hands_off(client: Client, request: Request) -> Any:
        handoff = {"customer_id": "C-167498", "summary": "wants order #R3042198 cancelled"}
        await client.call_tool("transfer_to_human", handoff)  # answered once the trial is over
        return ServiceReply(hang_up=True)  # passhat has stopped listening by now

    with Service(over_mcp(hands_off)) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url.replace("http://", "mcp+http://")))
    assert kinds_and_tools(events)[-2:] == ["transfer_to_human", "end"] and events[-1]["text"] == "transferred"
    assert tool_results(events) == [
        {"status": "ok", "data": {"handoff_id": 1, "message": "A human agent will take over this conversation."}}
    ]


def test_an_answer_may_still_ask_for_tool_calls_which_are_carried_out_as_in_the_http_way(tmp_path: Path) -> None:
    async def asks(client: Client, request: Request) -> Any:
        if not any(m["role"] == "tool" for m in request["conversation"]):
            return {"tool_calls": [{"id": "a1", "name": "get_order", "arguments": {"order_id": ORDER}}]}
        return {"message": "Goodbye."}

    with Service(over_mcp(asks)) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url.replace("http://", "mcp+http://")))
    assert kinds_and_tools(events)[:3] == ["user", "get_order", "agent"]
    assert {"role": "tool", "tool_call_id": "a1"}.items() <= service.requests[1]["conversation"][-1].items()


def fails_after_calling(call: tuple[str, dict[str, Any]]) -> Callable[[dict[str, Any]], ServiceReply]:
    async def calls_then_fails(client: Client, request: Request) -> Any:
        await client.call_tool(*call)
        return ServiceReply(500, {"error": "crashed after calling a tool"})

    return over_mcp(calls_then_fails)


def test_a_failure_after_the_service_read_is_an_infra_error_without_a_retry(tmp_path: Path) -> None:
    with Service(fails_after_calling(CALLS[1])) as service:
        stored = infra_error(tmp_path, run(tmp_path, service.url.replace("http://", "mcp+http://"), "--max-retries", "2"))
    assert "after it had called tools" in stored and "HTTP 500" in stored
    assert len(service.requests) == 1


def test_a_failure_after_the_service_wrote_is_judged_on_the_write_without_a_retry(tmp_path: Path) -> None:
    with Service(fails_after_calling(CALLS[2])) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url.replace("http://", "mcp+http://"), "--max-retries", "2"))
    assert kinds_and_tools(events)[-2:] == ["cancel_order", "end"] and events[-1]["text"] == "agent_unavailable"
    assert "after it had called tools" in events[-1]["cause"] and tool_results(events)[-1]["status"] == "ok"
    assert len(service.requests) == 1


def test_a_failure_before_any_tool_call_is_retried_as_in_the_http_way(tmp_path: Path) -> None:
    replies = iter([ServiceReply(503, {"error": "deploying"})])

    async def goodbye(client: Client, request: Request) -> Any:
        return {"message": "Goodbye."}

    answer = over_mcp(goodbye)
    with Service(lambda request: next(replies, None) or answer(request)) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url.replace("http://", "mcp+http://"), "--max-retries", "1"))
    assert agent_texts(events)[0] == "Goodbye."
    failed, retried, *_ = service.requests
    assert failed == retried  # the same request again: the failed try had called no tool


@pytest.mark.parametrize(
    "reply, error",
    [(ServiceReply(hang=True), "no answer within 0.3 s"), (ServiceReply(hang_up=True), "RemoteProtocolError")],
)
def test_a_service_that_cannot_answer_makes_an_infra_error(tmp_path: Path, reply: ServiceReply, error: str) -> None:
    with Service(lambda request: reply) as service:
        stored = infra_error(
            tmp_path,
            run(tmp_path, service.url.replace("http://", "mcp+http://"), "--max-retries", "1", "--request-timeout", "0.3"),
        )
    assert error in stored and len(service.requests) == 2


def test_a_service_that_is_down_makes_an_infra_error(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    stored = infra_error(tmp_path, run(tmp_path, f"mcp+http://127.0.0.1:{port}/agent", "--max-retries", "1"))
    assert "ConnectError" in stored


def test_an_answer_that_is_not_json_is_the_agents_turn_with_a_note(tmp_path: Path) -> None:
    with Service(lambda request: ServiceReply(raw=b"<html>cancelled</html>")) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url.replace("http://", "mcp+http://")))
    assert all(text.startswith("[passhat: ") and "Invalid JSON" in text for text in agent_texts(events))


@pytest.mark.parametrize(
    "spec, said",
    [
        ("mcp+ftp://127.0.0.1:8000/agent", "mcp+http://host:port/path"),
        ("mcp+http://", "it has no host"),
        ("mcp+http://user:secret@127.0.0.1:8000/agent", "credentials or a query string"),
    ],
)
def test_a_bad_mcp_agent_spec_is_one_paragraph_and_exit_2(tmp_path: Path, spec: str, said: str) -> None:
    result = run(tmp_path, spec)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "--agent" in result.output and said in " ".join(result.output.split())


# --- the calls of one trial, between passhat and its MCP endpoint ----------------------------------------------------


def test_calls_come_only_while_a_request_is_unanswered_and_queued_ones_never_run_after_the_answer() -> None:
    async def scenario() -> None:
        trial = McpTrial("0" * 32, [], iter(f"call_{n}" for n in range(9)).__next__)
        assert (await trial.call(*CALLS[0]))["error"]["type"] == "no_request"  # no request yet
        answered: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        trial.send(answered)
        assert trial.untouched()
        first, second = (asyncio.ensure_future(trial.call(name, args)) for name, args in CALLS[:2])
        taken = await trial.next_call()
        assert (taken.id, taken.name) == ("call_0", CALLS[0][0]) and not trial.untouched()
        trial.deliver(
            [Event("tool", call_id="call_0", name=taken.name, args=taken.arguments, result={"status": "ok", "data": 1})]
        )
        assert await first == {"status": "ok", "data": 1}
        answered.set_result(b'{"message": "done"}')
        assert trial.finish() == b'{"message": "done"}'
        assert (await second)["error"]["type"] == "not_run"  # still queued when the answer came: never run
        assert (await trial.call(*CALLS[2]))["error"]["type"] == "no_request"  # the answer came

    asyncio.run(scenario())


def test_a_trial_that_ends_mid_request_gives_up_the_request_and_refuses_its_queued_calls() -> None:
    async def scenario() -> None:
        trial = McpTrial("0" * 32, [], iter(f"call_{n}" for n in range(9)).__next__)
        trial.send(asyncio.Event().wait())  # a request that never ends on its own (the trial was handed off)
        queued = asyncio.ensure_future(trial.call(*CALLS[2]))
        await asyncio.sleep(0)
        trial.end()
        assert (await queued)["error"]["type"] == "not_run"
        await asyncio.sleep(0)
        assert trial.request is not None and trial.request.cancelled()

    asyncio.run(scenario())


def test_a_trial_that_ends_as_an_infra_error_is_never_a_pass(tmp_path: Path) -> None:
    async def fails(client: Client, request: Request) -> Any:
        await client.call_tool(*CALLS[0])
        return ServiceReply(hang_up=True)

    with Service(over_mcp(fails)) as service:
        run(tmp_path, service.url.replace("http://", "mcp+http://"))
    (trial,) = trials(tmp_path)
    assert trial.signature == INFRA_ERROR and trial.reward is None
