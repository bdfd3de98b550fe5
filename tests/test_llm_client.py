"""Model plumbing on its own: timeouts, the connection limit, backoff bounds, the Anthropic translation,
and the store's schema version."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from llm_fake_server import FakeOpenAI, fail, say

from passhat.errors import UserError
from passhat.llm import ModelHub, ModelUnavailable
from passhat.llm.anthropic_client import to_anthropic
from passhat.llm.retry import RetryPolicy
from passhat.run.config import RunConfig
from passhat.store import ResultStore

ASK = [{"role": "user", "content": "hello"}]


def complete_all(server: FakeOpenAI, calls: int, **settings: object) -> list[object]:
    """``calls`` concurrent agent-model requests through a hub built from a run configuration."""

    async def go() -> list[object]:
        config = RunConfig(
            personas=[], tasks=[], agent="llm:openai/m", agent_base_url=server.url, retry_backoff=0.001, **settings
        )
        hub = ModelHub.from_config(config)
        try:
            endpoint = hub.endpoint("agent")
            return await asyncio.gather(*(endpoint.complete(ASK, [], seed=i) for i in range(calls)), return_exceptions=True)
        finally:
            await hub.aclose()

    return asyncio.run(go())


def test_a_slow_answer_times_out_and_the_retry_succeeds() -> None:
    with FakeOpenAI([say("late", delay=1.0), say("on time")]) as server:
        (answer,) = complete_all(server, 1, request_timeout=0.2)
    assert answer.text == "on time"  # type: ignore[attr-defined]
    assert len(server.requests) == 2


def test_retries_are_bounded() -> None:
    with FakeOpenAI(then=lambda _: fail(429, "rate limited")) as server:
        (error,) = complete_all(server, 1, max_retries=3)
    assert isinstance(error, ModelUnavailable) and "4 tries" in str(error)
    assert len(server.requests) == 4


def test_a_refusal_is_not_retried() -> None:
    with FakeOpenAI(then=lambda _: fail(404, "no such model")) as server:
        (error,) = complete_all(server, 1)
    assert "404" in str(error) and not isinstance(error, ModelUnavailable)
    assert len(server.requests) == 1


def test_max_connections_bounds_requests_in_flight() -> None:
    with FakeOpenAI(then=lambda _: say("ok", delay=0.1)) as server:
        answers = complete_all(server, 6, max_connections=2)
    assert all(a.text == "ok" for a in answers)  # type: ignore[attr-defined]
    assert server.max_in_flight == 2


def test_backoff_grows_exponentially_up_to_its_cap() -> None:
    policy = RetryPolicy(retries=10, base_delay=1.0, max_delay=5.0)
    assert all(0 <= policy.delay(0) <= 1.0 for _ in range(100))
    assert all(0 <= policy.delay(2) <= 4.0 for _ in range(100))
    assert max(policy.delay(8) for _ in range(200)) <= 5.0


def test_tool_history_becomes_alternating_anthropic_turns() -> None:
    messages = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "cancel it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "#1"}'}},
            {"id": "b", "type": "function", "function": {"name": "get_customer", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "{}"},
        {"role": "tool", "tool_call_id": "b", "content": "{}"},
    ]  # fmt: skip
    turns = to_anthropic(messages)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][0] == {"type": "tool_use", "id": "a", "name": "get_order", "input": {"order_id": "#1"}}
    assert [b["tool_use_id"] for b in turns[2]["content"]] == ["a", "b"]


def test_a_store_of_the_previous_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    ResultStore.create(tmp_path, "r1", {}).close()
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:
        conn.execute("PRAGMA user_version = 1")
    with pytest.raises(UserError, match="schema version 1, this passhat reads version 2"):
        ResultStore.open(tmp_path)
