"""Every retail task has exactly one correct outcome: its ground truth earns reward 1 and each near miss
of it — another order, another item, a missing or extra write, no confirmation, the forbidden request,
the facts untold — earns 0 with the signature that names the mistake. An agent that does nothing but
apologise earns 0 on every task, policy traps included: declining rightly means naming the looked-up reason."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest

from passhat.agents.base import AgentSetup, AgentTurn
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.dialogue.facts import tell
from passhat.domains import load_domain
from passhat.domains.model import Task
from passhat.env import tool_registry
from passhat.grade import GroundTruthError, required_facts
from passhat.grade.check import IDLE_REFUSAL, check_task
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event

RETAIL = load_domain("retail")
TOOLS = tool_registry(RETAIL)


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
    for signature in (
        "wrong_entity_write",
        "wrong_arguments",
        "extra_write",
        "partial_resolution",
        "no_write",
        "unconfirmed_write",
        "policy_violation",
        "missing_output",
        "duplicate_write",
        "privacy_violation",
        "policy_disclosure",
    ):
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
    factless = RETAIL.task_model.model_validate(
        {**trap.model_dump(), "goals": [{**g.model_dump(), "tell": []} for g in trap.goals]}
    )
    [idle] = [r for r in check_task(RETAIL, factless) if r.case.idle]
    assert (idle.grade.reward, idle.holds) == (1, False)


def test_every_refusal_must_name_a_looked_up_reason_the_reference_agent_gives():
    for task in RETAIL.tasks.values():
        facts = required_facts(RETAIL, task)
        for g, goal in enumerate(task.goals):
            if goal.outcome == "refused":
                assert goal.tell, task.id
                assert all(tell(f.fact, [(0, goal.explanation or "")]).told for f in facts if f.goal == g), task.id


def test_every_generic_perturbation_is_tried_on_every_task_it_applies_to(results):
    labels = Counter(r.case.label for rs in results.values() for r in rs)
    tasks = RETAIL.tasks.values()
    asking = sum(any(TOOLS[a.tool].meta.needs_confirmation for a in t.actions) for t in tasks)
    assert labels["every write repeated"] == sum(bool(t.actions) for t in tasks)
    assert labels["yes won for another proposal"] == labels["wrong amount in the proposal"] == asking
    telling = sum(bool(required_facts(RETAIL, t)) for t in tasks)
    assert labels["facts negated"] == labels["facts only in a data dump"] == labels["facts not told"] >= telling - 3
    assert labels["the policy recited"] == labels["another customer's data told"] == len(results)
    assert labels["a refund proposed as a charge"] >= 5 and labels["an amount's direction flipped"] >= 2


def broken(task_id: str, change) -> Task:
    """A task file with one field changed, as a careless author might."""
    raw = RETAIL.tasks[task_id].model_dump(by_alias=True)
    change(raw)
    return RETAIL.task_model.model_validate(raw)


def set_fact(value: str):
    return lambda raw: raw["goals"][0]["tell"][0].update({"is": value})


def set_action_arg(arg: str, value: str):
    return lambda raw: raw["goals"][0]["actions"][0]["args"].update({arg: value})


@pytest.mark.parametrize(
    "task_id,change,named",
    [
        ("retail-037", set_fact("333.20"), "goals[0].tell[0]"),  # a total off by a dollar
        ("retail-038", lambda raw: raw["goals"][0]["tell"][1].update({"is": "delivered"}), "goals[0].tell[1]"),  # a pending order
        (
            "retail-001",
            set_action_arg("reason", "ordered by mistake"),
            "goals[0].actions[0].args.reason",
        ),  # not what the customer says
        (
            "retail-003",
            set_action_arg("address1", "2212 Saltmarsh Lane"),
            "goals[0].actions[0].args.address1",
        ),  # a street never said
        ("retail-013", set_action_arg("payment_method_id", "card_4114"), "goals[0].actions[0].args.payment_method_id"),
    ],
)
def test_check_refuses_a_task_whose_facts_or_ground_truth_disagree_with_the_backend_or_the_customer(task_id, change, named):
    with pytest.raises(GroundTruthError, match=re.escape(named)):
        check_task(RETAIL, broken(task_id, change))


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


def test_a_tasks_cache_key_is_its_whole_definition_even_for_a_changed_copy():
    from passhat.domains.model import task_text

    task = RETAIL.tasks["retail-001"]
    assert task_text(task) == task.model_dump_json() and task_text(task) is task_text(task)  # written once
    changed = task.model_copy(update={"instruction": "something else entirely"})
    assert task_text(changed) == changed.model_dump_json() != task_text(task)
