"""The litellm provider (``llm:litellm/<model>``) through the real ``litellm`` package and real local servers:
its ``openai/`` route against the chat-completions server, its ``anthropic/`` route against the Messages-API
server (a provider that is not OpenAI-compatible), and the same rules as the other clients: retries and
Retry-After, infra errors, context overflow, the cache, tokens and cost, secrets, and the usage errors."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from click.testing import Result
from llm_fake_server import (
    ECHO_KEY,
    FakeAnthropic,
    FakeOpenAI,
    FakeServer,
    call,
    claude_fail,
    claude_says,
    fail,
    say,
    say_raw,
    tool_use,
)
from test_llm_agent import ASK_EMAIL, DONE, EMAIL, KEY, ORDER, PROPOSAL, cancel_conversation, report, run_cli, stored_events

from passhat.errors import UserError
from passhat.llm import Conversation, ModelHub, ModelUnavailable, UnreadableAnswer, role_models
from passhat.llm.litellm_client import load_sdk
from passhat.run_config import RunConfig
from passhat.store import ResultStore

try:
    litellm = load_sdk()  # as passhat sets it up: nothing downloaded at import
except UserError:
    pytest.skip("the litellm extra is not installed", allow_module_level=True)
pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")  # litellm's own types, as pydantic reads them

AGENT = "llm:litellm/openai/gpt-4.1"
ASK = Conversation([{"role": "user", "content": "hello"}])


def litellm_run(server: FakeServer, out: Path, *extra: str, agent: str = AGENT, run_id: str = "r1") -> Result:
    return run_cli(
        "run", "--agent", agent, "--agent-base-url", server.url, "--tasks", "retail-001", "--personas", "baseline",
        "--trials", "1", "--out", str(out), "--run-id", run_id, "--json", str(out / f"{run_id}.json"),
        "--retry-backoff", "0.001", *extra,
    )  # fmt: skip


def complete_all(server: FakeServer, calls: int = 1, model: str = "openai/m", **settings: object) -> list[object]:
    """``calls`` concurrent agent-model requests through a hub built from a run configuration: their answers
    or their exceptions."""

    async def go() -> list[object]:
        config = RunConfig(
            personas=[], tasks=[], agent=f"llm:litellm/{model}", agent_base_url=server.url, retry_backoff=0.001, **settings
        )
        hub = ModelHub.from_config(config)
        try:
            endpoint = hub.endpoint("agent")
            return await asyncio.gather(*(endpoint.complete(ASK, [], seed=i) for i in range(calls)), return_exceptions=True)
        finally:
            await hub.aclose()

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm reads the key of the provider it routes to from that provider's variable."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-litellm-fake-key-0123456789")


def test_a_model_through_litellm_plays_a_retail_task_to_reward_1(tmp_path: Path) -> None:
    with FakeOpenAI(cancel_conversation()) as server:
        result = litellm_run(server, tmp_path, "--agent-temperature", "0.25")
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["avg_reward"], m["infra_errors"]) == (1.0, 0)
    assert server.paths == ["/v1/chat/completions"] * len(cancel_conversation())  # --agent-base-url is litellm's api_base
    first = server.requests[0]
    assert (first["model"], first["temperature"], first["messages"][0]["role"]) == ("gpt-4.1", 0.25, "system")
    assert isinstance(first["seed"], int)
    assert {t["function"]["name"] for t in first["tools"]} >= {"cancel_order", "get_order", "find_customer_by_email"}
    assert {k.lower(): v for k, v in server.headers[0].items()}["authorization"] == f"Bearer {KEY}"
    cancels = [e for e in stored_events(tmp_path) if e.get("name") == "cancel_order"]
    assert [c["result"]["status"] for c in cancels] == ["ok"]


def test_a_provider_that_is_not_openai_compatible_gets_its_own_protocol(tmp_path: Path) -> None:
    """litellm's anthropic/ route speaks the Messages API: the fake refuses anything the real API would."""
    replies = [
        claude_says(ASK_EMAIL),
        claude_says(None, tool_use("find_customer_by_email", {"email": EMAIL}, "toolu_01"), tool_use("get_order", {"order_id": ORDER}, "toolu_02")),
        claude_says(PROPOSAL),
        claude_says(None, tool_use("cancel_order", {"order_id": ORDER, "reason": "no longer needed"}, "toolu_03")),
        claude_says(DONE),
    ]  # fmt: skip
    with FakeAnthropic(replies) as server:
        result = litellm_run(server, tmp_path, agent="llm:litellm/anthropic/claude-sonnet-4-5")
    assert result.exit_code == 0, result.output
    assert len(server.requests) == len(replies)  # none refused
    assert report(tmp_path)["metrics"]["avg_reward"] == 1.0
    assert "seed" not in server.requests[0]  # the Messages API has none: dropped, not refused


def test_retry_after_is_waited_before_the_next_try(tmp_path: Path) -> None:
    busy = [fail(429, "slow down", headers={"retry-after": "0.4"}), fail(503, "overloaded", headers={"retry-after": "0.3"})]
    with FakeOpenAI([*busy, *cancel_conversation()]) as server:
        result = litellm_run(server, tmp_path)  # --retry-backoff 0.001: only the header makes the waits this long
    assert result.exit_code == 0, result.output
    assert report(tmp_path)["metrics"]["avg_reward"] == 1.0
    first, second, third = server.arrivals[:3]
    assert second - first >= 0.4 and third - second >= 0.3


def test_retry_after_from_a_provider_litellm_calls_itself() -> None:
    """For Anthropic, Bedrock, Gemini… litellm keeps the answer's headers apart from the SDK's response."""
    busy = claude_fail(
        429, "rate_limit_error", "Number of request tokens has exceeded your limit", headers={"retry-after": "0.3"}
    )
    with FakeAnthropic([busy, claude_says("Hello!")]) as server:
        (answer,) = complete_all(server, model="anthropic/claude-haiku-4-5")
    assert answer.text == "Hello!"  # type: ignore[attr-defined]
    assert server.arrivals[1] - server.arrivals[0] >= 0.3


def test_a_slow_answer_times_out_and_the_retry_succeeds() -> None:
    with FakeOpenAI([say("late", delay=1.0), say("on time")]) as server:
        (answer,) = complete_all(server, request_timeout=0.2)
    assert answer.text == "on time"  # type: ignore[attr-defined]
    assert len(server.requests) == 2


def test_max_connections_bounds_requests_in_flight() -> None:
    with FakeOpenAI(then=lambda _: say("ok", delay=0.1)) as server:
        answers = complete_all(server, 6, max_connections=2)
    assert all(a.text == "ok" for a in answers)  # type: ignore[attr-defined]
    assert server.max_in_flight == 2


def test_the_connection_limit_is_per_provider_litellm_routes_to() -> None:
    def endpoints(agent: str, user: str) -> set[tuple[str, str | None]]:
        return {m.endpoint for m in role_models(RunConfig(personas=[], tasks=[], agent=agent, user=user))}

    assert len(endpoints("llm:litellm/gemini/gemini-2.0-flash", "llm:litellm/bedrock/amazon.nova-lite-v1:0")) == 2
    assert len(endpoints("llm:litellm/gemini/gemini-2.0-flash", "llm:litellm/gemini/gemini-2.5-pro")) == 1


def test_server_errors_that_do_not_stop_end_as_an_infra_error(tmp_path: Path) -> None:
    with FakeOpenAI(then=lambda _: fail(500, "internal error")) as server:
        result = litellm_run(server, tmp_path, "--max-retries", "2")
    assert len(server.requests) == 3  # the first try and two retries: litellm's own retries are off
    assert result.exit_code == 1
    m = report(tmp_path)["metrics"]
    assert (m["scenarios"], m["infra_errors"], m["avg_reward"]) == (0, 1, None)
    with ResultStore.open(tmp_path / "r1") as store:
        (trial,) = store.trials()
    assert trial.signature == "infra_error" and "3 tries" in trial.infra_error and "500" in trial.infra_error


def test_a_refusal_is_not_retried() -> None:
    with FakeOpenAI(then=lambda _: fail(404, "The model `m` does not exist")) as server:
        (error,) = complete_all(server)
    assert "404" in str(error) and not isinstance(error, ModelUnavailable)
    assert len(server.requests) == 1


def test_a_prompt_too_long_is_context_overflow_and_not_retried(tmp_path: Path) -> None:
    overflow = fail(400, "This model's maximum context length is 8192 tokens.", "context_length_exceeded")
    with FakeOpenAI([say(ASK_EMAIL), overflow]) as server:
        result = litellm_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["infra_errors"], m["avg_reward"], m["failure_signatures"]) == (0, 0.0, {"context_overflow": 1})
    assert len(server.requests) == 2


def test_an_answer_python_cannot_read_is_the_models_failure_and_not_retried() -> None:
    with FakeOpenAI(then=lambda _: say_raw('{"role": "assistant", "content": ' + "9" * 5000 + "}")) as server:
        (error,) = complete_all(server, max_retries=3)
    assert isinstance(error, UnreadableAnswer)
    assert len(server.requests) == 1


def test_a_second_run_is_answered_from_the_cache(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    with FakeOpenAI(cancel_conversation()) as server:
        litellm_run(server, tmp_path, "--cache", cache, run_id="first")
        sent = len(server.requests)
        again = litellm_run(server, tmp_path, "--cache", cache, run_id="second")
    assert again.exit_code == 0, again.output
    assert len(server.requests) == sent
    assert stored_events(tmp_path, "second") == stored_events(tmp_path, "first")
    calls = report(tmp_path, "second")["metrics"]["model_calls"]["agent"]
    assert (calls["calls"], calls["cached_calls"], calls["cost_usd"]) == (sent, sent, 0.0)


def test_our_price_table_wins_and_litellms_cost_fills_in(tmp_path: Path) -> None:
    """gpt-4.1 is in passhat's table ($2 / $8 per million); gpt-3.5-turbo only in litellm's; a local model in
    neither. Every reply takes 1,000 tokens in and 100 out."""
    costs = {}
    for model in ("openai/gpt-4.1", "openai/gpt-3.5-turbo", "openai/my-local-model"):
        with FakeOpenAI(cancel_conversation()) as server:
            litellm_run(server, tmp_path, agent=f"llm:litellm/{model}", run_id=model.replace("/", "-"))
        m = report(tmp_path, model.replace("/", "-"))["metrics"]
        assert m["tokens"] == {"input": 1000 * len(server.requests), "output": 100 * len(server.requests)}
        costs[model] = (m["cost_usd"] / len(server.requests), m["unpriced_models"])
    theirs = sum(litellm.cost_per_token(model="gpt-3.5-turbo", prompt_tokens=1000, completion_tokens=100))
    assert costs["openai/gpt-4.1"] == (pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6), [])
    assert costs["openai/gpt-3.5-turbo"] == (pytest.approx(theirs), []) and theirs > 0
    assert costs["openai/my-local-model"] == (0.0, ["litellm/openai/my-local-model"])


def test_a_config_price_wins_over_litellms(tmp_path: Path) -> None:
    config = tmp_path / "eval.toml"
    config.write_text('[prices."litellm/openai/gpt-3.5-turbo"]\ninput = 10.0\noutput = 0.0\n')
    with FakeOpenAI(cancel_conversation()) as server:
        litellm_run(server, tmp_path, "--config", str(config), agent="llm:litellm/openai/gpt-3.5-turbo")
    assert report(tmp_path)["metrics"]["cost_usd"] == pytest.approx(len(server.requests) * 1000 * 10.0 / 1e6)


def test_credentials_litellm_reads_never_reach_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """passhat never sees the provider's key pass (litellm reads it), so it redacts every variable named like one."""
    gemini = "gemini-fake-key-9876543210"
    monkeypatch.setenv("GEMINI_API_KEY", gemini)
    echo = say(f"My keys are {ECHO_KEY} and {gemini}.", call("get_order", {"order_id": ECHO_KEY}, "c1"))
    with FakeOpenAI([echo], then=lambda _: say("Goodbye.")) as server:
        result = litellm_run(server, tmp_path, "--cache", str(tmp_path / "cache.sqlite"), "--max-turns", "3")
    assert result.exit_code == 0, result.output
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(KEY.encode() not in p.read_bytes() and gemini.encode() not in p.read_bytes() for p in written)
    assert "My keys are [redacted] and [redacted]." in [e.get("text") for e in stored_events(tmp_path)]


def test_without_the_extra_it_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)  # what an interpreter without the package does: ImportError
    result = run_cli("run", "--agent", AGENT, "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "pip install 'passhat[litellm]'" in result.output and "Traceback" not in result.output
    assert not list(tmp_path.iterdir())  # no run was created


def test_a_model_litellm_cannot_route_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("run", "--user", "llm:litellm/no-such-provider/model", "--out", str(tmp_path))
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert "--user" in flat and "llm:litellm/<provider>/<model>" in flat
    assert not list(tmp_path.iterdir())
