"""What one agent answer may carry: calls past the count or over the argument size get an error result
without running, an over-long message is cut, and what is stored of each is bounded and says its size.

A model once answered with hundreds of parallel calls of megabyte arguments, and a 20-trial run took 17
minutes and 8.4 GB. The bounds are generous: calls and messages of a legitimate agent pass untouched.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from llm_fake_server import FakeOpenAI, call, say
from test_llm_agent import llm_run, run_cli, stored_events

from passhat.agents.base import AgentTurn, ToolCall
from passhat.cli.run import run
from passhat.config_file import load_config_file
from passhat.customers import resolve_user
from passhat.customers.base import UserTurn
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.errors import UserError
from passhat.run.seeding import trial_seed
from passhat.run.trial import HEAD_BYTES, TrialOutput, TrialSpec, TurnBounds, run_trial
from passhat.run_config import RunConfig
from passhat.store import ResultStore, TrialRecord
from passhat.trajectory import INFRA_ERROR, USER_SIMULATOR_ERROR, Event
from passhat.untrusted import add_secret

RETAIL = load_domain("retail")
TASK = RETAIL.tasks["retail-001"]
MEGABYTE_ARGUMENTS = json.dumps({"order_id": "#R" + "7" * 1_000_000})
GOODBYE = "I am sorry, I cannot help with that. Goodbye."


class Scripted:
    """Answers with each of ``turns`` in order, then says goodbye."""

    def __init__(self, turns: list[AgentTurn]):
        self._turns = iter(turns)

    async def act(self, events: list[Event]) -> AgentTurn:
        return next(self._turns, AgentTurn(text=GOODBYE))


class Listening:
    """The scripted customer, keeping every message it was given."""

    def __init__(self, inner: Any):
        self.inner, self.heard = inner, []

    async def respond(self, agent_text: str | None) -> UserTurn:
        self.heard.append(agent_text)
        return await self.inner.respond(agent_text)


def trial(turns: list[AgentTurn], bounds: TurnBounds | None = None, max_turns: int = 3) -> tuple[TrialOutput, Listening]:
    spec = TrialSpec(TASK, PERSONAS["baseline"], 0, trial_seed(0, TASK.id, "baseline", 0))
    customers: list[Listening] = []

    def customer(*args: Any) -> Listening:
        customers.append(Listening(resolve_user("scripted")(*args)))
        return customers[-1]

    out = asyncio.run(
        run_trial(RETAIL, spec, lambda setup: Scripted(turns), customer, max_turns=max_turns, bounds=bounds or TurnBounds())
    )
    return out, customers[0]


def stored(out: TrialOutput) -> list[dict[str, Any]]:
    """The trial's events as the results store keeps them."""
    record = TrialRecord(
        TASK.id,
        "baseline",
        0,
        0,
        out.grade.reward,
        out.grade.signature,
        None,
        [e.to_dict() for e in out.events],
        out.grade.to_dict(),
        0.0,
        1.0,
    )
    with tempfile.TemporaryDirectory() as folder, ResultStore.create(Path(folder), "r", {}) as store:
        store.record(record)
        (trial_,) = store.trials()
    return trial_.events


def tool_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "tool"]


def error_type(event: dict[str, Any]) -> str | None:
    return event["result"].get("error", {}).get("type")


def test_five_hundred_calls_of_a_megabyte_each_are_refused_unrun_and_stored_small() -> None:
    """Every answer of this agent is 500 calls of 1 MB arguments: none runs, the trial is judged as the
    agent's failure, and the store keeps about a kilobyte per call, not a megabyte."""
    burst = AgentTurn("Let me check.", tuple(ToolCall(f"c{i}", "get_order", MEGABYTE_ARGUMENTS) for i in range(500)))
    out, _ = trial([burst, burst, burst])
    assert out.grade.reward == 0 and out.grade.signature not in (None, INFRA_ERROR, USER_SIMULATOR_ERROR)
    events = stored(out)
    calls = tool_events(events)
    assert len(calls) == 3 * 500
    per_answer = [error_type(e) for e in calls[:500]]
    assert per_answer == ["arguments_too_large"] * 32 + ["too_many_tool_calls"] * 468
    assert all(e["result"]["error"]["retryable"] is False for e in calls)
    for event in calls:
        assert event["args"]["truncated"] is True and event["args"]["bytes"] == len(MEGABYTE_ARGUMENTS)
        assert MEGABYTE_ARGUMENTS.startswith(event["args"]["head"]) and len(event["args"]["head"]) == HEAD_BYTES
    assert f"{len(MEGABYTE_ARGUMENTS):,} bytes" in calls[0]["result"]["error"]["message"]
    assert len(json.dumps(events)) < 1500 * 1024  # 1,500 megabyte calls, stored in about a kilobyte each


def test_calls_within_the_bounds_run_and_are_stored_whole() -> None:
    """The legitimate twin: as many calls as the bound allows, with arguments up to its size, all run."""
    order = {"order_id": "#R3042198"}
    size = len(json.dumps(order))
    answer = AgentTurn(None, tuple(ToolCall(f"c{i}", "get_order", json.dumps(order)) for i in range(4)))
    out, _ = trial([answer], TurnBounds(tool_calls=4, argument_bytes=size))
    calls = tool_events(stored(out))
    assert [e["result"]["status"] for e in calls] == ["ok"] * 4 and all(e["args"] == order for e in calls)


def test_a_call_one_byte_over_the_argument_bound_is_not_run() -> None:
    arguments = json.dumps({"order_id": "#R3042198"})
    out, _ = trial([AgentTurn(None, (ToolCall("c1", "get_order", arguments),))], TurnBounds(argument_bytes=len(arguments) - 1))
    (event,) = tool_events(stored(out))
    assert error_type(event) == "arguments_too_large"
    assert event["args"] == arguments  # small enough to keep whole


def test_the_bound_counts_bytes_of_arguments_a_python_agent_passes_as_a_dict() -> None:
    arguments = {"order_id": "#R" + "é" * 100}  # 2 bytes a character in UTF-8
    bound = len(json.dumps(arguments, ensure_ascii=False).encode()) - 1
    out, _ = trial([AgentTurn(None, (ToolCall("c1", "get_order", arguments),))], TurnBounds(argument_bytes=bound))
    (event,) = tool_events(stored(out))
    assert error_type(event) == "arguments_too_large" and f"are {bound + 1:,} bytes" in event["result"]["error"]["message"]
    assert event["args"] == arguments


def test_an_over_long_message_is_cut_with_its_size_and_the_customer_hears_the_cut_text() -> None:
    out, customer = trial([AgentTurn("Hello! " + "blah " * 300_000)])
    (said, *_) = [e["text"] for e in stored(out) if e["kind"] == "agent"]
    assert said.startswith("Hello! blah") and len(said.encode()) < 64 * 1024 + 200
    assert "it had 1,500,007 bytes" in said
    assert customer.heard[1] == said


def test_a_message_at_the_bound_is_left_whole() -> None:
    text = "Could you tell me the email address on your account, please?"
    out, customer = trial([AgentTurn(text)], TurnBounds(message_bytes=len(text)))
    assert next(e["text"] for e in stored(out) if e["kind"] == "agent") == text and customer.heard[1] == text


def test_a_cut_never_splits_a_character_nor_keeps_half_a_secret() -> None:
    secret = "sk-test-turn-bounds-4f9a1c"
    add_secret(secret)
    for shift in range(len(secret)):  # the cut falls at every place inside the secret
        text = "€" * 10 + "x" * shift + secret + "y" * 100
        out, _ = trial([AgentTurn(text)], TurnBounds(message_bytes=30 + len(secret) // 2))
        said = next(e["text"] for e in stored(out) if e["kind"] == "agent")
        head = said.split("\n[passhat cut")[0]
        assert len(head.encode()) <= 30 + len(secret) // 2 and head.startswith("€" * 10)
        assert not any(secret[:n] in head for n in range(8, len(secret) + 1)), head


def test_the_run_flags_reach_the_trial_through_a_model_agent(tmp_path: Path) -> None:
    """`passhat run --max-tool-calls-per-turn 2`: the model's third parallel call gets the error, and it sees it."""
    three = say(None, *(call("get_order", {"order_id": "#R3042198"}, f"c{i}") for i in range(3)))
    with FakeOpenAI([three], then=lambda _: say(GOODBYE)) as server:
        result = llm_run(server, tmp_path, "--max-tool-calls-per-turn", "2", "--max-turns", "2")
        seen = [m for m in server.requests[1]["messages"] if m.get("role") == "tool"]
    assert result.exit_code == 0, result.output
    calls = tool_events(stored_events(tmp_path))
    assert [e["result"]["status"] for e in calls] == ["ok", "ok", "error"] and error_type(calls[2]) == "too_many_tool_calls"
    assert json.loads(seen[2]["content"])["error"]["type"] == "too_many_tool_calls"


def test_the_bounds_default_generously_and_the_config_file_takes_them(tmp_path: Path) -> None:
    config = RunConfig(personas=["baseline"], tasks=["retail-001"])
    assert (config.max_tool_calls_per_turn, config.max_argument_bytes, config.max_message_bytes) == (32, 65536, 65536)
    assert TurnBounds() == TurnBounds(32, 65536, 65536)
    (tmp_path / "eval.toml").write_text("max-tool-calls-per-turn = 8\nmax_message_bytes = 4096\n")
    values, _ = load_config_file(tmp_path / "eval.toml", run.params)
    assert values == {"max_tool_calls_per_turn": 8, "max_message_bytes": 4096}
    (tmp_path / "bad.toml").write_text("max-argument-bytes = 0\n")
    with pytest.raises(UserError, match="max-argument-bytes"):
        load_config_file(tmp_path / "bad.toml", run.params)


@pytest.mark.parametrize("flag", ["--max-tool-calls-per-turn", "--max-argument-bytes", "--max-message-bytes"])
def test_a_bound_below_one_is_a_usage_error(tmp_path: Path, flag: str) -> None:
    result = run_cli("run", "--tasks", "retail-001", "--trials", "1", "--out", str(tmp_path), flag, "0")
    assert result.exit_code == 2 and flag in result.output and not (tmp_path / "r1").exists()
