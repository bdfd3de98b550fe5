"""A team's own agent, plugged in as Python code (``--agent python:module:factory``) or served over HTTP
(``--agent http://...``): the examples run through ``passhat run`` and report like a built-in agent, and
every way an external agent can misbehave has its designed outcome: a judged failure when the agent
answered (badly), an infra error when it could not answer; never a traceback, never a pass.

Agents under test are defined here (the ``python:test_external_agents:...`` specs) and HTTP services are
real servers on 127.0.0.1, started by the tests.
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_llm_agent import report, run_cli, stored_events

from passhat.agents.protocol import PROTOCOL, AgentUnavailable
from passhat.agents.python_agent import is_ctrl_c
from passhat.llm import RetryPolicy
from passhat.store import ResultStore
from passhat.trajectory import INFRA_ERROR

REPO = Path(__file__).resolve().parent.parent
ORDER, EMAIL = "#R3042198", "nikolaipre243@example.org"
CANCEL = {"order_id": ORDER, "reason": "no longer needed"}
Answer = dict[str, Any]


def run(out: Path, agent: str, *extra: str, run_id: str = "r1", tasks: str = "retail-001") -> Any:
    return run_cli(
        "run", "--agent", agent, "--tasks", tasks, "--personas", "baseline", "--trials", "1", "--max-turns", "3",
        "--out", str(out), "--run-id", run_id, "--json", str(out / f"{run_id}.json"), "--retry-backoff", "0.001", *extra,
    )  # fmt: skip


def trials(out: Path, run_id: str = "r1") -> list[Any]:
    with ResultStore.open(out / run_id) as store:
        return store.trials()


def cut_short(out: Path, result: Any, ending: str) -> tuple[str | None, str, list[dict[str, Any]]]:
    """The one trial of the run, checked to be judged and failed, its conversation ended by the agent's side
    (``ending``); its signature, what passhat saw (the end's cause) and the tool results before it."""
    events = judged_failure(out, result)
    assert events[-1]["kind"] == "end" and events[-1]["text"] == ending, events[-1]
    (trial,) = trials(out)
    return trial.signature, events[-1]["cause"], tool_results(events)


def judged_failure(out: Path, result: Any) -> list[dict[str, Any]]:
    """The one trial of the run, checked to be judged and failed with no traceback shown; its events."""
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    (trial,) = trials(out)
    assert trial.signature != INFRA_ERROR and trial.reward == 0, (trial.signature, trial.infra_error)
    return trial.events


def infra_error(out: Path, result: Any) -> str:
    """The one trial of the run, checked to be an infra error (not judged) with no traceback shown; its error.
    A run that could judge no trial exits 1."""
    assert result.exit_code == 1 and "no trial could be judged" in result.output, result.output
    assert "Traceback" not in result.output
    (trial,) = trials(out)
    assert trial.signature == INFRA_ERROR and trial.reward is None
    assert trial.events[0]["kind"] == "user"  # what happened until then is stored with it
    assert report(out)["metrics"]["infra_errors"] == 1
    return trial.infra_error


def tool_results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["result"] for e in events if e["kind"] == "tool"]


def agent_texts(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["kind"] == "agent"]


def shape(doc: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """What a report holds, not its values: its sections, its metrics and a scenario's fields."""
    return sorted(doc), sorted(doc["metrics"]), sorted(doc["scenarios"][0])


# --- the examples, end to end ---------------------------------------------------------------------------

EXAMPLE_TASKS = "retail-001,retail-026,retail-033"


def example_run(out: Path, agent: str, run_id: str) -> dict[str, Any]:
    result = run_cli(
        "run", "--agent", agent, "--tasks", EXAMPLE_TASKS, "--personas", "baseline,impatient", "--trials", "2",
        "--out", str(out), "--run-id", run_id, "--json", str(out / f"{run_id}.json"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return report(out, run_id)


@pytest.fixture(scope="module")
def built_in_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return example_run(tmp_path_factory.mktemp("reference"), "reference:perfect", "ref")


def test_the_python_example_runs_through_passhat_run_and_reports_like_a_built_in_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built_in_report: dict[str, Any]
) -> None:
    monkeypatch.chdir(REPO)  # the README's command runs from the repository's root
    doc = example_run(tmp_path, "python:examples.python_agent.retail_agent:create_agent", "py")
    assert shape(doc) == shape(built_in_report)
    assert doc["metrics"]["avg_reward"] == 1.0 and doc["metrics"]["infra_errors"] == 0
    (lookups_and_write,) = {
        tuple(e["name"] for e in t.events if e["kind"] == "tool") for t in trials(tmp_path, "py") if t.task_id == "retail-001"
    }
    assert lookups_and_write == ("find_customer_by_email", "get_order", "cancel_order")  # run inside respond, then answered


def test_the_http_example_runs_through_passhat_run_and_reports_like_a_built_in_agent(
    tmp_path: Path, built_in_report: dict[str, Any]
) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("http_agent_example", REPO / "examples/http_agent/server.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    server = example.make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        doc = example_run(tmp_path, f"http://127.0.0.1:{server.server_address[1]}/agent", "http")
    finally:
        server.shutdown()
        server.server_close()
    assert shape(doc) == shape(built_in_report)
    assert doc["metrics"]["avg_reward"] == 1.0 and doc["metrics"]["infra_errors"] == 0


# --- Python agents defined here -------------------------------------------------------------------------


class Scripted:
    """An external agent whose every session answers with ``respond(conversation, trial)``."""

    def __init__(self, respond: Callable[[list[dict[str, Any]], Any], Any]):
        self._respond = respond
        self.conversations: list[list[dict[str, Any]]] = []

    def new_conversation(self, trial: Any) -> Scripted.Session:
        return Scripted.Session(self, trial)

    @dataclass
    class Session:
        agent: Scripted
        trial: Any

        async def respond(self, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            self.agent.conversations.append(conversation)
            return await self.agent._respond(conversation, self.trial)


def answering(answer: Any) -> Callable[[], Scripted]:
    async def respond(conversation: list[dict[str, Any]], trial: Any) -> Any:
        return answer

    return lambda: Scripted(respond)


def raising(exc: BaseException) -> Callable[[], Scripted]:
    async def respond(conversation: list[dict[str, Any]], trial: Any) -> Any:
        raise exc

    return lambda: Scripted(respond)


async def never_answers(conversation: list[dict[str, Any]], trial: Any) -> Any:
    await asyncio.Event().wait()


garbage_agent = answering("Sure, I will cancel it.")
off_protocol_agent = answering({"message": "Hello", "confidence": 0.9})
unknown_tool_agent = answering({"tool_calls": [{"id": "c1", "name": "launch_rockets", "arguments": {}}]})
bad_arguments_agent = answering({"tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order": ORDER}}]})


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"order_id": ORDER}
    for _ in range(depth):
        value = {"order_id": value}
    return value


huge_integer_agent = answering({"tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": 10**5000}}]})
deep_arguments_agent = answering({"tool_calls": [{"id": "c1", "name": "get_order", "arguments": nested(20_000)}]})
crashing_agent = raising(ValueError("the agent's own bug"))
unavailable_agent = raising(AgentUnavailable("the agent's model API is down"))


def hanging_agent() -> Scripted:
    return Scripted(never_answers)


class Shutdown(BaseException):
    """Not an Exception: what a framework may raise to stop everything."""


exiting_agent = raising(SystemExit(0))
failing_exit_agent = raising(SystemExit(1))
interrupting_agent = raising(KeyboardInterrupt())  # raised by the agent's code, not by a Ctrl-C
shutdown_agent = raising(Shutdown("stop the world"))


def writing_then(then: Callable[[list[dict[str, Any]], Any], Any]) -> Callable[[], Scripted]:
    """An agent that cancels the order at once (a write nobody confirmed), then answers with ``then``."""

    async def respond(conversation: list[dict[str, Any]], trial: Any) -> Any:
        if not any(m["role"] == "tool" for m in conversation):
            return {"tool_calls": [{"id": "w1", "name": "cancel_order", "arguments": CANCEL}]}
        return await then(conversation, trial)

    return lambda: Scripted(respond)


async def unavailable(conversation: list[dict[str, Any]], trial: Any) -> Any:
    raise AgentUnavailable("the agent's model API is down")


unavailable_after_writing_agent = writing_then(unavailable)
hanging_after_writing_agent = writing_then(never_answers)


async def ctrl_c(conversation: list[dict[str, Any]], trial: Any) -> Any:
    signal.raise_signal(signal.SIGINT)  # as a terminal's Ctrl-C arrives while the agent is answering
    await asyncio.Event().wait()


ctrl_c_agent = lambda: Scripted(ctrl_c)  # noqa: E731 - a factory, like the others


class CrashesOnStart:
    def new_conversation(self, trial: Any) -> Any:
        raise KeyError("no session for you")


NOT_CALLABLE = 42


def factory_that_raises() -> Any:
    raise RuntimeError("cannot reach the agent's config")


def factory_without_protocol() -> Any:
    return object()


@pytest.mark.parametrize(
    "factory, seen",
    [
        (
            "garbage_agent",
            "[passhat: the agent's answer does not fit passhat.agent/1: answer: Input should be a valid dictionary",
        ),
        (
            "off_protocol_agent",
            "[passhat: the agent's answer does not fit passhat.agent/1: confidence: Extra inputs are not permitted",
        ),
        ("crashing_agent", "[passhat: the agent raised ValueError at test_external_agents.py:"),
        ("CrashesOnStart", "[passhat: the agent raised KeyError at test_external_agents.py:"),
    ],
)
def test_a_python_agent_that_answers_badly_or_crashes_is_judged_and_fails(tmp_path: Path, factory: str, seen: str) -> None:
    events = judged_failure(tmp_path, run(tmp_path, f"python:test_external_agents:{factory}"))
    assert agent_texts(events) and all(text.startswith(seen) for text in agent_texts(events))


@pytest.mark.parametrize(
    "factory, error_type",
    [
        ("unknown_tool_agent", "unknown_tool"),
        ("bad_arguments_agent", "invalid_arguments"),
        ("huge_integer_agent", "invalid_arguments"),  # past the 4,300 digits Python will print
        ("deep_arguments_agent", "invalid_arguments"),  # past the depth Python's JSON encoder and the stack go
    ],
)
def test_a_python_agents_bad_tool_call_is_an_error_result_it_is_judged_on(tmp_path: Path, factory: str, error_type: str) -> None:
    events = judged_failure(tmp_path, run(tmp_path, f"python:test_external_agents:{factory}"))
    assert tool_results(events) and all(r["error"]["type"] == error_type for r in tool_results(events))


def test_a_python_agent_that_says_it_is_unavailable_is_an_infra_error(tmp_path: Path) -> None:
    assert "the agent's model API is down" in infra_error(
        tmp_path, run(tmp_path, "python:test_external_agents:unavailable_agent")
    )


@pytest.mark.parametrize(
    "factory, raised",
    [
        ("exiting_agent", "SystemExit at test_external_agents.py:"),
        ("failing_exit_agent", "SystemExit at test_external_agents.py:"),
        ("interrupting_agent", "KeyboardInterrupt at test_external_agents.py:"),
        ("shutdown_agent", "Shutdown at test_external_agents.py:"),
    ],
)
def test_a_python_agent_that_raises_what_is_not_an_exception_fails_its_trials_and_the_run_goes_on(
    tmp_path: Path, factory: str, raised: str
) -> None:
    result = run(tmp_path, f"python:test_external_agents:{factory}", "--trials", "2")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    stored = trials(tmp_path)
    assert len(stored) == 2 and {(t.signature, t.reward) for t in stored} == {("agent_error", 0)}
    ends = [t.events[-1] for t in stored]
    assert all(e["text"] == "agent_error" and e["cause"].startswith(f"the agent raised {raised}") for e in ends), ends
    html = tmp_path / "r1.html"
    assert run_cli("report", "r1", "--out", str(tmp_path), "--html", str(html)).exit_code == 0
    assert f"end: agent_error (the agent raised {raised}" in html.read_text("utf-8")


def test_a_ctrl_c_while_a_python_agent_answers_interrupts_the_run(tmp_path: Path) -> None:
    result = run(tmp_path, "python:test_external_agents:ctrl_c_agent")
    assert result.exit_code == 130 and "interrupted: 0 of 1 trials stored" in result.output, result.output
    assert trials(tmp_path) == []


def test_a_keyboard_interrupt_may_be_the_persons_only_where_a_ctrl_c_raises_one() -> None:
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's: a Ctrl-C raises in any code
    assert is_ctrl_c(KeyboardInterrupt()) and not is_ctrl_c(SystemExit(0))
    seen: list[bool] = []
    thread = threading.Thread(target=lambda: seen.append(is_ctrl_c(KeyboardInterrupt())))
    thread.start()
    thread.join()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a worker process
    try:
        seen.append(is_ctrl_c(KeyboardInterrupt()))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [False, False]  # signals reach the main thread only; an ignored one raises nothing


@pytest.mark.parametrize(
    "factory, options, seen",
    [
        ("unavailable_after_writing_agent", (), "the agent's model API is down"),
        ("hanging_after_writing_agent", ("--request-timeout", "0.3"), "no answer and made no tool call within 0.3 s"),
    ],
)
def test_a_python_agent_that_cannot_answer_after_it_wrote_is_judged_on_its_write(
    tmp_path: Path, factory: str, options: tuple[str, ...], seen: str
) -> None:
    result = run(tmp_path, f"python:test_external_agents:{factory}", *options)
    signature, cause, results = cut_short(tmp_path, result, "agent_unavailable")
    assert seen in cause and [r["status"] for r in results] == ["ok"]  # the cancel took effect
    assert signature == "policy_violation"  # judged on it: a cancel before the customer was verified


def test_a_python_agent_that_does_not_answer_in_time_is_an_infra_error(tmp_path: Path) -> None:
    result = run(tmp_path, "python:test_external_agents:hanging_agent", "--request-timeout", "0.2")
    assert "no answer and made no tool call within 0.2 s" in infra_error(tmp_path, result)


# --- tools called from inside respond() -------------------------------------------------------------------

CALLS = [("find_customer_by_email", {"email": EMAIL}), ("get_order", {"order_id": ORDER}), ("cancel_order", CANCEL)]


async def calls_inside(conversation: list[dict[str, Any]], trial: Any) -> Answer:
    """Look up (two calls at once), then write without asking: every call through the trial's callables."""
    if any(m["role"] == "assistant" for m in conversation):
        return {"message": "Goodbye."}
    found, order = await asyncio.gather(*(trial.call_tool(name, args) for name, args in CALLS[:2]))
    cancelled = await trial.functions["cancel_order"](**CANCEL)
    return {"message": f"I saw {found['status']}, {order['status']} and {cancelled['status']}."}


async def calls_in_answers(conversation: list[dict[str, Any]], trial: Any) -> Answer:
    """The same calls, each asked for in an answer and carried out by the orchestrator."""
    answered = sum(1 for m in conversation if m["role"] == "assistant")
    if answered < len(CALLS):
        name, args = CALLS[answered]
        return {"tool_calls": [{"id": f"a{answered}", "name": name, "arguments": args}]}
    results = [json.loads(m["content"])["status"] for m in conversation if m["role"] == "tool"]
    return {"message": f"I saw {', '.join(results[:2])} and {results[2]}."} if answered == len(CALLS) else {"message": "Goodbye."}


in_turn_agent = Scripted(calls_inside)
answering_agent = Scripted(calls_in_answers)


def make_in_turn_agent() -> Scripted:
    return in_turn_agent


def make_answering_agent() -> Scripted:
    return answering_agent


def judged_calls(out: Path, run_id: str) -> tuple[Any, list[tuple[Any, ...]]]:
    (trial,) = trials(out, run_id)
    calls = [(e["name"], e["args"], e["result"], e.get("fault"), e.get("guard")) for e in trial.events if e["kind"] == "tool"]
    return (trial.reward, trial.signature, trial.grade.get("details")), calls


@pytest.mark.parametrize("options", [(), ("--guard", "confirmation"), ("--faults", "transient_error=1.0")])
def test_calls_made_inside_respond_are_carried_out_recorded_and_judged_like_answered_calls(
    tmp_path: Path, options: tuple[str, ...]
) -> None:
    for run_id, factory in (("inside", "make_in_turn_agent"), ("answered", "make_answering_agent")):
        result = run(tmp_path, f"python:test_external_agents:{factory}", *options, run_id=run_id)
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    inside, answered = judged_calls(tmp_path, "inside"), judged_calls(tmp_path, "answered")
    assert inside == answered
    verdict, calls = inside
    assert [c[0] for c in calls] == [name for name, _ in CALLS] and verdict[0] == 0  # a write nobody confirmed
    seen = [c[2]["status"] for c in calls]
    assert agent_texts(trials(tmp_path, "inside")[0].events)[0] == f"I saw {seen[0]}, {seen[1]} and {seen[2]}."
    later = in_turn_agent.conversations[-1]  # the next turn's conversation shows the calls made inside the last
    assert [m["role"] for m in later] == ["user", *["assistant", "tool"] * 3, "assistant", "user"]


# --- HTTP services ----------------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # sent as JSON unless ``raw`` is set
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # never answer (until the test ends)
    hang_up: bool = False  # close the connection without an answer


class Service:
    """An agent service on 127.0.0.1 that answers each POST with ``answer(request)`` and keeps the requests."""

    def __init__(self, answer: Callable[[dict[str, Any]], Reply]):
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/agent"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                service.requests.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                reply = service.answer(service.requests[-1])
                if reply.hang:
                    service._released.wait(30)
                if reply.hang or reply.hang_up:
                    self.close_connection = True
                    return
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                for name, value in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> Service:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()


def always(reply: Reply) -> Callable[[dict[str, Any]], Reply]:
    return lambda request: reply


def cancelling(request: dict[str, Any]) -> Reply:
    """A correct service for retail-001, wording its turns like the example agent."""
    conversation = request["conversation"]
    said = " ".join(m["content"] for m in conversation if m["role"] == "user")
    asked = [m for m in conversation if m["role"] == "assistant"]
    if EMAIL not in said:
        return Reply(body={"message": "To verify your identity, what is the email address on your account?"})
    if not any(m.get("tool_calls") for m in asked):
        calls = [{"id": f"c{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(CALLS[:2])]
        return Reply(body={"tool_calls": calls})
    if "no longer needed" not in said:
        return Reply(body={"message": 'What is the reason for the cancellation: "no longer needed" or "ordered by mistake"?'})
    if not any("Shall I go ahead" in (m["content"] or "") for m in asked):
        return Reply(body={"message": f'I can cancel order {ORDER} with the reason "no longer needed". Shall I go ahead?'})
    if not any(c["function"]["name"] == "cancel_order" for m in asked for c in m.get("tool_calls", ())):
        return Reply(body={"tool_calls": [{"id": "c9", "name": "cancel_order", "arguments": json.dumps(CANCEL)}]})
    return Reply(body={"protocol": PROTOCOL, "message": f"Order {ORDER} has been cancelled. Anything else?"})


def test_an_agent_service_is_sent_the_protocol_and_its_trial_is_judged(tmp_path: Path) -> None:
    with Service(cancelling) as service:
        result = run(tmp_path, service.url, "--max-turns", "10")
    assert result.exit_code == 0, result.output
    assert report(tmp_path)["metrics"]["avg_reward"] == 1.0
    first, last = service.requests[0], service.requests[-1]
    assert set(first) == {"protocol", "trial", "conversation", "tools"} and first["protocol"] == "passhat.agent/1"
    assert len(first["trial"]["id"]) == 32 and isinstance(first["trial"]["seed"], int)
    assert {r["trial"]["id"] for r in service.requests} == {first["trial"]["id"]}  # one trial, one id
    assert first["conversation"] == [{"role": "user", "content": stored_events(tmp_path)[0]["text"]}]
    assert {t["type"] for t in first["tools"]} == {"function"}
    assert {"cancel_order", "get_order"} <= {t["function"]["name"] for t in first["tools"]}
    calls = next(m for m in last["conversation"] if m.get("tool_calls"))
    assert calls["tool_calls"][0] == {
        "id": "c0",
        "type": "function",
        "function": {"name": CALLS[0][0], "arguments": json.dumps(CALLS[0][1])},
    }
    assert {"role": "tool", "tool_call_id": "c0", "content": '{"status": "ok", "data": "C-167498"}'} in last["conversation"]


@pytest.mark.parametrize(
    "reply, seen",
    [
        (Reply(raw=b"<html>Sure, I'll cancel it</html>"), "answer: Invalid JSON"),
        (Reply(body={"message": 3}), "message: Input should be a valid string"),
        (Reply(body={"message": "Hi", "tool_calls": [], "confidence": 1}), "confidence: Extra inputs are not permitted"),
        (Reply(body={"protocol": "passhat.agent/2", "message": "Hi"}), "protocol: Input should be 'passhat.agent/1'"),
        (Reply(raw=b'{"message": "' + b"x" * (8 * 1024 * 1024) + b'"}'), "the agent's answer is over 8,388,608 bytes"),
    ],
)
def test_an_unreadable_or_off_protocol_answer_is_the_agents_turn_with_a_note_and_judged(
    tmp_path: Path, reply: Reply, seen: str
) -> None:
    with Service(always(reply)) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url))
    assert agent_texts(events) and all(text.startswith("[passhat: ") and seen in text for text in agent_texts(events))


@pytest.mark.parametrize(
    "call, error_type",
    [
        ({"name": "launch_rockets", "arguments": {}}, "unknown_tool"),
        ({"name": "get_order", "arguments": {"order": ORDER}}, "invalid_arguments"),
        ({"name": "get_order", "arguments": '{"order_id": '}, "invalid_arguments"),
    ],
)
def test_a_services_bad_tool_call_is_an_error_result_it_is_judged_on(tmp_path: Path, call: Answer, error_type: str) -> None:
    with Service(always(Reply(body={"tool_calls": [call]}))) as service:
        events = judged_failure(tmp_path, run(tmp_path, service.url))
    assert tool_results(events) and all(r["error"]["type"] == error_type for r in tool_results(events))


@pytest.mark.parametrize(
    "reply, tries, error",
    [
        (Reply(500, {"error": "boom"}), 3, "HTTP 500"),
        (Reply(hang_up=True), 3, "RemoteProtocolError"),
        (Reply(hang=True), 3, "no answer within 0.3 s"),
    ],
)
def test_a_service_that_cannot_answer_makes_an_infra_error_after_the_retries(
    tmp_path: Path, reply: Reply, tries: int, error: str
) -> None:
    with Service(always(reply)) as service:
        stored = infra_error(tmp_path, run(tmp_path, service.url, "--max-retries", "2", "--request-timeout", "0.3"))
    assert error in stored and len(service.requests) == tries


@pytest.mark.parametrize(
    "reply, seen",
    [
        (Reply(404, {"error": "no such path"}), 'HTTP 404: {"error": "no such path"}'),
        (Reply(400, {"error": "bad request"}), "HTTP 400"),
        (Reply(401, {"error": "who are you"}), "HTTP 401"),
        (Reply(302, headers={"location": "/elsewhere"}), "HTTP 302"),
    ],
)
def test_a_service_that_refuses_the_request_fails_its_trial_not_retried(tmp_path: Path, reply: Reply, seen: str) -> None:
    with Service(always(reply)) as service:
        signature, cause, _ = cut_short(tmp_path, run(tmp_path, service.url, "--max-retries", "2"), "agent_error")
    assert (
        signature == "agent_error"
        and cause.startswith(f"the agent service at {service.url} refused passhat's request: ")
        and seen in cause
    )
    assert len(service.requests) == 1


def writing_first(reply: Reply) -> Callable[[dict[str, Any]], Reply]:
    """A service that cancels the order at once (a write nobody confirmed), then answers ``reply``."""
    return lambda request: (
        reply
        if request["conversation"][-1]["role"] == "tool"
        else Reply(body={"tool_calls": [{"id": "w1", "name": "cancel_order", "arguments": CANCEL}]})
    )


@pytest.mark.parametrize(
    "reply, seen",
    [
        (Reply(500, {"error": "boom"}), "HTTP 500"),
        (Reply(hang_up=True), "RemoteProtocolError"),
        (Reply(hang=True), "no answer within 0.3 s"),
        (Reply(404, {"error": "gone"}), "HTTP 404"),
    ],
)
def test_a_service_that_fails_after_it_wrote_is_judged_on_its_write(tmp_path: Path, reply: Reply, seen: str) -> None:
    with Service(writing_first(reply)) as service:
        result = run(tmp_path, service.url, "--max-retries", "1", "--request-timeout", "0.3")
    ending = "agent_error" if reply.status == 404 else "agent_unavailable"
    signature, cause, results = cut_short(tmp_path, result, ending)
    assert seen in cause and [r["status"] for r in results] == ["ok"]  # the cancel took effect
    assert signature == "policy_violation"  # judged on it: a cancel before the customer was verified


def test_an_infra_error_is_run_again_on_resume_and_then_judged(tmp_path: Path) -> None:
    with Service(always(Reply(503, {"error": "deploying"}))) as service:
        infra_error(tmp_path, run(tmp_path, service.url, "--max-retries", "0"))
        service.answer = cancelling
        result = run_cli("run", "--resume", "r1", "--out", str(tmp_path), "--json", str(tmp_path / "r1.json"))
    assert result.exit_code == 0, result.output
    (trial,) = trials(tmp_path)
    assert trial.signature != INFRA_ERROR and trial.reward is not None


def test_a_rate_limited_service_is_retried_after_the_wait_it_asks_for(tmp_path: Path) -> None:
    replies = iter([Reply(429, {"error": "slow down"}, headers={"retry-after": "0"})])
    with Service(lambda request: next(replies, None) or cancelling(request)) as service:
        result = run(tmp_path, service.url, "--max-turns", "10", "--max-retries", "1")
    assert result.exit_code == 0, result.output
    assert report(tmp_path)["metrics"]["avg_reward"] == 1.0


def test_the_wait_before_a_retry_is_at_least_what_the_server_asked_for_within_the_longest_wait() -> None:
    policy = RetryPolicy(retries=3, base_delay=0.0, max_delay=60.0)
    assert policy.delay(0, asked=2.5) == 2.5
    assert policy.delay(0, asked=3600) == 60.0
    assert policy.delay(0) == 0.0


# --- bad specs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, said",
    [
        ("python:no_such_module_for_passhat:create", "cannot import module 'no_such_module_for_passhat'"),
        ("python:test_external_agents", "names no factory"),
        ("python:test_external_agents:no_such_factory", "has no 'no_such_factory'"),
        ("python:test_external_agents:NOT_CALLABLE", "'NOT_CALLABLE' is a int, not a callable"),
        ("python:test_external_agents:factory_that_raises", "the factory raised RuntimeError"),
        ("python:test_external_agents:factory_without_protocol", "has no new_conversation(trial) method"),
        ("http://", "it has no host"),
        ("http://127.0.0.1:99999/agent", "Port out of range"),
        ("http://user:secret@127.0.0.1:8000/agent", "credentials or a query string"),
        ("https://127.0.0.1:8000/agent?token=abc", "credentials or a query string"),
    ],
)
def test_a_bad_agent_spec_is_one_paragraph_and_exit_2(tmp_path: Path, spec: str, said: str) -> None:
    result = run(tmp_path, spec)
    assert result.exit_code == 2, result.output
    assert "--agent" in result.output and said in " ".join(result.output.split())
    assert "Traceback" not in result.output


@pytest.fixture(autouse=True)
def fresh_scripted_agents() -> Iterator[None]:
    """The shared in-turn agents record the conversations they were shown: each test starts them empty."""
    for agent in (in_turn_agent, answering_agent):
        agent.conversations.clear()
    yield
