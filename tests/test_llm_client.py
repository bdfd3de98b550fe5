"""Model plumbing on its own: timeouts, the connection limit, backoff bounds and Retry-After, odd and hostile
answers, the Anthropic translation, and the store's schema version."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import email.utils
import json
import sqlite3
from pathlib import Path

import httpx
import openai
import pytest
from llm_fake_server import ECHO_KEY, FakeOpenAI, Reply, call, fail, say, say_raw
from yarl import URL

from passhat.errors import UserError
from passhat.llm import Conversation, ModelHub, ModelRequestError, ModelToolCall, ModelUnavailable, UnreadableAnswer
from passhat.llm.anthropic_client import to_anthropic
from passhat.llm.errors import asked_wait
from passhat.llm.model import Sampling
from passhat.llm.openai_client import environment_proxy
from passhat.llm.request_body import RequestBody
from passhat.llm.retry import RetryPolicy
from passhat.run_config import RunConfig
from passhat.store import ResultStore

ASK = Conversation([{"role": "user", "content": "hello"}])


def complete_all(server: FakeOpenAI, calls: int, **settings: object) -> list[object]:
    """``calls`` concurrent agent-model requests through a hub built from a run configuration."""
    return complete_all_at(server.url, calls, **settings)


def complete_all_at(base_url: str, calls: int, **settings: object) -> list[object]:
    """``calls`` concurrent agent-model requests to ``base_url``: their answers or their exceptions."""

    async def go() -> list[object]:
        config = RunConfig(personas=[], tasks=[], agent="llm:openai/m", agent_base_url=base_url, retry_backoff=0.001, **settings)
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


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_waited_before_the_next_try(status: int) -> None:
    busy = fail(status, "slow down", headers={"retry-after": "0.4"})
    with FakeOpenAI([busy, say("ok")]) as server:
        (answer,) = complete_all(server, 1)  # backoff 0.001 s: only the header makes the wait this long
    assert answer.text == "ok"  # type: ignore[attr-defined]
    assert server.arrivals[1] - server.arrivals[0] >= 0.4


def test_retry_after_is_capped_by_the_longest_wait() -> None:
    policy = RetryPolicy(base_delay=0.001, max_delay=5.0)
    assert policy.delay(0, asked=3600.0) == 5.0


def sdk_error(headers: dict[str, str]) -> openai.APIStatusError:
    response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    return openai.RateLimitError("slow down", response=response, body=None)


@pytest.mark.parametrize(
    ("headers", "wait"),
    [({"retry-after": "2"}, 2.0), ({"retry-after": "2", "retry-after-ms": "250"}, 0.25), ({"retry-after": "-3"}, 0.0),
     ({"retry-after": "soon"}, None), ({"retry-after": "nan"}, None), ({}, None)],
)  # fmt: skip
def test_the_wait_an_error_asks_for_is_read_from_its_headers(headers: dict[str, str], wait: float | None) -> None:
    assert asked_wait(sdk_error(headers)) == wait


def test_retry_after_may_be_an_http_date() -> None:
    later = email.utils.format_datetime(datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30), usegmt=True)
    assert 25 <= asked_wait(sdk_error({"retry-after": later})) <= 30  # type: ignore[operator]


def test_values_the_model_wrote_are_read_as_text_whatever_their_json_type() -> None:
    odd = say_raw(
        '{"role": "assistant", "content": 5, "tool_calls": [{"id": null, "type": "function", "function": '
        '{"name": null, "arguments": {"order_id": "#1"}}}, {"id": "b", "type": "function"}]}'
    )
    with FakeOpenAI([odd]) as server:
        (answer,) = complete_all(server, 1)
    assert answer.text == "5"  # type: ignore[attr-defined]
    assert answer.tool_calls == (ModelToolCall("call_0", "", '{"order_id": "#1"}'), ModelToolCall("b", "", ""))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "broken",
    [Reply(200, raw="<html>bad gateway</html>"), Reply(200, {"choices": "none"}), Reply(200, {"choices": [{"message": None}]}),
     say_raw('{"role": "assistant", "content": "hi", "tool_calls": "none"}')],
)  # fmt: skip
def test_an_answer_that_is_no_chat_completion_is_the_endpoints_failure_and_retried(broken: Reply) -> None:
    with FakeOpenAI(then=lambda _: broken) as server:
        (error,) = complete_all(server, 1, max_retries=1)
    assert isinstance(error, ModelUnavailable)
    assert len(server.requests) == 2


@pytest.mark.parametrize("content", ["9" * 5000, "[" * 10_000 + "]" * 10_000, '"ok", "extra": ' + "[" * 10_000 + "]" * 10_000])
def test_an_answer_python_cannot_read_is_the_models_failure_and_not_retried(content: str) -> None:
    with FakeOpenAI(then=lambda _: say_raw('{"role": "assistant", "content": ' + content + "}")) as server:
        (error,) = complete_all(server, 1, max_retries=3)
    assert isinstance(error, UnreadableAnswer)
    assert len(server.requests) == 1


def test_an_echoed_key_is_redacted_before_the_answer_is_cached_or_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-client-test-fake-key-42")
    echo = say(f"key {ECHO_KEY}", call("get_order", {"order_id": ECHO_KEY}, ECHO_KEY))
    with FakeOpenAI([echo]) as server:
        (answer,) = complete_all(server, 1, cache=str(tmp_path / "cache.sqlite"))
    assert answer.text == "key [redacted]"  # type: ignore[attr-defined]
    assert answer.tool_calls == (ModelToolCall("[redacted]", "get_order", '{"order_id": "[redacted]"}'),)  # type: ignore[attr-defined]
    assert b"fake-key" not in (tmp_path / "cache.sqlite").read_bytes()


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


@pytest.mark.parametrize("arguments", ['{"n": ' + "9" * 5000 + "}", "[" * 10_000, '"text"', "not json"])
def test_a_malformed_call_in_the_history_goes_to_claude_without_input(arguments: str) -> None:
    call = {"id": "a", "type": "function", "function": {"name": "get_order", "arguments": arguments}}
    (turn,) = to_anthropic([{"role": "assistant", "content": None, "tool_calls": [call]}])
    assert turn["content"] == [{"type": "tool_use", "id": "a", "name": "get_order", "input": {}}]


def test_a_store_of_the_previous_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    ResultStore.create(tmp_path, "r1", {}).close()
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:
        conn.execute("PRAGMA user_version = 1")
    with pytest.raises(UserError, match="schema version 1, this passhat reads version 2"):
        ResultStore.open(tmp_path)


def test_fields_the_harness_does_not_read_are_ignored_whatever_they_hold() -> None:
    extra = say("ok", call("get_order", {"order_id": "#1"}, "c1"), tokens=(7, 3))
    body = {**extra.body, "system_fingerprint": "fp", "service_tier": {"tier": [1, 2]}, "prompt_filter_results": None}
    body["choices"][0] |= {"logprobs": {"content": []}, "finish_reason": "a reason no SDK knows"}
    body["choices"][0]["message"] |= {"refusal": None, "annotations": [{"type": "url_citation"}], "audio": 5}
    with FakeOpenAI([Reply(200, body)]) as server:
        (answer,) = complete_all(server, 1)
    assert answer.text == "ok"  # type: ignore[attr-defined]
    assert answer.tool_calls == (ModelToolCall("c1", "get_order", '{"order_id": "#1"}'),)  # type: ignore[attr-defined]
    assert (answer.input_tokens, answer.output_tokens) == (7, 3)  # type: ignore[attr-defined]


@pytest.mark.parametrize("transfer", ["gzip", "chunked"])
def test_a_compressed_or_chunked_answer_is_read_like_a_plain_one(transfer: str) -> None:
    reply = dataclasses.replace(say("x" * 500), transfer=transfer)
    with FakeOpenAI([reply]) as server:
        (answer,) = complete_all(server, 1)
    assert answer.text == "x" * 500  # type: ignore[attr-defined]


def test_a_connection_reset_mid_answer_is_transient_and_retried() -> None:
    with FakeOpenAI([dataclasses.replace(say("lost " * 200), transfer="reset"), say("whole")]) as server:
        (answer,) = complete_all(server, 1)
    assert answer.text == "whole"  # type: ignore[attr-defined]
    assert len(server.requests) == 2


def test_an_error_answer_is_worded_with_its_status_and_body() -> None:
    with FakeOpenAI(then=lambda _: fail(404, "no such model")) as server:
        (error,) = complete_all(server, 1)
    assert isinstance(error, ModelRequestError)
    assert str(error).startswith("HTTP 404: Error code: 404 - ") and "no such model" in str(error)


def test_the_request_carries_the_model_sampling_messages_and_tools_as_json() -> None:
    tools = [{"name": "get_order", "description": "Look up an order.", "parameters": {"type": "object", "properties": {}}}]
    messages = [{"role": "user", "content": "lone \udc80 surrogate"}]
    body = json.loads(RequestBody("m").encode(Conversation(messages), tools, Sampling(temperature=0.5, seed=7)))
    assert body == {
        "model": "m", "messages": messages, "temperature": 0.5, "seed": 7,
        "tools": [{"type": "function", "function": tools[0]}],
    }  # fmt: skip


def test_every_trial_of_a_run_sends_the_same_tools() -> None:
    tools = [{"name": "get_order", "description": "Look up an order.", "parameters": {"type": "object", "properties": {}}}]

    async def go(server: FakeOpenAI) -> None:
        config = RunConfig(personas=[], tasks=[], agent="llm:openai/m", agent_base_url=server.url)
        hub = ModelHub.from_config(config)
        try:
            for seed in range(3):
                await hub.endpoint("agent").complete(ASK, tools, seed=seed)
        finally:
            await hub.aclose()

    with FakeOpenAI([say("a"), say("b"), say("c")]) as server:
        asyncio.run(go(server))
    assert [r["tools"] for r in server.requests] == [[{"type": "function", "function": tools[0]}]] * 3
    assert [r["seed"] for r in server.requests] == [0, 1, 2]


def test_the_agent_and_the_customer_on_one_server_each_get_the_full_limit() -> None:
    """A customer model waiting on the same server must not eat the agent's connections (nor the reverse)."""

    async def go(server: FakeOpenAI) -> None:
        config = RunConfig(
            personas=[],
            tasks=[],
            agent="llm:openai/m",
            user="llm:openai/m",
            agent_base_url=server.url,
            user_base_url=server.url,
            max_connections=2,
        )
        hub = ModelHub.from_config(config)
        try:
            calls = [hub.endpoint(role).complete(ASK, [], seed=i) for role in ("agent", "user") for i in range(3)]
            await asyncio.gather(*calls)
        finally:
            await hub.aclose()

    with FakeOpenAI(then=lambda _: say("ok", delay=0.1)) as server:
        asyncio.run(go(server))
    assert server.max_in_flight == 4


def test_a_conversation_sends_every_message_it_was_given_in_order() -> None:
    conversation = Conversation([{"role": "system", "content": "policy \u00e9"}, {"role": "user", "content": "hi"}])
    conversation.append({"role": "assistant", "content": None, "tool_calls": [call("get_order", {"order_id": "#1"}, "c1")]})
    conversation.extend([{"role": "tool", "tool_call_id": "c1", "content": "{}"}, {"role": "user", "content": "\ud800"}])
    assert json.loads(conversation.json()) == conversation.messages
    assert [m["role"] for m in conversation.messages] == ["system", "user", "assistant", "tool", "user"]


def test_a_refused_connection_is_transient_and_worded_as_the_sdk_words_it() -> None:
    with FakeOpenAI() as server:
        closed = server.url  # the server is gone once the block ends: its port refuses connections
    (error,) = complete_all_at(closed, 1, max_retries=1)
    assert isinstance(error, ModelUnavailable)
    assert str(error).endswith("failed after 2 tries: APIConnectionError: Connection error.")


def test_an_answer_that_stalls_halfway_times_out_and_the_retry_succeeds() -> None:
    with FakeOpenAI([dataclasses.replace(say("slow " * 200), transfer="stall"), say("whole")]) as server:
        (answer,) = complete_all(server, 1, request_timeout=0.3)
    assert answer.text == "whole"  # type: ignore[attr-defined]
    assert len(server.requests) == 2


def test_a_timeout_is_worded_as_the_sdk_words_it() -> None:
    with FakeOpenAI(then=lambda _: say("late", delay=1.0)) as server:
        (error,) = complete_all(server, 1, request_timeout=0.2, max_retries=0)
    assert isinstance(error, ModelUnavailable) and str(error).endswith("APITimeoutError: Request timed out.")


def test_a_server_error_that_is_not_json_is_worded_with_its_text_and_retried() -> None:
    bad_gateway = Reply(502, raw="<html>bad gateway \xff</html>", headers={"retry-after-ms": "10"})
    with FakeOpenAI(then=lambda _: bad_gateway) as server:
        (error,) = complete_all(server, 1, max_retries=1)
    assert isinstance(error, ModelUnavailable) and str(error).endswith("HTTP 502: <html>bad gateway \xff</html>")
    assert len(server.requests) == 2


def test_the_proxy_the_environment_names_carries_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([say("via the proxy")]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
        monkeypatch.setenv("NO_PROXY", "")
        (answer,) = complete_all_at("http://model.invalid/v1", 1)
    assert answer.text == "via the proxy"  # type: ignore[attr-defined]
    assert proxy.paths == ["http://model.invalid/v1/chat/completions"]


@pytest.mark.parametrize(
    ("environment", "proxy"),
    [({"HTTPS_PROXY": "http://proxy:3128"}, "http://proxy:3128"), ({"ALL_PROXY": "http://proxy:1"}, "http://proxy:1"),
     ({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "api.openai.com"}, None), ({}, None)],
)  # fmt: skip
def test_the_proxy_is_the_one_the_environment_names_for_the_endpoint(
    environment: dict[str, str], proxy: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert environment_proxy(URL("https://api.openai.com/v1/chat/completions")) == proxy


def test_a_redirect_is_not_followed() -> None:
    """As the openai SDK did: an endpoint that answers with a redirect gave no completion."""
    with FakeOpenAI([say("elsewhere")]) as elsewhere:
        moved = Reply(307, raw="", headers={"location": elsewhere.url + "/chat/completions"})
        with FakeOpenAI(then=lambda _: moved) as server:
            (error,) = complete_all(server, 1, max_retries=0)
    assert isinstance(error, ModelUnavailable) and elsewhere.requests == []
