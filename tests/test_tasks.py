"""Every retail task has exactly one correct outcome: its ground truth earns reward 1 and each near miss
of it — another order, another item, a missing or extra write, no confirmation, the forbidden request,
the facts untold — earns 0 with the signature that names the mistake. An agent that does nothing but
apologise earns 0 on every task, policy traps included: declining rightly means naming the looked-up reason."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from passhat.agents.base import AgentSetup, AgentTurn
from passhat.dialogue import fact_said
from passhat.domains import load_domain
from passhat.domains.model import Task
from passhat.grade.check import IDLE_REFUSAL, check_task
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event
from passhat.users import resolve_user
from passhat.users.personas import PERSONAS

RETAIL = load_domain("retail")


@pytest.fixture(scope="module")
def results():
    return {task_id: check_task(RETAIL, task) for task_id, task in RETAIL.tasks.items()}


def test_the_task_set_is_large_and_varied():
    tasks = list(RETAIL.tasks.values())
    assert len(tasks) >= 40
    tags = Counter(tag for t in tasks for tag in t.tags)
    assert tags["writes:0"] >= 5 and tags["writes:1"] >= 10 and tags["writes:2"] + tags["writes:3"] >= 5
    assert tags["compound"] >= 5 and tags["policy-trap"] >= 5 and tags["multi-order"] >= 3
    outcomes = Counter(g.outcome for t in tasks for g in t.goals)
    assert all(outcomes[o] for o in ("done", "refused", "answered", "transferred"))


def test_every_case_of_every_task_holds(results):
    broken = [
        (task_id, r.case.label, r.case.expect, r.grade.reward, r.grade.signature)
        for task_id, rs in results.items()
        for r in rs
        if not r.holds
    ]
    assert broken == []


def test_the_perturbation_family_is_really_exercised(results):
    """Guards against a check that holds only because its near misses were never tried."""
    applied = Counter(r.case.expect for rs in results.values() for r in rs if r.applied)
    for signature in ("wrong_entity_write", "wrong_arguments", "extra_write", "partial_resolution", "no_write",
                      "unconfirmed_write", "policy_violation", "missing_output"):
        assert applied[signature] >= 3, signature
    assert applied[None] == 2 * len(results)  # ground truth, strict and tau


def test_no_task_rewards_an_agent_that_does_nothing(results):
    """The do-nothing case is proved for every task: no identity check, no lookup, no write, only an apology."""
    idle = {task_id: [r for r in rs if r.case.idle] for task_id, rs in results.items()}
    assert all(len(rs) == 1 for rs in idle.values())
    rewarded = {task_id: rs[0].grade.signature for task_id, rs in idle.items() if rs[0].grade.reward or not rs[0].holds}
    assert rewarded == {}


def test_the_do_nothing_case_catches_a_trap_whose_refusal_needs_no_facts():
    """Without a fact only a lookup gives, a bare apology would pass a refusal task: the case must say so."""
    trap = RETAIL.tasks["retail-026"]
    factless = Task.model_validate({**trap.model_dump(), "goals": [{**g.model_dump(), "tell": []} for g in trap.goals]})
    [idle] = [r for r in check_task(RETAIL, factless) if r.case.idle]
    assert (idle.grade.reward, idle.holds) == (1, False)


def test_every_refusal_must_name_a_looked_up_reason_the_reference_agent_gives():
    for task in RETAIL.tasks.values():
        for goal in task.goals:
            if goal.outcome == "refused":
                assert goal.tell, task.id
                assert all(fact_said(f, goal.explanation or "") for f in goal.tell), task.id


class AlwaysRefuses:
    """An agent under test that helps nobody: no identity check, no lookup, no write."""

    def __init__(self, setup: AgentSetup):
        pass

    async def act(self, events: list[Event]) -> AgentTurn:
        return AgentTurn(text=IDLE_REFUSAL)


@pytest.mark.parametrize("persona", list(PERSONAS))
@pytest.mark.parametrize("task", list(RETAIL.tasks.values()), ids=lambda t: t.id)
def test_an_agent_that_always_refuses_earns_nothing(task, persona):
    spec = TrialSpec(task, PERSONAS[persona], 0, trial_seed(11, task.id, persona, 0))
    out = asyncio.run(run_trial(RETAIL, spec, AlwaysRefuses, resolve_user("scripted")))
    assert out.grade.reward == 0, (out.grade.details, [e.to_dict() for e in out.events])
