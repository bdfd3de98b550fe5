"""A task whose correct outcome is the hand-off through the human gate (retail-047), graded honestly."""

from __future__ import annotations

import asyncio

import pytest

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.grade.check import check_task
from passhat.grade.expected import GroundTruthError, expected_environment, required_facts
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial

RETAIL = load_domain("retail")
HANDOFF = RETAIL.tasks["retail-047"]


def trial(persona: str, guards: list[str], agent: str = "reference:perfect"):
    spec = TrialSpec(HANDOFF, PERSONAS[persona], 0, trial_seed(0, HANDOFF.id, persona, 0))
    return asyncio.run(run_trial(RETAIL, spec, resolve_agent(agent), resolve_user("scripted"), guards=guards))


def test_the_expected_state_is_the_hand_off_completed_by_the_operator() -> None:
    expected = expected_environment(RETAIL, HANDOFF)
    ticket = expected.db.execute("SELECT tool, status, owner FROM _passhat_tickets").fetchall()
    assert [tuple(t) for t in ticket] == [("return_items", "done", "Dana Whitfield")]
    assert [f.fact.value for f in required_facts(RETAIL, HANDOFF)] == ["Dana Whitfield"]  # the customer must learn who has it


def test_a_task_that_declares_the_gate_without_a_gated_call_is_a_ground_truth_error() -> None:
    small = RETAIL.tasks["retail-011"].model_copy(update={"guards": ["human_gate"]})
    with pytest.raises(GroundTruthError, match="none of its ground-truth calls is gated"):
        expected_environment(RETAIL, small)


def test_check_proves_the_task_through_the_gate() -> None:
    results = check_task(RETAIL, HANDOFF)
    assert all(r.holds for r in results)
    assert {r.case.expect for r in results} >= {None, "unconfirmed_write", "missing_output", "wrong_arguments"}


@pytest.mark.parametrize("persona", sorted(PERSONAS))
@pytest.mark.parametrize(
    "guards", [[], ["payments"], ["idempotency", "confirmation", "policy", "payments", "human_gate", "audit"]]
)
def test_the_perfect_agent_hands_it_off_under_every_persona_whatever_the_runs_guards(persona, guards) -> None:
    out = trial(persona, guards)
    assert out.grade.reward == 1, out.grade.details
    assert [e.guard["decision"] for e in out.events if e.guard] == ["ticket", "operator_done"]
