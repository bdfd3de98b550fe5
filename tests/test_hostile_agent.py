"""Whatever an agent sends is judged: no model output makes its own trial unjudgeable.

An agent's garbage — numbers Python will not read, nesting past its stack, characters that are not
text, arguments that are not an object, tools that do not exist — is an error result the agent sees
or text stored visibly escaped, and the trial is judged (reward 0 unless the agent recovers). A
customer model's garbage ends its trial as a user simulator error. Only the endpoint's own failures
are infra errors. Through a real OpenAI-compatible server on 127.0.0.1 and the real SDK, and, for
arbitrary agent turns, through the orchestrator with a scripted agent.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_fake_server import FakeOpenAI, Reply, call, say, say_raw
from test_llm_agent import ASK_EMAIL, report, run_cli, stored_events
from test_llm_user import customer, user_run

from passhat.agents.base import AgentTurn, ToolCall
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.domains.toolkit import ToolFailure
from passhat.env import tool_registry
from passhat.env.tools import MAX_ARGUMENT_DEPTH, argument_problem, validate_args
from passhat.guard import GUARDS, AuditLog
from passhat.llm import ModelHub
from passhat.run.trial import TrialSpec, run_trial
from passhat.run_config import RunConfig
from passhat.store import ResultStore, TrialRecord
from passhat.trajectory import INFRA_ERROR, USER_SIMULATOR_ERROR, Event
from passhat.untrusted import add_secret, escape_text, storable

RETAIL = load_domain("retail")
TOOLS = tool_registry(RETAIL)
GIVE_UP = "I am sorry, I cannot help with that. Goodbye."
HUGE = "9" * 5000
DEEP = "[" * 10_000 + "]" * 10_000


def hostile_call(arguments: str) -> Reply:
    return say(None, call("get_order", arguments, "h1"))


# what the agent model sends -> the error type the agent must be shown for call h1
HOSTILE_CALLS = {
    "a 5000-digit number": (hostile_call('{"order_id": ' + HUGE + "}"), "invalid_arguments"),
    "10,000-deep nesting": (hostile_call('{"order_id": ' + DEEP + "}"), "invalid_arguments"),
    "a lone surrogate as a JSON escape": (hostile_call('{"order_id": "\\ud800"}'), "invalid_arguments"),
    "a lone surrogate in the arguments text": (hostile_call('{"order_id": "\ud800"}'), "invalid_arguments"),
    "a NUL": (hostile_call('{"order_id": "#R3042198\\u0000"}'), "invalid_arguments"),
    "NaN": (hostile_call('{"order_id": NaN}'), "invalid_arguments"),
    "a list": (hostile_call('["#R3042198"]'), "invalid_arguments"),
    "a string": (hostile_call('"#R3042198"'), "invalid_arguments"),
    "an unknown tool": (say(None, call("drop_all_tables", "{}", "h1")), "unknown_tool"),
    "no arguments field": (say(None, {"id": "h1", "type": "function", "function": {"name": "get_order"}}), "invalid_arguments"),
}
# what the agent model writes to the customer -> what the stored transcript shows
HOSTILE_TEXTS = {
    "a lone surrogate": (say("Let me look \ud800 into it."), "Let me look \\ud800 into it."),
    "a NUL": (say("Let me look\x00 into it."), "Let me look\\u0000 into it."),
    "an answer holding a 5000-digit number": (
        say_raw(
            '{"role": "assistant", "content": null, "tool_calls": [{"id": "h1", "type": "function", '
            '"function": {"name": "get_order", "arguments": {"order_id": ' + HUGE + "}}}]}"
        ),
        "cannot be read",
    ),
    "an answer nested 10,000 deep": (say_raw('{"role": "assistant", "content": ' + DEEP + "}"), "cannot be read"),
}


def hostile_run(tmp_path: Path, hostile: Reply) -> tuple[FakeOpenAI, dict[str, Any]]:
    """retail-001 with an agent that asks for the email, sends ``hostile``, then gives up; the run's
    server and its stored trial."""
    with FakeOpenAI([say(ASK_EMAIL), hostile], then=lambda _: say(GIVE_UP)) as server:
        result = run_cli(
            "run", "--agent", "llm:openai/gpt-4.1", "--agent-base-url", server.url, "--tasks", "retail-001",
            "--personas", "baseline", "--trials", "1", "--max-turns", "3", "--max-retries", "0",
            "--out", str(tmp_path), "--run-id", "r1", "--json", str(tmp_path / "r1.json"),
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    with ResultStore.open(tmp_path / "r1") as store:
        (trial,) = store.trials()
    return server, {"reward": trial.reward, "signature": trial.signature, "events": trial.events}


def assert_judged_as_the_agents_failure(tmp_path: Path, trial: dict[str, Any]) -> str:
    """The trial is judged, reward 0 with an agent failure signature, and both reports render it;
    returns the HTML report."""
    assert trial["reward"] == 0
    assert trial["signature"] not in (None, INFRA_ERROR, USER_SIMULATOR_ERROR)
    metrics = report(tmp_path)["metrics"]
    assert (metrics["infra_errors"], metrics["user_simulator_errors"], metrics["avg_reward"]) == (0, 0, 0.0)
    result = run_cli(
        "report", "r1", "--out", str(tmp_path), "--html", str(tmp_path / "r1.html"), "--json", str(tmp_path / "again.json")
    )
    assert result.exit_code == 0, result.output
    json.loads((tmp_path / "again.json").read_text("utf-8"), parse_constant=pytest.fail)  # strict JSON
    return (tmp_path / "r1.html").read_bytes().decode("utf-8")  # strict UTF-8: no lone surrogate got through


@pytest.mark.parametrize("case", list(HOSTILE_CALLS))
def test_a_hostile_tool_call_is_an_error_result_the_agent_sees_and_the_trial_is_judged(tmp_path: Path, case: str) -> None:
    hostile, error_type = HOSTILE_CALLS[case]
    server, trial = hostile_run(tmp_path, hostile)
    (seen,) = [m for m in server.requests[2]["messages"] if m.get("tool_call_id") == "h1"]
    assert json.loads(seen["content"])["error"]["type"] == error_type
    (stored,) = [e for e in trial["events"] if e.get("call_id") == "h1"]
    assert (stored["result"]["status"], stored["result"]["error"]["type"]) == ("error", error_type)
    html = assert_judged_as_the_agents_failure(tmp_path, trial)
    assert error_type in html


@pytest.mark.parametrize("case", list(HOSTILE_TEXTS))
def test_hostile_text_is_stored_visibly_escaped_and_the_trial_is_judged(tmp_path: Path, case: str) -> None:
    hostile, shown = HOSTILE_TEXTS[case]
    _, trial = hostile_run(tmp_path, hostile)
    said = [e["text"] for e in trial["events"] if e["kind"] == "agent"]
    assert any(shown in text for text in said), said
    html = assert_judged_as_the_agents_failure(tmp_path, trial)
    assert shown in html


def test_a_call_the_agent_fixes_after_the_error_still_counts(tmp_path: Path) -> None:
    """The legitimate twin of the cases above: the same tool called well is carried out."""
    _, trial = hostile_run(tmp_path, hostile_call('{"order_id": "#R3042198"}'))
    (stored,) = [e for e in trial["events"] if e.get("call_id") == "h1"]
    assert stored["result"]["status"] == "ok"


def test_an_answer_that_is_not_json_is_the_endpoints_failure(tmp_path: Path) -> None:
    """The line between the two: a body that is not JSON at all never came from the model."""
    with FakeOpenAI([say(ASK_EMAIL)], then=lambda _: Reply(200, raw="<html>bad gateway</html>")) as server:
        result = run_cli(
            "run", "--agent", "llm:openai/gpt-4.1", "--agent-base-url", server.url, "--tasks", "retail-001",
            "--personas", "baseline", "--trials", "1", "--max-retries", "1", "--retry-backoff", "0.001",
            "--out", str(tmp_path), "--run-id", "r1", "--json", str(tmp_path / "r1.json"),
        )  # fmt: skip
    assert result.exit_code == 1
    assert report(tmp_path)["metrics"]["infra_errors"] == 1
    assert len(server.requests) == 3  # the good answer, then the bad one tried twice


# -- the customer's model ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("garbage", "why"),
    [(say("Hi, cancel \ud800 please."), "\\ud800, which is not text"), (say("Hi\x00"), "\\u0000, which is not text"),
     (say_raw('{"role": "assistant", "content": ' + HUGE + "}"), "cannot be read"),
     (say_raw('{"role": "assistant", "content": ' + DEEP + "}"), "cannot be read")],
)  # fmt: skip
def test_a_customer_models_garbage_is_a_user_simulator_error(tmp_path: Path, garbage: Reply, why: str) -> None:
    with FakeOpenAI([garbage], then=customer) as server:
        result = user_run(server, tmp_path)
    assert result.exit_code == 1  # nothing could be judged
    m = report(tmp_path)["metrics"]
    assert (m["user_simulator_errors"], m["infra_errors"]) == (1, 0)
    (opening,) = [e["text"] for e in stored_events(tmp_path) if e["kind"] == "user"]
    assert why in opening


def test_a_customer_reading_an_agents_garbage_is_unaffected(tmp_path: Path) -> None:
    """An agent's lone surrogate reaches the customer model escaped; the customer plays on."""

    class Garbling:
        async def act(self, events: list[Event]) -> AgentTurn:
            return AgentTurn(text="Hello \ud800\x00, how can I help?")

    async def go(server: FakeOpenAI) -> list[Event]:
        config = RunConfig(personas=[], tasks=[], user="llm:openai/gpt-4.1-mini", user_base_url=server.url)
        hub = ModelHub.from_config(config)
        try:
            spec = TrialSpec(RETAIL.tasks["retail-001"], PERSONAS["baseline"], 0, 1)
            return (await run_trial(RETAIL, spec, lambda setup: Garbling(), resolve_user(config.user, hub), max_turns=2)).events
        finally:
            await hub.aclose()

    with FakeOpenAI(then=customer) as server:
        events = asyncio.run(go(server))
    assert "Hello \\ud800\\u0000, how can I help?" in server.requests[1]["messages"][-1]["content"]
    assert events[-1].text == "max_turns"


# -- what may be stored -----------------------------------------------------------------------------

SECRET = "passhat-test-secret-5f1c9a7e"


def test_the_store_keeps_hostile_values_readable_and_no_secret_even_in_its_wal(tmp_path: Path) -> None:
    add_secret(SECRET)
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    events = [
        {"kind": "agent", "text": f"a\ud800b\x00c key={SECRET}"},
        {"kind": "tool", "name": "get_order", "args": {"n": 10**5000, "x": float("nan"), "deep": deep, SECRET: 1},
         "result": {"status": "error"}},
    ]  # fmt: skip
    record = TrialRecord("t", "p", 0, 1, 0, "max_turns", None, events, {"details": [float("inf")]}, 1.0, 2.0, {"echo": SECRET})
    with ResultStore.create(tmp_path, "r", {}) as store:
        store.record(record)
        written = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
        (stored,) = store.trials()
    assert "results.sqlite-wal" in written
    assert all(SECRET.encode() not in data for data in written.values())
    text, tool = stored.events
    assert text["text"] == "a\\ud800b\\u0000c key=[redacted]"
    assert tool["args"]["n"].startswith("[an integer too long to store")
    assert tool["args"]["x"] == "nan" and stored.grade == {"details": ["inf"]}
    assert "[redacted]" in tool["args"] and stored.usage == {"echo": "[redacted]"}
    assert "nested deeper than" in json.dumps(tool["args"]["deep"])


@pytest.mark.parametrize(
    "value",
    ["tab\there\nnew line\r", "😀 émoji", json.loads('"\\ud83d\\ude00"'), 2**63 - 1,
     -(2**63), 1.5, None, True, {"a": [1, {"b": "c"}]}],
)  # fmt: skip
def test_legitimate_values_are_stored_and_taken_as_they_are(value: Any) -> None:
    assert storable(value) == value
    assert argument_problem(value) is None
    if isinstance(value, str):
        assert escape_text(value) == value


@pytest.mark.parametrize(
    ("value", "problem"),
    [({"order_id": "\ud800"}, "order_id holds \\ud800"), ({"order_id": "a\x00"}, "order_id holds \\u0000"),
     ({"order_id": "\x1b[2J"}, "order_id holds \\u001b"), ({"n": 2**63}, "n is an integer outside the 64-bit range"),
     ({"n": -(2**63) - 1}, "outside the 64-bit range"), ({"x": float("nan")}, "x is not a finite number"),
     ({"ids": ["a", float("inf")]}, "ids[1] is not a finite number"), ({"a\ud800": 1}, "a key of arguments holds"),
     ({1: "x"}, "a key that is not a string"), ({"b": b"bytes"}, "b is a bytes, not a JSON value")],
)  # fmt: skip
def test_arguments_no_tool_can_take_are_refused_with_what_is_wrong(value: Any, problem: str) -> None:
    assert problem in (argument_problem(value) or "")
    with pytest.raises(ToolFailure, match="invalid arguments for get_order") as refused:
        validate_args(TOOLS["get_order"], value)
    assert refused.value.type == "invalid_arguments"


def test_nesting_is_refused_past_its_bound_only() -> None:
    def nested(depth: int) -> Any:
        value: Any = "x"
        for _ in range(depth):
            value = [value]
        return value

    assert argument_problem(nested(MAX_ARGUMENT_DEPTH)) is None
    assert argument_problem(nested(MAX_ARGUMENT_DEPTH + 1)) == f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
    assert argument_problem(nested(100_000)) == f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"


def test_validation_cannot_coerce_its_way_past_the_check() -> None:
    from pydantic import create_model

    from passhat.env.tools import ToolSpec

    model = create_model("amount_args", amount=(float, ...))
    spec = ToolSpec("pay", lambda db, amount: amount, TOOLS["get_order"].meta, model, {})
    assert validate_args(spec, {"amount": "12.5"}) == {"amount": 12.5}
    with pytest.raises(ToolFailure, match="amount is not a finite number"):
        validate_args(spec, {"amount": "1e999"})  # pydantic reads the string as an infinite float


# -- arbitrary agent turns --------------------------------------------------------------------------


def _nested(depth: int) -> Any:
    value: Any = {"order_id": "#R3042198"}
    for _ in range(depth):
        value = {"order_id": value}
    return value


ANY_CHAR = st.characters(exclude_categories=())  # surrogates, NUL and every control character included
TEXT = st.text(ANY_CHAR, max_size=20)
ODD_NUMBERS = st.sampled_from([10**5000, -(10**30), 2**63, float("nan"), float("-inf"), 1e308])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
PARAMETERS = sorted({p for spec in TOOLS.values() for p in spec.schema["parameters"].get("properties", {})})
ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(PARAMETERS) | TEXT, JSON_VALUES | ODD_NUMBERS | TEXT, max_size=4),
    JSON_VALUES,
    st.sampled_from([40, 1000, 10_000]).map(_nested),
    JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)),  # JSON text, surrogates and all
    TEXT,  # text that is mostly not JSON
    st.sampled_from(['{"order_id": ' + HUGE + "}", DEEP, '{"order_id": NaN}', '"\\ud800"', '{"order_id": "\\u0000"}', ""]),
)
CALLS = st.builds(ToolCall, id=TEXT, name=st.sampled_from(sorted(TOOLS)) | TEXT, arguments=ARGUMENTS)
TURNS = st.lists(
    st.builds(AgentTurn, text=st.none() | TEXT, tool_calls=st.lists(CALLS, max_size=3).map(tuple)), min_size=1, max_size=5
)


class ScriptedAgent:
    """Plays the given turns, then says goodbye."""

    def __init__(self, turns: list[AgentTurn]):
        self._turns = iter(turns)

    async def act(self, events: list[Event]) -> AgentTurn:
        return next(self._turns, AgentTurn(text=GIVE_UP))


FAULTS = {"transient_error": 0.1, "lost_response": 0.2, "stale_read": 0.1, "contradiction": 0.1, "wrong_value": 0.1}


@settings(max_examples=80, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    task=st.sampled_from(list(RETAIL.tasks.values())), persona=st.sampled_from(list(PERSONAS.values())),
    turns=TURNS, seed=st.integers(0, 2**32), guards=st.sampled_from([(), GUARDS]), faults=st.sampled_from([{}, FAULTS]),
)  # fmt: skip
def test_no_agent_turn_makes_a_trial_unjudgeable_and_none_passes(
    task: Any, persona: Any, turns: list[AgentTurn], seed: int, guards: tuple[str, ...], faults: dict[str, float]
) -> None:
    spec = TrialSpec(task, persona, 0, seed)
    agent, customer = (lambda setup: ScriptedAgent(turns)), resolve_user("scripted")
    out = asyncio.run(run_trial(RETAIL, spec, agent, customer, max_turns=3, faults=faults, guards=guards))
    assert out.grade.reward == 0
    assert out.grade.signature not in (None, INFRA_ERROR, USER_SIMULATOR_ERROR)
    record = TrialRecord(
        task.id, persona.name, 0, seed, out.grade.reward, out.grade.signature, None,
        [e.to_dict() for e in out.events], out.grade.to_dict(), 0.0, 1.0,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder, ResultStore.create(Path(folder), "r", {}) as store:
        store.record(record)
        AuditLog(Path(folder)).extend(out.audit)  # what the runner does after storing the trial
        (stored,) = store.trials()
    assert json.dumps(stored.events, ensure_ascii=False).encode("utf-8")  # strict UTF-8: nothing unstorable left
