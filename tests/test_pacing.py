"""Trials of one event loop take turns (Pacing): no more conversations at once than the slots allow, a trial
waiting for a slot starts talking before the trial that freed it is graded, and one trial is graded at a time.
What a trial records does not depend on the pacing."""

from __future__ import annotations

import asyncio
from typing import Any

import passhat.run.trial as trial_module
from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.run.seeding import trial_seed
from passhat.run.trial import Pacing, TrialSpec, run_trial

RETAIL = load_domain("retail")
TASKS = [RETAIL.tasks[t] for t in ("retail-001", "retail-003", "retail-010", "retail-012")]


def spec(number: int) -> TrialSpec:
    task = TASKS[number]
    return TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(3, task.id, "baseline", 0))


class Yielding:
    """A customer who, like a model, lets the event loop run other trials while it answers."""

    def __init__(self, user: Any):
        self._user = user

    async def respond(self, said: Any) -> Any:
        await asyncio.sleep(0)
        return await self._user.respond(said)


class Timeline:
    """What happens, in order: a trial starting to talk (its customer made), its conversation ending, its grading."""

    def __init__(self, monkeypatch: Any):
        self.log: list[tuple[str, str]] = []
        scripted, talkers = resolve_user("scripted"), {}
        real_converse, real_grade = trial_module._converse, trial_module.grade_trial

        def make_user(domain, task, persona, rng):  # type: ignore[no-untyped-def]
            self.log.append(("talks", task.id))
            user = Yielding(scripted(domain, task, persona, rng))
            talkers[id(user)] = task.id
            return user

        async def converse(path, agent, user, *args):  # type: ignore[no-untyped-def]
            events = await real_converse(path, agent, user, *args)
            self.log.append(("ends", talkers[id(user)]))
            return events

        def grade(domain, task, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.log.append(("graded", task.id))
            return real_grade(domain, task, *args, **kwargs)

        monkeypatch.setattr(trial_module, "_converse", converse)
        monkeypatch.setattr(trial_module, "grade_trial", grade)
        self.make_user = make_user

    def play(self, pacing: Pacing | None, count: int) -> list:
        async def all_of_them() -> list:
            agent = resolve_agent("reference:perfect")
            return await asyncio.gather(*(run_trial(RETAIL, spec(n), agent, self.make_user, pacing=pacing) for n in range(count)))

        return asyncio.run(all_of_them())


def test_no_more_conversations_at_once_than_the_slots(monkeypatch):
    timeline = Timeline(monkeypatch)
    timeline.play(Pacing(asyncio.Semaphore(2)), 4)
    talking = most = 0
    for what, _ in timeline.log:
        talking += {"talks": 1, "ends": -1}.get(what, 0)
        most = max(most, talking)
    assert most == 2


def test_the_trial_waiting_for_a_slot_talks_before_the_one_that_freed_it_is_graded(monkeypatch):
    timeline = Timeline(monkeypatch)
    timeline.play(Pacing(asyncio.Semaphore(1)), 2)
    first, second = TASKS[0].id, TASKS[1].id
    assert timeline.log.index(("talks", second)) == timeline.log.index(("ends", first)) + 1
    assert timeline.log.index(("talks", second)) < timeline.log.index(("graded", first))
    assert [e for e in timeline.log if e[0] == "graded"] == [("graded", first), ("graded", second)]


def test_pacing_changes_no_trial_record(monkeypatch):
    timeline = Timeline(monkeypatch)
    paced, free = timeline.play(Pacing(asyncio.Semaphore(1)), 4), timeline.play(None, 4)
    assert [(o.events, o.grade) for o in paced] == [(o.events, o.grade) for o in free]
