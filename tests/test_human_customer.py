"""A customer played by a person: its trial is a trial like any other, graded and stored in a human run, and the
stored grade equals the grade of the same words replayed; controls end it, an idle person abandons it (stored, not
scored), and several people work one run at once."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from passhat.agents import resolve_agent
from passhat.customers.human import Control, HumanCustomer, ReplayedCustomer
from passhat.customers.scripted import ScriptedUser
from passhat.domains import load_domain
from passhat.errors import UserError
from passhat.run.human import HumanRuns, HumanSession
from passhat.run.trial import run_trial
from passhat.store import ResultStore
from passhat.trajectory import Event

CONTROL_OF: dict[str | None, Control] = {"satisfied": "done", "unsatisfied": "give_up", "abandoned": "ask_for_person"}


class Trail(list[tuple[str, str, dict[str, Any]]]):
    """The actions recorded, as the web app's audit trail would get them."""

    def __call__(self, action: str, by: str, **details: Any) -> None:
        self.append((action, by, details))


async def play_as_the_scripted_customer(session: HumanSession) -> None:
    """A person who types what the scripted customer would say, until the trial is stored."""
    domain = load_domain("retail")
    scripted = ScriptedUser(domain, session.spec.task, session.spec.persona, random.Random(7))
    customer = session.customer
    while session.record is None:
        if customer.your_turn:
            seen = [s.text for s in customer.transcript if s.who == "agent"]
            turn = await scripted.respond(seen[-1] if customer.transcript else None)
            customer.say(turn.text, CONTROL_OF.get(turn.stop))
        await asyncio.sleep(0.001)


def runs(tmp_path: Path, idle: float = 30.0) -> tuple[HumanRuns, Trail]:
    trail = Trail()
    return HumanRuns(tmp_path, "reference:perfect", idle, trail), trail


async def replayed_grade(session: HumanSession) -> dict[str, Any]:
    """The grade of the stored trial's customer words, replayed against the same agent and seed."""
    assert session.record is not None
    events = [Event.from_dict(e) for e in session.record.events]
    out = await run_trial(
        load_domain("retail"), session.spec, resolve_agent("reference:perfect"), ReplayedCustomer.from_events(events)
    )
    return out.grade.to_dict()


@pytest.mark.parametrize("task_id", ["retail-001", "retail-002"])
def test_a_persons_trial_is_stored_graded_and_equals_its_words_replayed(tmp_path: Path, task_id: str):
    async def scenario() -> None:
        human, trail = runs(tmp_path)
        session = await human.start("tess", "retail", task_id, "baseline")
        await play_as_the_scripted_customer(session)
        assert session.state == "graded" and session.record is not None
        assert session.record.reward == 1, session.record.grade
        assert await replayed_grade(session) == session.record.grade
        assert [a for a, by, _ in trail if by == "tess"] == ["human_trial_started", "human_trial_stored"]
        await human.aclose()

    asyncio.run(scenario())
    [run_dir] = tmp_path.iterdir()
    with ResultStore.open(run_dir) as store:
        assert store.config["user"] == "human" and store.config["agent"] == "reference:perfect"
        [stored] = store.trials()
    assert (stored.task_id, stored.persona, stored.trial, stored.reward) == (task_id, "baseline", 0, 1)


def test_giving_up_ends_the_trial_as_the_customers_leaving_and_it_is_graded_like_a_replay(tmp_path: Path):
    async def scenario() -> None:
        human, _ = runs(tmp_path)
        session = await human.start("tess", "retail", "retail-001", "baseline")
        session.customer.say("Hi, I want to cancel an order.")
        while not session.customer.your_turn:
            await asyncio.sleep(0.001)
        session.customer.say("", "give_up")
        await session.playing
        assert session.record is not None and session.record.reward == 0
        assert session.record.events[-1] == {"kind": "end", "text": "unsatisfied"}
        assert "Never mind" in session.record.events[-2]["text"]
        assert await replayed_grade(session) == session.record.grade
        await human.aclose()

    asyncio.run(scenario())


def test_a_person_idle_past_the_timeout_abandons_the_trial_which_is_stored_unscored(tmp_path: Path):
    async def scenario() -> None:
        human, trail = runs(tmp_path, idle=0.05)
        session = await human.start("tess", "retail", "retail-001", "baseline")
        await session.playing
        assert session.state == "abandoned" and session.record is not None
        assert session.record.reward is None and "the trial is abandoned" in (session.record.infra_error or "")
        assert trail[-1][2]["state"] == "abandoned"
        with pytest.raises(UserError, match="this conversation is over"):
            session.customer.say("hello?")
        again = await human.start("tess", "retail", "retail-001", "baseline")
        assert again.spec.trial == 1  # the abandoned trial keeps its place
        await human.aclose()

    asyncio.run(scenario())


def test_two_people_work_one_run_at_once_on_the_same_scenario(tmp_path: Path):
    async def scenario() -> None:
        human, _ = runs(tmp_path)
        first = await human.start("tess", "retail", "retail-001", "baseline")
        second = await human.start("omar", "retail", "retail-001", "baseline")
        assert (first.spec.trial, second.spec.trial) == (0, 1) and first.spec.seed != second.spec.seed
        await asyncio.gather(play_as_the_scripted_customer(first), play_as_the_scripted_customer(second))
        assert first.run_id == second.run_id and first.record and second.record
        assert (first.record.reward, second.record.reward) == (1, 1)
        with pytest.raises(UserError, match="no such session of yours"):
            human.session(first.id, "omar")
        await human.aclose()

    asyncio.run(scenario())


def test_the_person_cannot_talk_over_the_agent_nor_send_nothing():
    async def scenario() -> None:
        customer = HumanCustomer(idle_timeout=5)
        with pytest.raises(UserError, match="the message is empty"):
            customer.say("   ")
        opening = asyncio.ensure_future(customer.respond(None))
        await asyncio.sleep(0)
        customer.say("Hello")
        assert (await opening).text == "Hello" and customer.agent_working
        with pytest.raises(UserError, match="the agent is still answering"):
            customer.say("are you there?")
        with pytest.raises(UserError, match="unknown control"):
            customer.say("bye", "hang_up")  # type: ignore[arg-type]

    asyncio.run(scenario())


def test_an_unknown_task_or_persona_is_refused_by_name(tmp_path: Path):
    human, _ = runs(tmp_path)
    with pytest.raises(UserError, match="no task 'retail-999'"):
        asyncio.run(human.start("tess", "retail", "retail-999", "baseline"))
    with pytest.raises(UserError, match="unknown persona 'grumpy'"):
        asyncio.run(human.start("tess", "retail", "retail-001", "grumpy"))
