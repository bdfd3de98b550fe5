"""The payables domain: an accounts-payable agent works the exception queue with an AP clerk.

Its invoices disagree with their purchase orders and receipts the ways real ones do (billed by the piece
against an order by the box, under the vendor's own codes, one order line on several invoice lines, a
surcharge nobody ordered, nothing received yet), and its tasks are chains of 3 to 18 dependent steps
whose length each task carries as a ``steps-N`` tag. Every task is proved like retail's; the perfect
reference agent passes every trial under every persona, the hasty one fails a large share and the flaky
one some; the rules refuse what the policy forbids and nothing else.

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
from passhat.domains.model import Action, Call, Domain, Goal, Task
from passhat.env import Environment, tool_registry
from passhat.grade.steps import step_count
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial

PAYABLES: Domain = importlib.import_module("passhat.domains.payables").DOMAIN
FOLDER = Path(importlib.import_module("passhat.domains.payables").__file__).parent
TASKS = list(PAYABLES.tasks.values())
TOOLS = tool_registry(PAYABLES)


def play(agent: str, task: Task, persona: str, trial: int = 0) -> TrialOutput:
    spec = TrialSpec(task, PERSONAS[persona], trial, trial_seed(13, task.id, persona, trial))
    return asyncio.run(run_trial(PAYABLES, spec, resolve_agent(agent), resolve_user("scripted")))


def steps_tag(task: Task) -> int:
    [tag] = [t for t in task.tags if t.startswith("steps-")]
    return int(tag.removeprefix("steps-"))


# -- the tasks -----------------------------------------------------------------------------------------


def test_each_steps_tag_is_the_length_of_the_tasks_plan():
    assert {t.id: steps_tag(t) for t in TASKS} == {t.id: step_count(PAYABLES, t) for t in TASKS}


def test_the_chains_spread_from_3_to_18_steps():
    """The compounding curve needs short, middling and long chains, several of each."""
    lengths = [steps_tag(t) for t in TASKS]
    assert min(lengths) == 3 and max(lengths) == 18
    bands = collections.Counter("3-5" if n <= 5 else "6-10" if n <= 10 else "11-18" for n in lengths)
    assert all(bands[b] >= 5 for b in ("3-5", "6-10", "11-18")), bands


def _rules_refusing(task: Task, goal: Goal) -> set[str]:
    return {rule for call in goal.forbidden for rule in broken_rules(task.id, call.tool, dict(call.args))}


def test_the_tasks_cover_every_outcome_many_writes_and_every_refusing_rule():
    assert len(TASKS) >= 30
    outcomes = collections.Counter(g.outcome for t in TASKS for g in t.goals)
    assert all(outcomes[o] for o in ("done", "refused", "answered", "transferred")), outcomes
    writes = collections.Counter(sum(TOOLS[a.tool].meta.needs_confirmation for a in t.actions) for t in TASKS)
    assert writes[1] and writes[2] and max(writes) >= 7, writes
    assert sum(len(t.goals) > 1 for t in TASKS) >= 8
    refusing = {r for t in TASKS for g in t.goals if g.outcome == "refused" for r in _rules_refusing(t, g)}
    assert refusing == {"own-company", "within-tolerance", "no-double-payment", "approval-limit", "matched-amount"}


def broken_rules(verified: str | None, tool: str, args: dict, read: bool = True) -> set[str]:
    """The rules a call breaks on a fresh backend, after the clerk of task ``verified`` identified (None: nobody)
    and, with ``read``, after the reads a careful agent makes before it."""
    env = Environment(PAYABLES)
    try:
        if verified is not None:
            clerk = PAYABLES.tasks[verified].customer
            env.replay([PAYABLES.authenticate(clerk, PAYABLES.kit.identity_text(clerk))])
        if read:
            env.replay(PAYABLES.lookups(env.db, Action(tool=tool, args=args)))
        return {v.rule for v in env.execute(tool, args).violations}
    finally:
        env.close()


@pytest.mark.parametrize(
    "verified,tool,args,rules",
    [
        (None, "approve_invoice", {"invoice_id": "INV-71001"}, {"identify-first"}),
        ("pay-001", "approve_invoice", {"invoice_id": "INV-71001"}, set()),
        ("pay-001", "approve_invoice", {"invoice_id": "INV-71015"}, {"own-company"}),  # a BW-US clerk, a BW-UK invoice
        ("pay-012", "approve_invoice", {"invoice_id": "INV-71012"}, {"within-tolerance"}),
        ("pay-012", "adjust_invoice", {"invoice_id": "INV-71012", "amount": 2640.0}, set()),  # to the matched amount
        ("pay-016", "adjust_invoice", {"invoice_id": "INV-71016", "amount": 600.0}, {"matched-amount"}),
        ("pay-013", "approve_invoice", {"invoice_id": "INV-71013"}, {"no-double-payment"}),
        ("pay-013", "hold_invoice", {"invoice_id": "INV-71013", "reason": "duplicate"}, set()),
        ("pay-014", "approve_invoice", {"invoice_id": "INV-71014"}, {"approval-limit"}),  # $3,870.00 over $2,500.00
        ("pay-014", "escalate_invoice", {"invoice_id": "INV-71014"}, set()),
        ("pay-030", "approve_invoice", {"invoice_id": "INV-71034"}, {"within-tolerance"}),  # the vendor's own 0% wins
        ("pay-031", "approve_invoice", {"invoice_id": "INV-71035"}, set()),  # the vendor's own 3% wins over 1%
        ("pay-020", "transfer_to_controller", {"employee_number": "E-40173", "summary": "bank details"}, {"identify-first"}),
        ("pay-020", "transfer_to_controller", {"employee_number": "E-40455", "summary": "bank details"}, set()),
    ],
)
def test_each_rule_refuses_what_the_policy_forbids_and_nothing_else(verified, tool, args, rules):
    assert broken_rules(verified, tool, args) == rules


@pytest.mark.parametrize("invoice_id,gated", [("INV-71031", True), ("INV-71014", False)])  # $7,040.00 and $3,870.00
def test_with_the_human_gate_a_payment_over_5000_needs_a_second_person(invoice_id: str, gated: bool):
    env = Environment(PAYABLES)
    try:
        [gate] = PAYABLES.gates
        reason = gate.check(env.db, Call("approve_invoice", {"invoice_id": invoice_id}), [])
    finally:
        env.close()
    assert bool(reason) == gated, reason


@pytest.mark.parametrize("slot", [s for s in PAYABLES.kit.slots if s != "identity"])
def test_every_detail_is_one_a_clerk_gives_only_when_asked_in_some_task(slot: str):
    asked = [t.id for t in TASKS for g in t.goals if all(PAYABLES.kit.missing(slot, g, request) for request in g.request)]
    assert asked, f"no task makes the agent ask for the {slot}"


# -- the three-way match -------------------------------------------------------------------------------


def variance_of(invoice_id: str) -> dict:
    env = Environment(PAYABLES)
    try:
        return env.execute("compute_variance", {"invoice_id": invoice_id}).result["data"]
    finally:
        env.close()


def test_an_invoice_by_the_piece_matches_an_order_by_the_box():
    match = variance_of("INV-71001")  # 1,000 bolts at $0.42 against 10 boxes of 100 at $42.00
    assert (match["matched_amount"], match["variance"]) == (510.0, 0.0)
    assert match["lines"][0]["billed"] == 10


def test_an_order_line_billed_on_two_invoice_lines_is_summed():
    match = variance_of("INV-71003")  # two invoice lines of 12 bundles of 25 cartons against one order line of 600
    assert (match["lines"][0]["billed"], match["lines"][0]["billed_amount"], match["lines"][0]["variance"]) == (600, 1110.0, 0)


def test_a_line_billed_for_nothing_on_the_order_is_all_variance():
    match = variance_of("INV-71033")
    assert [(u["vendor_code"], u["amount"]) for u in match["not_on_order"]] == [("FRT-EXP", 65.0)]
    assert match["variance"] == 65.0


def test_only_what_was_received_is_matched():
    assert variance_of("INV-71007")["matched_amount"] == 1523.2  # 68 of 80 rolls at $22.40
    assert variance_of("INV-71037")["matched_amount"] == 0.0  # nothing received yet


def test_a_vendors_own_tolerance_wins_over_its_categorys_default():
    env = Environment(PAYABLES)
    try:
        tolerance = {
            v: env.execute("get_tolerance", {"vendor_id": v, "category": "packaging"}).result["data"] for v in ("V-102", "V-107")
        }
    finally:
        env.close()
    assert tolerance["V-102"] == {"percent": 5.0, "cap": 100.0, "applies": "category default"}
    assert tolerance["V-107"] == {"percent": 0.0, "cap": 0.0, "applies": "vendor"}
