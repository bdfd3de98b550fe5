"""Reference agents against the scripted customer, through the real orchestrator and graders.

The perfect agent must pass every task under every persona in strict mode: that is what shows a task
is solvable and the customer understands it. The flawed profiles must fail in the ways they are
built to, and every run must be reproducible from its seed.
"""

from __future__ import annotations

import asyncio
import collections

import pytest
from test_customers import TASKS as BUILT_IN_TASKS

from passhat.agents import AGENTS, DEFAULT_AGENT, resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.domains.model import Task
from passhat.env import tool_registry
from passhat.errors import UserError
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial

RETAIL = load_domain("retail")
TASK_FILES = list(RETAIL.tasks.values())
ALL_TASKS = BUILT_IN_TASKS + TASK_FILES
TOOLS = tool_registry(RETAIL)


def play(agent: str, task: Task, persona: str = "baseline", trial: int = 0) -> TrialOutput:
    spec = TrialSpec(task, PERSONAS[persona], trial, trial_seed(11, task.id, persona, trial))
    return asyncio.run(run_trial(RETAIL, spec, resolve_agent(agent), resolve_user("scripted")))


def writes_needing_yes(task: Task, goals: int | None = None) -> bool:
    return any(TOOLS[a.tool].meta.needs_confirmation for g in task.goals[:goals] for a in g.actions)


@pytest.mark.parametrize("persona", list(PERSONAS))
@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_perfect_agent_passes_every_task_under_every_persona(task: Task, persona: str) -> None:
    out = play("reference:perfect", task, persona)
    assert out.grade.reward == 1, (out.grade.signature, out.grade.details, [e.to_dict() for e in out.events])


@pytest.mark.parametrize("task", [t for t in ALL_TASKS if writes_needing_yes(t)], ids=lambda t: t.id)
def test_hasty_agent_fails_every_write_task_and_writes_without_a_yes(task: Task) -> None:
    out = play("reference:hasty", task)
    assert out.grade.reward == 0
    if writes_needing_yes(task, goals=1):  # it stops after the first goal, so later writes never happen
        assert out.grade.signature == "unconfirmed_write"


def test_hasty_agent_closes_after_the_first_goal() -> None:
    task = next(t for t in BUILT_IN_TASKS if t.id == "status-then-transfer")
    out = play("reference:hasty", task)
    assert out.grade.reward == 0 and out.grade.details["end"] == "unsatisfied"


def test_flaky_agent_passes_most_trials_and_fails_in_several_ways() -> None:
    tasks = TASK_FILES or BUILT_IN_TASKS
    trials = max(2, 600 // (len(tasks) * len(PERSONAS)))
    outcomes = collections.Counter(
        play("reference:flaky", task, persona, trial).grade.signature
        for task in tasks
        for persona in PERSONAS
        for trial in range(trials)
    )
    failures = {sig: n for sig, n in outcomes.items() if sig is not None}
    assert 0 < sum(failures.values()) < outcomes[None] / 4, outcomes
    assert len(failures) >= 3, outcomes


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_same_seed_same_trajectory(agent: str) -> None:
    task = next(t for t in BUILT_IN_TASKS if t.id == "return-then-cancel")
    for persona in ("incoherent", "skeptical"):
        first, again = play(agent, task, persona, 3), play(agent, task, persona, 3)
        assert [e.to_dict() for e in first.events] == [e.to_dict() for e in again.events]


def test_perfect_agent_authenticates_first_and_numbers_its_calls() -> None:
    task = next(t for t in BUILT_IN_TASKS if t.id == "return-then-cancel")
    out = play("reference:perfect", task, "incoherent", 1)
    calls = [e for e in out.events if e.kind == "tool"]
    assert calls[0].name.startswith("find_customer")
    assert [e.call_id for e in calls] == [f"call_{n}" for n in range(1, len(calls) + 1)]


def test_resolve_agent() -> None:
    assert DEFAULT_AGENT == "reference:flaky" and DEFAULT_AGENT in AGENTS
    with pytest.raises(UserError, match=r"--agent.*reference:perfect.*reference:flaky.*reference:hasty"):
        resolve_agent("reference:sloppy")


def test_a_fact_with_no_value_on_the_backend_is_left_unsaid_not_a_crash(toy_domain) -> None:
    """After a slip of its own, the thing a fact is about may be gone: the agent says what it can look up."""
    import random

    from passhat.agents.base import AgentSetup
    from passhat.agents.reference import PROFILES, ReferenceAgent
    from passhat.domains.model import FactSpec, Goal
    from passhat.env import Environment

    def status_of(account: str) -> Goal:
        spec = FactSpec(fact="account_status", of={"account_id": account}, value="open")
        return Goal(kind="info", request=[f"is {account} open?"], outcome="answered", tell=[spec])

    env = Environment(toy_domain)
    try:
        agent = ReferenceAgent(AgentSetup(toy_domain, None, [], "", random.Random(0), env.db), PROFILES["perfect"])  # type: ignore[arg-type]
        assert agent._facts(status_of("A-99"), "Found:") == ""
        assert agent._facts(status_of("A-1"), "Found:") == "Found: account A-1 is open."
    finally:
        env.close()


def test_an_agent_that_slips_never_hands_off_where_the_domain_has_no_hand_off_tool(toy_domain) -> None:
    """The toy domain has no hand-off: a wrong decision is to decline, never a transfer it cannot make."""
    import random

    from passhat.agents.base import AgentSetup
    from passhat.agents.reference import ErrorProfile, ReferenceAgent
    from passhat.domains.model import Action, Goal

    always_wrong = ErrorProfile(wrong_decisions=1.0)
    close = Goal(
        kind="close", request=["close A-1"], outcome="done", actions=[Action(tool="close_account", args={"account_id": "A-1"})]
    )
    for seed in range(20):
        agent = ReferenceAgent(AgentSetup(toy_domain, None, [], "", random.Random(seed), None), always_wrong)  # type: ignore[arg-type]
        assert agent._decision(close) == "decline"
