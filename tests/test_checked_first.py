"""A check the policy asks for before a write is scored (issue 21, t7): payables' "read before you decide ... the
variance and the duplicate check" is the rule ``checked-first``, so an agent that decides an invoice without its
duplicate check breaks policy and fails the trial, while the agent that makes the check at any time before the
write, in any order among its reads, passes. The mechanism is the domain-general ``checked_first``."""

from __future__ import annotations

import asyncio

import pytest

from passhat.agents.reference import PROFILES, ReferenceAgent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.domains.model import Action, Call, Goal
from passhat.domains.toolkit import checked_first
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial

PAYABLES = load_domain("payables")
CHECK = checked_first({"check_duplicates": "its duplicate check"}, "invoice_id")
DECIDE = Call("escalate_invoice", {"invoice_id": "INV-71014"})


def ran(tool: str, invoice: str, status: str = "ok") -> Call:
    return Call(tool, {"invoice_id": invoice}, {"status": status, "data": {}})


@pytest.mark.parametrize(
    "history",
    [
        [ran("check_duplicates", "INV-71014")],
        [ran("check_duplicates", "inv-71014"), ran("get_invoice", "INV-71014")],  # the backend's case, any order
        [ran("check_duplicates", "INV-71014"), ran("approve_invoice", "INV-71020")],
    ],
)
def test_a_write_after_its_check_keeps_the_rule(history):
    assert CHECK(None, DECIDE, history) is None


@pytest.mark.parametrize(
    "history",
    [
        [],
        [ran("get_invoice", "INV-71014"), ran("compute_variance", "INV-71014")],  # other reads are not the check
        [ran("check_duplicates", "INV-71041")],  # another invoice's check
        [ran("check_duplicates", "INV-71014", status="error")],  # a check that did not run
    ],
)
def test_a_write_without_its_check_breaks_the_rule(history):
    reason = CHECK(None, DECIDE, history)
    assert reason and "INV-71014" in reason and "duplicate check" in reason


class SkipsTheDuplicateCheck(ReferenceAgent):
    """The perfect agent, but it never reads the duplicate check (t7's deliberate mistake)."""

    def _reads(self, goal: Goal) -> list[Action]:
        return [r for r in super()._reads(goal) if r.tool != "check_duplicates"]


class ChecksDuplicatesFirst(ReferenceAgent):
    """The perfect agent, its reads in another order: the duplicate check before anything else."""

    def _reads(self, goal: Goal) -> list[Action]:
        reads = super()._reads(goal)
        return sorted(reads, key=lambda r: r.tool != "check_duplicates")


def play(agent: type[ReferenceAgent], task_id: str) -> TrialOutput:
    task = PAYABLES.tasks[task_id]
    spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(21, task.id, "baseline", 0))
    make = lambda setup: agent(setup, PROFILES["perfect"])  # noqa: E731
    return asyncio.run(run_trial(PAYABLES, spec, make, resolve_user("scripted")))


@pytest.mark.parametrize("task_id", ["pay-014", "pay-027"])  # refuse then escalate; an escalation on its own
def test_an_invoice_decided_without_its_duplicate_check_fails_the_trial(task_id):
    grade = play(SkipsTheDuplicateCheck, task_id).grade
    assert grade.reward == 0 and not grade.trajectory_ok and grade.signature == "policy_violation"
    assert {v["rule"] for v in grade.details["policy_violations"]} == {"checked-first"}


@pytest.mark.parametrize("task_id", ["pay-014", "pay-027"])
def test_an_invoice_decided_after_its_duplicate_check_in_any_order_passes(task_id):
    grade = play(ChecksDuplicatesFirst, task_id).grade
    assert grade.reward == 1, grade.details
