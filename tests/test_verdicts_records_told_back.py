"""Nothing false told, in the four newer worlds: an agent that does the task right and tells a record back with
the wrong owner or amount ("INV-71001 (Northmoor Packaging, $610.00)") fails as misinformed, though the task
lists neither fact; its twin that tells the record back right passes. Played through the real orchestrator,
scripted customer and graders."""

from __future__ import annotations

import asyncio

import pytest
from adversaries import TellsARecordBack, agent

from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial

# a task per world whose write names a record with an owner: an invoice's vendor, an incident's caller and
# device, a charge's member, an appointment's clinician
TASKS = [("payables", "pay-006"), ("helpdesk", "hd-001"), ("benefits", "benefits-002"), ("intake", "intake-002")]


def _played(domain: str, task_id: str, wrong: bool):
    world = load_domain(domain)
    task = world.tasks[task_id]
    spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(11, task.id, "baseline", 0))
    return asyncio.run(run_trial(world, spec, agent(TellsARecordBack, wrong=wrong), resolve_user("scripted")))


@pytest.mark.parametrize(("domain", "task_id"), TASKS)
def test_a_record_told_back_with_a_wrong_owner_or_amount_is_misinformed(domain: str, task_id: str) -> None:
    out = _played(domain, task_id, wrong=True)
    assert (out.grade.reward, out.grade.signature) == (0, "misinformed")
    named = [m for m in out.grade.details["misinformed"] if m["column"] != "*amounts"]
    # the report names who really has it, by name, not by the id of their row
    assert named and all(m["said"] not in m["held"] and all(" " in held for held in m["held"]) for m in named)


@pytest.mark.parametrize(("domain", "task_id"), TASKS)
def test_a_record_told_back_right_passes(domain: str, task_id: str) -> None:
    out = _played(domain, task_id, wrong=False)
    recital = [e.text for e in out.events if e.kind == "agent" and "For your records: " in (e.text or "") and "(" in e.text]
    assert recital, "the twin must tell the record back, or it proves nothing"
    assert (out.grade.reward, out.grade.details["misinformed"]) == (1, [])
