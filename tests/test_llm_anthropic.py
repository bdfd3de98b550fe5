"""The native Anthropic client through a real Messages-API server on 127.0.0.1, the real ``anthropic``
SDK and real sockets: a full agent trial, tool results as tool_result blocks, retries and Retry-After, infra
errors, context overflow, token accounting, the missing key, and the LLM customer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from llm_fake_server import FakeAnthropic, Reply, claude_fail, claude_says, claude_says_raw, tool_use
from test_llm_agent import ASK_EMAIL, DONE, EMAIL, ORDER, PROPOSAL, report, run_cli, stored_events

from passhat.agents.llm import INSTRUCTIONS
from passhat.customers.llm import OPENING
from passhat.domains import load_domain
from passhat.store import ResultStore

pytest.importorskip("anthropic")
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")  # the SDK's notice

KEY = "sk-ant-passhat-fake-key-0123456789"  # recognisable, and no real key
AGENT = "llm:anthropic/claude-sonnet-4-5"
CANCEL = {"order_id": ORDER, "reason": "no longer needed"}


def claude_cancels() -> list[Reply]:
    """A correct Claude for retail-001, one answer per request: ask, say it looks and look up (two
    tool_use blocks at once), propose, write after the yes, report. Input/output tokens differ per
    answer so that sums are checked, not counts."""
    return [
        claude_says(ASK_EMAIL, tokens=(1001, 11)),
        claude_says(
            "Thank you, let me look that up.",
            tool_use("find_customer_by_email", {"email": EMAIL}, "toolu_01"),
            tool_use("get_order", {"order_id": ORDER}, "toolu_02"),
            tokens=(1002, 12),
        ),
        claude_says(PROPOSAL, tokens=(1003, 13)),
        claude_says(None, tool_use("cancel_order", CANCEL, "toolu_03"), tokens=(1004, 14)),
        claude_says(DONE, tokens=(1005, 15)),
    ]


def anthropic_run(server: FakeAnthropic, out: Path, *extra: str, run_id: str = "r1") -> Result:
    return run_cli(
        "run", "--agent", AGENT, "--agent-base-url", server.url, "--tasks", "retail-001",
        "--personas", "baseline", "--trials", "1", "--out", str(out), "--run-id", run_id,
        "--json", str(out / f"{run_id}.json"), "--retry-backoff", "0.001", *extra,
        env={"ANTHROPIC_API_KEY": KEY},
    )  # fmt: skip


def test_claude_plays_a_retail_task_to_reward_1(tmp_path: Path) -> None:
    with FakeAnthropic(claude_cancels()) as server:
        result = anthropic_run(server, tmp_path, "--agent-temperature", "0.25")
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["avg_reward"], m["infra_errors"]) == (1.0, 0)
    assert server.paths == ["/v1/messages"] * len(claude_cancels())
    first, headers = server.requests[0], {k.lower(): v for k, v in server.headers[0].items()}
    assert KEY in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))  # by SDK version
    assert "anthropic-version" in headers
    assert (first["model"], first["max_tokens"], first["temperature"]) == ("claude-sonnet-4-5", 4096, 0.25)
    assert first["system"].startswith(INSTRUCTIONS)
    assert load_domain("retail").policy.strip() in first["system"]
    assert all(m["role"] in ("user", "assistant") for r in server.requests for m in r["messages"])
    assert first["messages"][0]["role"] == "user" and ORDER in json.dumps(first["messages"][0]["content"])
    tools = {t["name"]: t for t in first["tools"]}
    assert {"cancel_order", "get_order", "find_customer_by_email"} <= set(tools)
    assert tools["get_order"]["input_schema"]["properties"]["order_id"]["type"] == "string"
    assert tools["get_order"]["description"]
    write = [e for e in stored_events(tmp_path) if e.get("name") == "cancel_order"]
    assert [(c["args"], c["result"]["status"]) for c in write] == [(CANCEL, "ok")]


def test_tool_results_go_back_as_tool_result_blocks(tmp_path: Path) -> None:
    with FakeAnthropic(claude_cancels()) as server:
        assert anthropic_run(server, tmp_path).exit_code == 0
    *_, asked, answered = server.requests[2]["messages"]  # the request after the two lookups
    assert asked["role"] == "assistant"
    assert [b["type"] for b in asked["content"]] == ["text", "tool_use", "tool_use"]
    assert asked["content"][1] == tool_use("find_customer_by_email", {"email": EMAIL}, "toolu_01")
    assert answered["role"] == "user"
    assert [(b["type"], b["tool_use_id"]) for b in answered["content"]] == [
        ("tool_result", "toolu_01"),
        ("tool_result", "toolu_02"),
    ]
    customer, order = (json.loads(b["content"]) for b in answered["content"])
    assert "C-167498" in json.dumps(customer) and ORDER in json.dumps(order)
    *_, wrote, result = server.requests[4]["messages"]  # the request after the write
    assert wrote["content"] == [tool_use("cancel_order", CANCEL, "toolu_03")]
    (block,) = result["content"]
    assert (block["type"], block["tool_use_id"]) == ("tool_result", "toolu_03")
    assert "cancelled" in block["content"]


def test_retries_on_429_and_529_then_succeed(tmp_path: Path) -> None:
    busy = [claude_fail(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
            claude_fail(529, "overloaded_error", "Overloaded")]  # fmt: skip
    with FakeAnthropic([*busy, *claude_cancels()]) as server:
        result = anthropic_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["avg_reward"], m["infra_errors"]) == (1.0, 0)
    assert len(server.requests) == len(busy) + len(claude_cancels())
    assert server.requests[0] == server.requests[2]  # the same request was sent again


def test_retry_after_is_waited_before_the_next_try(tmp_path: Path) -> None:
    busy = [claude_fail(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit",
                        headers={"retry-after": "0.4"}),
            claude_fail(529, "overloaded_error", "Overloaded", headers={"retry-after": "0.3"})]  # fmt: skip
    with FakeAnthropic([*busy, *claude_cancels()]) as server:
        result = anthropic_run(server, tmp_path)  # --retry-backoff 0.001: only the header makes the waits this long
    assert result.exit_code == 0, result.output
    first, second, third = server.arrivals[:3]
    assert second - first >= 0.4 and third - second >= 0.3


def test_a_slow_answer_times_out_and_the_retry_succeeds(tmp_path: Path) -> None:
    replies = claude_cancels()
    late = claude_says(ASK_EMAIL, delay=1.0)
    with FakeAnthropic([late, *replies]) as server:
        result = anthropic_run(server, tmp_path, "--request-timeout", "0.3")
    assert result.exit_code == 0, result.output
    assert report(tmp_path)["metrics"]["avg_reward"] == 1.0
    assert len(server.requests) == 1 + len(replies)


def test_retries_that_give_up_end_as_infra_error(tmp_path: Path) -> None:
    with FakeAnthropic(then=lambda _: claude_fail(529, "overloaded_error", "Overloaded")) as server:
        result = anthropic_run(server, tmp_path, "--max-retries", "2")
    assert len(server.requests) == 3  # the first try and two retries
    assert result.exit_code == 1
    m = report(tmp_path)["metrics"]
    assert (m["scenarios"], m["infra_errors"], m["avg_reward"]) == (0, 1, None)
    with ResultStore.open(tmp_path / "r1") as store:
        (trial,) = store.trials()
    assert trial.signature == "infra_error"
    assert "3 tries" in trial.infra_error and "529" in trial.infra_error


def test_an_empty_answer_is_left_out_of_the_next_request(tmp_path: Path) -> None:
    """Claude sometimes ends its turn with no content at all (e.g. right after tool results); the API
    refuses a later request that holds that empty turn, so it must not be sent back."""
    replies = claude_cancels()
    replies.insert(2, claude_says(None))  # after the lookups: content [], end_turn
    with FakeAnthropic(replies) as server:
        result = anthropic_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    assert len(server.requests) == len(replies)  # none was refused
    m = report(tmp_path)["metrics"]
    assert (m["infra_errors"], m["avg_reward"]) == (0, 1.0)
    turns = server.requests[3]["messages"]  # the request after the empty answer
    assert [b["type"] for b in turns[-1]["content"]] == ["tool_result", "tool_result", "text"]


@pytest.mark.parametrize(
    "message",
    ["prompt is too long: 212345 tokens > 200000 maximum",
     "input length and `max_tokens` exceed context limit: 198000 + 4096 > 200000, decrease input length or "
     "`max_tokens` and try again"],
)  # fmt: skip
def test_a_prompt_too_long_is_context_overflow_not_retried(tmp_path: Path, message: str) -> None:
    too_long = claude_fail(400, "invalid_request_error", message)
    with FakeAnthropic([claude_says(ASK_EMAIL), too_long]) as server:
        result = anthropic_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["infra_errors"], m["avg_reward"], m["failure_signatures"]) == (0, 0.0, {"context_overflow": 1})
    assert len(server.requests) == 2


def test_another_invalid_request_is_not_retried_and_not_the_agents_failure(tmp_path: Path) -> None:
    refused = claude_fail(400, "invalid_request_error", "tools.0.input_schema: JSON schema is invalid")
    with FakeAnthropic(then=lambda _: refused) as server:
        result = anthropic_run(server, tmp_path)
    assert len(server.requests) == 1
    assert result.exit_code == 1
    assert report(tmp_path)["metrics"]["infra_errors"] == 1


def hostile_use(tool_input: str) -> Reply:
    return claude_says_raw('[{"type": "tool_use", "id": "h1", "name": "get_order", "input": ' + tool_input + "}]")


@pytest.mark.parametrize(
    ("hostile", "stored"),
    [(hostile_use('{"order_id": ' + "9" * 5000 + "}"), "cannot be read"), (hostile_use('["#R3042198"]'), "must be a JSON object"),
     (hostile_use('{"order_id": "\\ud800"}'), "order_id holds \\ud800"), (claude_says("Let me look \ud800 into it."), "look \\ud800")],
)  # fmt: skip
def test_claudes_hostile_answers_are_judged_as_the_agents(tmp_path: Path, hostile: Reply, stored: str) -> None:
    with FakeAnthropic([claude_says(ASK_EMAIL), hostile], then=lambda _: claude_says("I cannot help. Goodbye.")) as server:
        result = anthropic_run(server, tmp_path, "--max-turns", "3")
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["infra_errors"], m["avg_reward"]) == (0, 0.0)
    events = stored_events(tmp_path)
    said = [e.get("text", "") for e in events] + [e["result"]["error"]["message"] for e in events if e.get("call_id") == "h1"]
    assert any(stored in text for text in said), said
    assert len(server.requests) > 2  # the conversation went on past the hostile answer: no request was refused


def test_tokens_and_cost_come_from_usage(tmp_path: Path) -> None:
    with FakeAnthropic(claude_cancels()) as server:
        anthropic_run(server, tmp_path)
    n = len(server.requests)
    tokens_in, tokens_out = sum(1000 + i for i in range(1, n + 1)), sum(10 + i for i in range(1, n + 1))
    m = report(tmp_path)["metrics"]
    assert m["tokens"] == {"input": tokens_in, "output": tokens_out}
    assert abs(m["cost_usd"] - (tokens_in * 3.0 + tokens_out * 15.0) / 1e6) < 1e-9  # claude-sonnet-4-5: $3 / $15
    assert m["unpriced_models"] == []
    with ResultStore.open(tmp_path / "r1") as store:
        usage = store.trials()[0].usage["agent"]
    assert (usage["model"], usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (
        "anthropic/claude-sonnet-4-5", n, tokens_in, tokens_out,
    )  # fmt: skip
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(KEY.encode() not in p.read_bytes() for p in written)


@pytest.mark.parametrize("role", ["--agent", "--user"])
def test_a_missing_anthropic_key_stops_before_any_trial(tmp_path: Path, role: str) -> None:
    result = run_cli("run", role, AGENT, "--out", str(tmp_path), env={"ANTHROPIC_API_KEY": ""})
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY" in result.output and role in result.output
    assert not list(tmp_path.iterdir())  # no run was created


def customer(body: dict[str, Any]) -> Reply:
    """A customer model that answers the reference agent by the words of its last message."""
    (last,) = [b["text"] for b in body["messages"][-1]["content"] if b["type"] == "text"]
    answers = [
        ("support chat has opened", f"Hi, I'd like to cancel my order {ORDER}."),
        ("anything else", "No, that's all, thanks! ###SATISFIED###"), ("yes or no", "Yes, please go ahead."),
        ("email", f"It's {EMAIL}."), ("reason", "I no longer need it."),
    ]  # fmt: skip
    return claude_says(next((a for cue, a in answers if cue in last.lower()), "Sorry, what do you mean?"), tokens=(200, 20))


def test_an_llm_customer_over_anthropic_ends_with_a_stop_marker(tmp_path: Path) -> None:
    with FakeAnthropic(then=customer) as server:
        result = run_cli(
            "run", "--agent", "reference:perfect", "--user", "llm:anthropic/claude-haiku-4-5", "--user-base-url",
            server.url, "--tasks", "retail-001", "--personas", "baseline", "--trials", "1", "--out", str(tmp_path),
            "--run-id", "r1", "--json", str(tmp_path / "r1.json"), env={"ANTHROPIC_API_KEY": KEY},
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["avg_reward"], m["user_simulator_errors"]) == (1.0, 0)
    events = stored_events(tmp_path)
    assert events[-1]["kind"] == "end" and events[-1].get("text") == "satisfied"
    assert "###" not in json.dumps([e for e in events if e["kind"] == "user"])
    first = server.requests[0]
    assert "tools" not in first and "Nikolai Prescott" in first["system"]
    assert first["messages"] == [{"role": "user", "content": [{"type": "text", "text": OPENING}]}]
    assert all(b["type"] == "text" for r in server.requests for t in r["messages"] for b in t["content"])
    assert m["model_calls"]["user"]["input_tokens"] == 200 * len(server.requests)
