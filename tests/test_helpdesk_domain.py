"""The built-in helpdesk domain: an IT service desk where several outcomes can be right and order matters.

Its callers identify by staff number and date of birth and talk about incidents (classify, apply a known
workaround, assign or reassign after a rejection, escalate by the priority rules, resolve) and change
requests (approval before implementation, entitlements, the change board). Every task is proved by
``check_task``; the perfect reference agent passes every task under every persona; the hasty one fails a
measurable share and the flaky one some; each rule refuses what the policy forbids and nothing else.

The proofs every domain shares (check, the reference agents, the seeded backend, the imports) are in
tests/test_every_domain.py; this file holds what is specific to this world.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
from pathlib import Path

import pytest

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains.model import Domain, Goal, Task
from passhat.env import Environment, tool_registry
from passhat.grade.check import check_task
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial

HELPDESK: Domain = importlib.import_module("passhat.domains.helpdesk").DOMAIN
FOLDER = Path(importlib.import_module("passhat.domains.helpdesk").__file__).parent
TASKS = list(HELPDESK.tasks.values())
TOOLS = tool_registry(HELPDESK)


@pytest.fixture(scope="module")
def results():
    """Check results of the tasks with several outcomes or a required order (every task is checked in test_every_domain)."""
    return {task.id: check_task(HELPDESK, task) for task in TASKS if len(task.acceptable) > 1 or task.order}


def play(agent: str, task: Task, persona: str, trial: int = 0) -> TrialOutput:
    spec = TrialSpec(task, PERSONAS[persona], trial, trial_seed(13, task.id, persona, trial))
    return asyncio.run(run_trial(HELPDESK, spec, resolve_agent(agent), resolve_user("scripted")))


# -- the tasks -----------------------------------------------------------------------------------------


def test_several_outcomes_and_required_orderings_are_declared_and_proven(results):
    """At least six tasks accept another end state and six require an order; check proves every outcome of each
    (a pass labelled with it) and breaks every ordering."""
    several = [t for t in TASKS if len(t.acceptable) > 1]
    ordered = [t for t in TASKS if t.order]
    assert len(several) >= 6 and len(ordered) >= 6, ([t.id for t in several], [t.id for t in ordered])
    for task in several:
        proven = {r.grade.outcome for r in results[task.id] if r.case.expect is None and r.holds}
        assert proven == {o.label for o in task.acceptable}, task.id
    for task in ordered:
        broken = [r for r in results[task.id] if r.case.expect == "out_of_order"]
        assert len(broken) == len(task.order) and all(r.applied and r.holds for r in broken), task.id


def _writes(task: Task) -> int:
    return sum(TOOLS[a.tool].meta.needs_confirmation for a in task.actions)


def _rules_refusing(task: Task, goal: Goal) -> set[str]:
    return {rule for call in goal.forbidden for rule in broken_rules(task.id, call.tool, dict(call.args))}


def broken_rules(verified: str | None, tool: str, args: dict) -> set[str]:
    """The rules a call breaks on a fresh backend, after the caller of task ``verified`` identified (None: nobody)."""
    env = Environment(HELPDESK)
    try:
        if verified is not None:
            caller = HELPDESK.tasks[verified].customer
            env.replay([HELPDESK.authenticate(caller, HELPDESK.kit.identity_text(caller))])
        return {v.rule for v in env.execute(tool, args).violations}
    finally:
        env.close()


def test_the_tasks_cover_every_outcome_one_to_three_writes_and_several_goals():
    assert len(TASKS) >= 30
    outcomes = collections.Counter(g.outcome for t in TASKS for g in t.goals)
    assert all(outcomes[o] for o in ("done", "refused", "answered", "transferred")), outcomes
    writes = collections.Counter(_writes(t) for t in TASKS)
    assert writes[0] and writes[1] and writes[2] and writes[3], writes
    assert sum(len(t.goals) > 1 for t in TASKS) >= 5


def test_every_rule_refuses_some_tasks_request():
    """Including identify-first: a caller asks for a colleague's ticket to be changed."""
    refusing = {rule for t in TASKS for g in t.goals if g.outcome == "refused" for rule in _rules_refusing(t, g)}
    assert refusing == {r.id for r in HELPDESK.rules}


@pytest.mark.parametrize(
    "verified,tool,args,rules",
    [
        (None, "apply_workaround", {"incident_id": "INC-1011", "known_error_id": "KE-11"}, {"identify-first"}),
        ("hd-001", "apply_workaround", {"incident_id": "INC-1021", "known_error_id": "KE-12"}, {"identify-first"}),  # not theirs
        ("hd-001", "apply_workaround", {"incident_id": "INC-1011", "known_error_id": "KE-11"}, set()),
        ("hd-001", "apply_workaround", {"incident_id": "INC-1011", "known_error_id": "KE-31"}, {"workaround-fits"}),  # a VPN fix
        ("hd-003", "apply_workaround", {"incident_id": "INC-1031", "known_error_id": "KE-13"}, {"workaround-fits"}),  # retired
        ("hd-010", "assign_incident", {"incident_id": "INC-1101", "group": "network"}, {"no-rejecting-group"}),
        ("hd-010", "assign_incident", {"incident_id": "INC-1101", "group": "endpoint"}, set()),
        ("hd-012", "escalate_incident", {"incident_id": "INC-1121", "priority": "high"}, {"priority-rules"}),
        ("hd-013", "escalate_incident", {"incident_id": "INC-1131", "priority": "critical"}, {"priority-rules"}),
        ("hd-013", "escalate_incident", {"incident_id": "INC-1131", "priority": "high"}, set()),  # business-critical
        ("hd-014", "escalate_incident", {"incident_id": "INC-1141", "priority": "high"}, set()),  # six people
        ("hd-011", "escalate_incident", {"incident_id": "INC-1111", "priority": "critical"}, set()),  # both
        ("hd-021", "resolve_incident", {"incident_id": "INC-1211"}, {"major-incident"}),
        ("hd-020", "resolve_incident", {"incident_id": "INC-1201"}, set()),
        ("hd-017", "request_approval", {"change_id": "CHG-5171"}, {"entitled-service"}),
        ("hd-017", "apply_change", {"change_id": "CHG-5171"}, {"entitled-service"}),
        ("hd-016", "request_approval", {"change_id": "CHG-5161"}, set()),
        ("hd-016", "apply_change", {"change_id": "CHG-5161"}, {"board-approval"}),
        ("hd-019", "apply_change", {"change_id": "CHG-5191"}, {"board-approval"}),  # pending
        ("hd-018", "apply_change", {"change_id": "CHG-5181"}, set()),  # approved
        ("hd-015", "apply_change", {"change_id": "CHG-5151"}, set()),  # approval first is the task's required ordering
        ("hd-025", "transfer_to_specialist", {"staff_number": "152647", "summary": "Lost laptop."}, set()),
        ("hd-025", "transfer_to_specialist", {"staff_number": "263758", "summary": "Lost laptop."}, {"identify-first"}),
    ],
)
def test_each_rule_refuses_what_the_policy_forbids_and_nothing_else(verified, tool, args, rules):
    assert broken_rules(verified, tool, args) == rules


@pytest.mark.parametrize("slot", [s for s in HELPDESK.kit.slots if s != "identity"])
def test_every_detail_is_one_a_caller_gives_only_when_asked_in_some_task(slot: str):
    """Each detail slot is exercised as a persona-sensitive question: no phrasing of the request says it."""
    asked = [t.id for t in TASKS for g in t.goals if all(HELPDESK.kit.missing(slot, g, request) for request in g.request)]
    assert asked, f"no task makes the agent ask for the {slot}"


# -- the reference agents against the scripted caller ----------------------------------------------------


def test_the_perfect_agent_reaches_each_acceptable_outcome_over_the_personas():
    """The reference agent picks one acceptable outcome per trial, and the scripted caller says yes to either."""
    for task in (t for t in TASKS if len(t.acceptable) > 1):
        outs = [play("reference:perfect", task, persona, trial) for persona in PERSONAS for trial in range(2)]
        assert all(out.grade.reward == 1 for out in outs), task.id
        assert {out.grade.outcome for out in outs} == {o.label for o in task.acceptable}, task.id
