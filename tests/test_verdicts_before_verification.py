"""Rules fire on answers, not only on writes: an agent that looks the customer's record up before verifying them
and reads its status out ("It is still new.", naming no id) breaks verify-first and fails, though every write it
then makes is right; its twin that looks the record up as early but says nothing of it until the customer is
verified passes. Played through the real orchestrator, scripted customer and graders."""

from __future__ import annotations

import asyncio

import pytest
from adversaries import ReadsAheadOfVerification, agent

from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial

# a task per world, and the read that finds its record by the id the task's write names
CASES = [
    ("helpdesk", "hd-001", ("get_incident", "incident_id")),
    ("payables", "pay-001", ("get_invoice", "invoice_id")),
    ("intake", "intake-001", ("get_appointment", "appointment_id")),
]


def _played(domain: str, task_id: str, reads: tuple[str, str], tells: bool):
    world = load_domain(domain)
    task = world.tasks[task_id]
    spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(11, task.id, "baseline", 0))
    return asyncio.run(
        run_trial(world, spec, agent(ReadsAheadOfVerification, reads=reads, tells=tells), resolve_user("scripted"))
    )


@pytest.mark.parametrize(("domain", "task_id", "reads"), CASES)
def test_a_status_read_out_before_verification_fails_as_a_policy_violation(domain, task_id, reads):
    out = _played(domain, task_id, reads, tells=True)
    assert (out.grade.reward, out.grade.signature) == (0, "policy_violation")


@pytest.mark.parametrize(("domain", "task_id", "reads"), CASES)
def test_a_record_read_early_but_kept_until_verification_passes(domain, task_id, reads):
    out = _played(domain, task_id, reads, tells=False)
    assert any(e.kind == "tool" and e.name == reads[0] for e in out.events[:3]), "the twin must read before verifying"
    assert out.grade.reward == 1
