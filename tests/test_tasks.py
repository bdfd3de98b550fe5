"""Every retail task has exactly one correct outcome: its ground truth earns reward 1 and each near miss
of it — another order, another item, a missing or extra write, no confirmation, the forbidden request,
the facts untold — earns 0 with the signature that names the mistake."""

from __future__ import annotations

from collections import Counter

import pytest

from passhat.domains import load_domain
from passhat.grade.check import check_task

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
