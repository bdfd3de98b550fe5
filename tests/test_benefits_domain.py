"""The benefits domain, a motor club's member desk (src/passhat/domains/benefits): written against the public
domain contract, every task proved by check, and the hard parts of money that moves held to the policy.

Being verified is not being entitled: a plan's benefit applies only to a callout made while the member held
that paid plan. Refunds and dues move through the payment provider when the payments guard is on; refunds
over $150 or of a charge under a bank dispute become tickets whose priority and internal note come from the
policy, and the money moves only when the operator carries the ticket out.

The proofs every domain shares (check, the reference agents, the seeded backend, the imports) are in
tests/test_every_domain.py; this file holds what is specific to this world.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import json
from pathlib import Path

import pytest

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains.model import Domain, Goal, Task
from passhat.env import Environment, tool_registry
from passhat.grade.expected import expected_environment, required_facts
from passhat.guard import GUARDS, ToolPath
from passhat.guard.payments import totals
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial

BENEFITS: Domain = importlib.import_module("passhat.domains.benefits").DOMAIN
FOLDER = Path(importlib.import_module("passhat.domains.benefits").__file__).parent
TASKS = list(BENEFITS.tasks.values())
TOOLS = tool_registry(BENEFITS)


def play(agent: str, task: Task, persona: str, trial: int = 0, guards: tuple[str, ...] = ()) -> TrialOutput:
    spec = TrialSpec(task, PERSONAS[persona], trial, trial_seed(13, task.id, persona, trial))
    return asyncio.run(run_trial(BENEFITS, spec, resolve_agent(agent), resolve_user("scripted"), guards=list(guards)))


# -- the tasks -----------------------------------------------------------------------------------------


def _writes(task: Task) -> int:
    return sum(TOOLS[a.tool].meta.needs_confirmation for a in task.actions)


def test_the_tasks_cover_every_outcome_one_and_two_writes_many_goals_and_the_hand_off():
    assert len(TASKS) >= 30
    outcomes = collections.Counter(g.outcome for t in TASKS for g in t.goals)
    assert all(outcomes[o] >= 3 for o in ("done", "refused", "answered", "transferred")), outcomes
    writes = collections.Counter(_writes(t) for t in TASKS if all(g.outcome == "done" for g in t.goals))
    assert writes[1] and writes[2], writes
    assert sum(len(t.goals) > 1 for t in TASKS) >= 8
    handed_off = [t.id for t in TASKS if "human_gate" in t.guards]
    assert len(handed_off) >= 5
    refusing = {v for t in TASKS for g in t.goals if g.outcome == "refused" for v in _rules_refusing(t, g)}
    assert refusing == {r.id for r in BENEFITS.rules}  # a partner's charge too: one member per conversation


def _rules_refusing(task: Task, goal: Goal) -> set[str]:
    """The rules the goal's forbidden calls break, on the backend as the goals before it leave it."""
    env = Environment(BENEFITS)
    try:
        env.replay([BENEFITS.authenticate(task.customer, BENEFITS.kit.identity_text(task.customer))])
        for earlier in task.goals[: task.goals.index(goal)]:
            env.replay(earlier.actions)
        return {v.rule for call in goal.forbidden for v in env.execute(call.tool, dict(call.args)).violations}
    finally:
        env.close()


def broken_rules(verified: str | None, tool: str, args: dict) -> set[str]:
    """The rules a call breaks on a fresh backend, after the member of task ``verified`` identified (None: nobody)."""
    env = Environment(BENEFITS)
    try:
        if verified is not None:
            member = BENEFITS.tasks[verified].customer
            env.replay([BENEFITS.authenticate(member, BENEFITS.kit.identity_text(member))])
        return {v.rule for v in env.execute(tool, args).violations}
    finally:
        env.close()


BENEFIT = "apply_plan_benefit"


@pytest.mark.parametrize(
    "verified,tool,args,rules",
    [
        (None, BENEFIT, {"charge_id": "CH-50101", "plan": "plus", "payment_method_id": "PM-30011"}, {"identify-first"}),
        ("benefits-002", BENEFIT, {"charge_id": "CH-50101", "plan": "plus", "payment_method_id": "PM-30011"}, {"identify-first"}),
        ("benefits-001", BENEFIT, {"charge_id": "CH-50101", "plan": "plus", "payment_method_id": "PM-30011"}, set()),
        # the plan held on the day of the callout, not today's: Classic in February, Plus since March
        ("benefits-003", BENEFIT, {"charge_id": "CH-50301", "plan": "classic", "payment_method_id": "PM-30031"}, set()),
        (
            "benefits-003",
            BENEFIT,
            {"charge_id": "CH-50301", "plan": "plus", "payment_method_id": "PM-30031"},
            {"entitled-on-service-date"},
        ),
        # signed in, on the free plan that day: no paid benefit, whatever plan is named
        (
            "benefits-004",
            BENEFIT,
            {"charge_id": "CH-50401", "plan": "plus", "payment_method_id": "PM-30041"},
            {"entitled-on-service-date"},
        ),
        (
            "benefits-005",
            BENEFIT,
            {"charge_id": "CH-50501", "plan": "classic", "payment_method_id": "PM-30051"},
            {"entitled-on-service-date"},
        ),
        # a membership period covers its last day, not the day after
        ("benefits-029", BENEFIT, {"charge_id": "CH-52901", "plan": "classic", "payment_method_id": "PM-30291"}, set()),
        (
            "benefits-030",
            BENEFIT,
            {"charge_id": "CH-53001", "plan": "classic", "payment_method_id": "PM-30301"},
            {"entitled-on-service-date"},
        ),
        # refunds go to the card that paid or to club credit
        (
            "benefits-023",
            BENEFIT,
            {"charge_id": "CH-52301", "plan": "plus", "payment_method_id": "PM-30232"},
            {"refund-destination"},
        ),
        ("benefits-002", BENEFIT, {"charge_id": "CH-50201", "plan": "classic", "payment_method_id": "PM-30029"}, set()),
        ("benefits-013", "waive_late_fee", {"charge_id": "CH-51301", "payment_method_id": "PM-30131"}, set()),
        ("benefits-014", "waive_late_fee", {"charge_id": "CH-51402", "payment_method_id": "PM-30141"}, {"one-waiver-a-year"}),
        (
            "benefits-015",
            "waive_late_fee",
            {"charge_id": "CH-51501", "payment_method_id": "PM-30151"},
            {"waiver-needs-paid-plan"},
        ),
        (
            "benefits-011",
            "renew_membership",
            {"member_id": "M-3011", "plan": "premier", "payment_method_id": "PM-30111"},
            {"renewal-window"},
        ),
        ("benefits-010", "renew_membership", {"member_id": "M-3010", "plan": "plus", "payment_method_id": "PM-30101"}, set()),
        (
            "benefits-033",
            "renew_membership",
            {"member_id": "M-3033", "plan": "classic", "payment_method_id": "PM-30339"},
            {"dues-by-card"},
        ),
    ],
)
def test_each_rule_refuses_what_the_policy_forbids_and_nothing_else(verified, tool, args, rules):
    assert broken_rules(verified, tool, args) == rules


@pytest.mark.parametrize("slot", [s for s in BENEFITS.kit.slots if s != "identity"])
def test_every_detail_is_one_a_member_gives_only_when_asked_in_some_task(slot: str):
    asked = [t.id for t in TASKS for g in t.goals if all(BENEFITS.kit.missing(slot, g, request) for request in g.request)]
    assert asked, f"no task makes the agent ask for the {slot}"


# -- the human gate: the policy's priority, an internal note, the money only after approval ----------------


def _ticket(task_id: str) -> dict:
    env = expected_environment(BENEFITS, BENEFITS.tasks[task_id])
    row = env.db.execute("SELECT tool, priority, note, status FROM _passhat_tickets").fetchone()
    return dict(zip(("tool", "priority", "note", "status"), row, strict=True))


@pytest.mark.parametrize(
    "task_id,priority",
    [
        ("benefits-007", "normal"),  # $210 back for a Plus member
        ("benefits-027", "normal"),
        ("benefits-006", "high"),  # a Premier member
        ("benefits-022", "high"),  # $310, and Premier
        ("benefits-008", "urgent"),  # $45 back, but the charge is under a bank dispute
        ("benefits-026", "urgent"),  # a bank dispute outranks Premier
    ],
)
def test_a_gated_refund_is_a_ticket_with_the_policys_priority_and_an_internal_note(task_id, priority):
    ticket = _ticket(task_id)
    assert ticket["priority"] == priority and ticket["status"] == "done"
    assert "refund $" in ticket["note"] and ("chargeback" in ticket["note"]) == (priority == "urgent")
    assert [f.fact.value for f in required_facts(BENEFITS, BENEFITS.tasks[task_id]) if f.goal is None] == ["Dana Whitfield"]


def test_the_refund_moves_only_when_the_operator_carries_the_ticket_out():
    task = BENEFITS.tasks["benefits-006"]
    env = Environment(BENEFITS)
    path = ToolPath(env, ["human_gate", "payments"], conversation_id="gate")
    try:
        path.execute("find_member", {"member_number": "NW5106724", "last_name": "Gulbrandsen"})
        filed = path.execute(*_call(task.actions[0]))
        assert filed.guard["decision"] == "ticket" and filed.result["data"]["priority"] == "high"
        assert "note" not in filed.result["data"]  # the internal note is for staff, not the agent
        assert env.db.execute("SELECT refunded FROM charges WHERE id = 'CH-50601'").fetchone()[0] == 0
        assert totals(env.db, "CH-50601") == {}
        [done] = path.settle()
        assert done.guard["decision"] == "operator_done"
        assert env.db.execute("SELECT refunded FROM charges WHERE id = 'CH-50601'").fetchone()[0] == 240.0
        assert totals(env.db, "CH-50601") == {"CH-50601": (24000, 24000)}
    finally:
        env.close()


def _call(action) -> tuple[str, dict]:
    return action.tool, dict(action.args)


@pytest.mark.parametrize(
    "task_id,owner,priority", [("benefits-018", "Tobias Renner", "normal"), ("benefits-019", "Ines Calloway", "high")]
)
def test_an_escalated_case_has_the_owner_and_priority_the_policy_gives_its_members_tier(task_id, owner, priority):
    env = expected_environment(BENEFITS, BENEFITS.tasks[task_id])
    [(who, how, status, history)] = env.db.execute("SELECT owner, priority, status, history FROM cases").fetchall()
    assert (who, how, status) == (owner, priority, "open")
    assert json.loads(history)[0]["by"] == "desk assistant"


# -- money through the payment provider ---------------------------------------------------------------------


def test_refunds_and_dues_go_through_the_sandbox_provider_and_a_repeated_call_moves_nothing_twice():
    env = Environment(BENEFITS)
    path = ToolPath(env, ["payments", "idempotency"], conversation_id="money")
    try:
        path.execute("find_member", {"member_number": "NW5110168", "last_name": "Kruger"})
        [renew, adjust] = [a for g in BENEFITS.tasks["benefits-010"].goals for a in g.actions]
        assert path.execute(*_call(renew)).ok and path.execute(*_call(adjust)).ok
        again = path.execute(*_call(adjust))
        assert again.guard["decision"] == "replayed"
        dues = env.db.execute("SELECT id FROM charges WHERE member_id = 'M-3010' AND service = 'annual_dues'").fetchone()[0]
        assert totals(env.db) == {dues: (12900, 0), "CH-51001": (5500, 5500)}
    finally:
        env.close()


def test_the_provider_trusts_its_own_ledger_not_a_backend_that_forgot_a_refund():
    env = Environment(BENEFITS)
    path = ToolPath(env, ["payments"], conversation_id="money")
    refund = {"charge_id": "CH-50101", "plan": "plus", "payment_method_id": "PM-30011"}
    try:
        path.execute("find_member", {"member_number": "NW5102231", "last_name": "Brandvold"})
        assert path.execute(BENEFIT, refund).ok
        with env.db:  # the backend loses its record of the refund
            env.db.execute("DELETE FROM adjustments WHERE charge_id = 'CH-50101'")
            env.db.execute("UPDATE charges SET refunded = 0 WHERE id = 'CH-50101'")
        again = path.execute(BENEFIT, refund)
        assert not again.ok and "refund" in again.result["error"]["message"]
        assert totals(env.db, "CH-50101") == {"CH-50101": (9000, 9000)}
    finally:
        env.close()


# -- the reference agents against the scripted member ----------------------------------------------------


def test_the_perfect_agent_passes_through_every_guard():
    failed = [
        (t.id, out.grade.signature)
        for t in TASKS
        if (out := play("reference:perfect", t, "baseline", guards=GUARDS)).grade.reward != 1
    ]
    assert failed == []
