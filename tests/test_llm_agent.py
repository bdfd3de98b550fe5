"""The LLM agent, through a real OpenAI-compatible HTTP server on 127.0.0.1, the real SDK and sockets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from llm_fake_server import FakeOpenAI, Reply, call, fail, say

from passhat.agents.llm import INSTRUCTIONS
from passhat.cli import main
from passhat.domains import load_domain

KEY = "sk-passhat-fake-key-0123456789"
ORDER, EMAIL = "#R3042198", "nikolaipre243@example.org"
ASK_EMAIL = "Happy to help. To verify your identity, could you tell me the email address on your account?"
PROPOSAL = (
    f"I can cancel order {ORDER} (the Standing Desk Converter and the Portable Radio) with the reason "
    '"no longer needed", and refund $244.87 to card_789261. Shall I go ahead? Please answer yes or no.'
)
DONE = f"Order {ORDER} has been cancelled, and $244.87 will be refunded. Is there anything else I can help you with?"


def cancel_conversation(*, malformed: bool = False) -> list[Reply]:
    """A correct agent for retail-001, one reply per model request: ask, look up (two calls at once),
    propose, write after the yes, report. ``malformed``: the write is first sent with broken JSON."""
    cancel = {"order_id": ORDER, "reason": "no longer needed"}
    writes = [say(None, call("cancel_order", '{"order_id": "#R3042198", "reason": ', "c3"))] if malformed else []
    return [
        say(ASK_EMAIL),
        say(None, call("find_customer_by_email", {"email": EMAIL}, "c1"), call("get_order", {"order_id": ORDER}, "c2")),
        say(PROPOSAL),
        *writes,
        say(None, call("cancel_order", cancel, "c4")),
        say(DONE),
    ]


def run_cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": KEY, **(env or {})}, catch_exceptions=False)


def llm_run(server: FakeOpenAI, out: Path, *extra: str, run_id: str = "r1") -> Result:
    return run_cli(
        "run", "--agent", "llm:openai/gpt-4.1", "--agent-base-url", server.url, "--tasks", "retail-001",
        "--personas", "baseline", "--trials", "1", "--out", str(out), "--run-id", run_id,
        "--json", str(out / f"{run_id}.json"), "--retry-backoff", "0.001", *extra,
    )  # fmt: skip


def report(out: Path, run_id: str = "r1") -> dict[str, Any]:
    return json.loads((out / f"{run_id}.json").read_text())


def stored_events(out: Path, run_id: str = "r1") -> list[dict[str, Any]]:
    from passhat.store import ResultStore

    with ResultStore.open(out / run_id) as store:
        (trial,) = store.trials()
    return trial.events


def test_llm_agent_plays_a_retail_task_to_reward_1(tmp_path: Path) -> None:
    with FakeOpenAI(cancel_conversation()) as server:
        result = llm_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    doc = report(tmp_path)
    assert doc["metrics"]["avg_reward"] == 1.0
    first = server.requests[0]
    assert first["model"] == "gpt-4.1"
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].startswith(INSTRUCTIONS)
    assert load_domain("retail").policy.strip() in first["messages"][0]["content"]
    assert {t["function"]["name"] for t in first["tools"]} >= {"cancel_order", "get_order", "find_customer_by_email"}
    assert {k.lower(): v for k, v in server.headers[0].items()}["authorization"] == f"Bearer {KEY}"


def test_parallel_tool_calls_each_get_their_result(tmp_path: Path) -> None:
    with FakeOpenAI(cancel_conversation()) as server:
        llm_run(server, tmp_path)
    after_lookups = server.requests[2]["messages"]
    assert [m["tool_call_id"] for m in after_lookups if m["role"] == "tool"] == ["c1", "c2"]
    assert [e["name"] for e in stored_events(tmp_path) if e["kind"] == "tool"][:2] == ["find_customer_by_email", "get_order"]


def test_a_malformed_tool_call_gets_an_error_result_and_the_agent_corrects_it(tmp_path: Path) -> None:
    with FakeOpenAI(cancel_conversation(malformed=True)) as server:
        result = llm_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    assert report(tmp_path)["metrics"]["avg_reward"] == 1.0
    (bad,) = [m for m in server.requests[4]["messages"] if m.get("tool_call_id") == "c3"]
    assert json.loads(bad["content"])["error"]["type"] == "invalid_arguments"
    cancels = [e for e in stored_events(tmp_path) if e.get("name") == "cancel_order"]
    assert [c["result"]["status"] for c in cancels] == ["error", "ok"]


def test_schema_invalid_arguments_are_an_error_result_too(tmp_path: Path) -> None:
    replies = cancel_conversation()
    replies.insert(1, say(None, call("get_order", {"order": ORDER}, "c0")))  # wrong argument name
    with FakeOpenAI(replies) as server:
        llm_run(server, tmp_path)
    (result,) = [m for m in server.requests[2]["messages"] if m.get("tool_call_id") == "c0"]
    assert "order_id" in json.loads(result["content"])["error"]["message"]


def test_no_policy_leaves_the_written_policy_out(tmp_path: Path) -> None:
    with FakeOpenAI(cancel_conversation()) as server:
        llm_run(server, tmp_path, "--no-policy")
    assert server.requests[0]["messages"][0]["content"] == INSTRUCTIONS
    assert report(tmp_path)["config"]["no_policy"] is True


def test_no_policy_is_refused_for_a_reference_agent(tmp_path: Path) -> None:
    result = run_cli("run", "--agent", "reference:perfect", "--no-policy", "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "--no-policy" in result.output


def test_context_overflow_is_the_agents_failure_not_an_infra_error(tmp_path: Path) -> None:
    overflow = fail(400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.")
    with FakeOpenAI([say(ASK_EMAIL), overflow]) as server:
        result = llm_run(server, tmp_path)
    m = report(tmp_path)["metrics"]
    assert (m["infra_errors"], m["avg_reward"], m["failure_signatures"]) == (0, 0.0, {"context_overflow": 1})
    assert len(server.requests) == 2  # not retried
    assert result.exit_code == 0


@pytest.mark.parametrize("spec", ["llm:openai", "llm:mistral/large", "llm:/gpt-4.1"])
def test_a_bad_model_spec_is_a_user_error(tmp_path: Path, spec: str) -> None:
    result = run_cli("run", "--agent", spec, "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "llm:<provider>/<model>" in result.output
