"""The LLM customer: only the conversation reaches it, it stops with markers, and a customer that
breaks its role is detected and counted apart from the agent's failures."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from llm_fake_server import FakeOpenAI, Reply, say
from test_llm_agent import EMAIL, ORDER, report, run_cli

from passhat.customers.base import UserTurn
from passhat.customers.llm import OPENING, LLMUser
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.llm import ModelHub
from passhat.run_config import RunConfig

RETAIL = load_domain("retail")
TASK = RETAIL.tasks["retail-001"]


def play(replies: list[Reply], agent_says: list[str | None]) -> tuple[list[UserTurn], list[dict[str, Any]]]:
    """The customer's turns for the agent's messages (None: the opening), and what the server got."""

    async def go(server: FakeOpenAI) -> list[UserTurn]:
        config = RunConfig(personas=[], tasks=[], user="llm:openai/gpt-4.1-mini", user_base_url=server.url)
        hub = ModelHub.from_config(config)
        try:
            user = LLMUser(RETAIL, TASK, PERSONAS["skeptical"], random.Random(1), hub.endpoint("user"))
            return [await user.respond(text) for text in agent_says]
        finally:
            await hub.aclose()

    with FakeOpenAI(replies) as server:
        return asyncio.run(go(server)), server.requests


def test_the_prompt_holds_the_instruction_and_the_persona_and_the_agent_speaks_as_user() -> None:
    _, requests = play([say("Hi, please cancel an order."), say("It is " + ORDER)], [None, "Which order?"])
    system = requests[0]["messages"][0]["content"]
    assert TASK.instruction.strip() in system and PERSONAS["skeptical"].description in system
    assert requests[0]["messages"][1] == {"role": "user", "content": OPENING}
    assert requests[1]["messages"][-2:] == [
        {"role": "assistant", "content": "Hi, please cancel an order."}, {"role": "user", "content": "Which order?"},
    ]  # fmt: skip
    assert "tools" not in requests[0]


@pytest.mark.parametrize(
    ("said", "stop"),
    [("Thanks, that's all. ###SATISFIED###", "satisfied"), ("Forget it. ###UNSATISFIED###", "unsatisfied"),
     ("OK, I'll hold. ### transfer ###", "transferred"), ("Yes, go ahead.", None)],
)  # fmt: skip
def test_stop_markers(said: str, stop: str | None) -> None:
    turns, _ = play([say(f"Please cancel {ORDER}."), say(said)], [None, "Anything else?"])
    assert turns[1].stop == stop
    assert "###" not in turns[1].text


@pytest.mark.parametrize(
    ("opening", "reply", "why"),
    [("###SATISFIED###", "", "before asking"), (f"Cancel {ORDER}.", "  ", "empty message"),
     (f"Cancel {ORDER}.", "My other order is #R1234567.", "#R1234567"),
     (f"Cancel {ORDER}.", "Write to me at someone@else.example.", "someone@else.example")],
)  # fmt: skip
def test_detected_simulator_errors(opening: str, reply: str, why: str) -> None:
    turns, _ = play([say(opening), say(reply)], [None, "How can I help?"])
    broken = next(t for t in turns if t.stop)
    assert broken.stop == "user_simulator_error"
    assert why in broken.text


def test_facts_the_agent_gave_may_be_repeated() -> None:
    turns, _ = play([say(f"Cancel {ORDER}."), say("Yes, card_789261 is fine.")], [None, "Refund to card_789261?"])
    assert turns[1].stop is None


def customer(body: dict[str, Any]) -> Reply:
    """A customer model that answers the reference agent by the words of its last message."""
    last = body["messages"][-1]["content"].lower()
    answers = [
        ("support chat has opened", f"Hi, I'd like to cancel my order {ORDER}."),
        ("anything else", "No, that's all, thanks! ###SATISFIED###"), ("yes or no", "Yes, please go ahead."),
        ("email", f"It's {EMAIL}."), ("reason", "I no longer need it."),
    ]  # fmt: skip
    return say(next((a for cue, a in answers if cue in last), "Sorry, what do you mean?"))


def user_run(server: FakeOpenAI, tmp_path: Any) -> Any:
    return run_cli(
        "run", "--agent", "reference:perfect", "--user", "llm:openai/gpt-4.1-mini", "--user-base-url", server.url,
        "--tasks", "retail-001", "--personas", "baseline", "--trials", "1", "--out", str(tmp_path),
        "--run-id", "r1", "--json", str(tmp_path / "r1.json"),
    )  # fmt: skip


def test_an_llm_customer_plays_a_task_against_the_reference_agent(tmp_path: Any) -> None:
    with FakeOpenAI(then=customer) as server:
        result = user_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    m = report(tmp_path)["metrics"]
    assert (m["avg_reward"], m["user_simulator_errors"]) == (1.0, 0)
    assert all(m["role"] != "tool" and "tool_calls" not in m for r in server.requests for m in r["messages"])


def test_a_simulator_error_is_counted_apart_not_as_the_agents_failure(tmp_path: Any) -> None:
    with FakeOpenAI(then=lambda _: say("Never mind. ###UNSATISFIED###")) as server:
        result = user_run(server, tmp_path)
    m = report(tmp_path)["metrics"]
    assert (m["scenarios"], m["user_simulator_errors"], m["failure_signatures"]) == (0, 1, {})
    assert "user simulator errors" in " ".join(result.output.split())
