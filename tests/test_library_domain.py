"""A second complete domain, a public library's member desk, written only against passhat's public domain
contract (tests/domains/library): it proves that a domain is the unit of extension.

Its members identify by library card number and date of birth, ask about titles in several formats and
pickup branches, and know nothing of the built-in shop. Every one of its tasks is proved like retail's;
the perfect reference agent passes every trial of it under every persona, the flaky one fails some in
the ways its profile makes; and the folder works through the command line like any domain folder.

The proofs every domain shares (check, the reference agents, the seeded backend, the imports) are in
tests/test_every_domain.py; this file holds what is specific to this world.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
from click.testing import CliRunner

from passhat.cli import main
from passhat.domains import load_domain
from passhat.domains.model import Domain, Goal, Task
from passhat.env import Environment, tool_registry

FOLDER = Path(__file__).parent / "domains" / "library"
LIBRARY: Domain = load_domain(str(FOLDER))
TASKS = list(LIBRARY.tasks.values())
TOOLS = tool_registry(LIBRARY)


# -- the tasks -----------------------------------------------------------------------------------------


def _rules_refusing(task: Task, goal: Goal) -> set[str]:
    return {rule for call in goal.forbidden for rule in broken_rules(task.id, call.tool, dict(call.args))}


def broken_rules(verified: str | None, tool: str, args: dict) -> set[str]:
    """The rules a call breaks on a fresh backend, after the member of task ``verified`` identified (None: nobody)."""
    env = Environment(LIBRARY)
    try:
        if verified is not None:
            member = LIBRARY.tasks[verified].customer
            env.replay([LIBRARY.authenticate(member, LIBRARY.kit.identity_text(member))])
        return {v.rule for v in env.execute(tool, args).violations}
    finally:
        env.close()


def test_the_tasks_cover_every_outcome_and_one_and_two_writes():
    assert 8 <= len(TASKS) <= 10
    outcomes = collections.Counter(g.outcome for t in TASKS for g in t.goals)
    assert all(outcomes[o] for o in ("done", "refused", "answered", "transferred")), outcomes
    writes = collections.Counter(
        sum(TOOLS[a.tool].meta.needs_confirmation for a in t.actions) for t in TASKS if all(g.outcome == "done" for g in t.goals)
    )
    assert writes[1] and writes[2], writes
    refusing_rules = {v for t in TASKS for g in t.goals if g.outcome == "refused" for v in _rules_refusing(t, g)}
    assert refusing_rules >= {"renewal-limits", "fines-limit", "no-hold-on-own-loan"}


@pytest.mark.parametrize(
    "verified,tool,args,rules",
    [
        (None, "renew_loan", {"loan_id": "L-50101"}, {"identify-first"}),
        ("lib-001", "renew_loan", {"loan_id": "L-50201"}, {"identify-first"}),  # another member's loan
        ("lib-001", "renew_loan", {"loan_id": "L-50101"}, set()),
        ("lib-003", "renew_loan", {"loan_id": "L-50301"}, {"renewal-limits"}),  # overdue
        ("lib-004", "renew_loan", {"loan_id": "L-50401"}, {"renewal-limits"}),  # renewed twice
        ("lib-005", "renew_loan", {"loan_id": "L-50503"}, {"fines-limit"}),
        ("lib-005", "place_hold", {"member_id": "M-1005", "title_id": "T-201", "branch": "Riverside"}, {"fines-limit"}),
        ("lib-006", "place_hold", {"member_id": "M-1006", "title_id": "T-208", "branch": "Central"}, {"no-hold-on-own-loan"}),
        ("lib-006", "place_hold", {"member_id": "M-1006", "title_id": "T-209", "branch": "Central"}, set()),  # the audiobook
    ],
)
def test_each_rule_refuses_what_the_policy_forbids_and_nothing_else(verified, tool, args, rules):
    assert broken_rules(verified, tool, args) == rules


@pytest.mark.parametrize("slot", [s for s in LIBRARY.kit.slots if s != "identity"])
def test_every_detail_is_one_a_member_gives_only_when_asked_in_some_task(slot: str):
    """Each detail slot is exercised as a persona-sensitive question: no phrasing of the request says it."""
    asked = [t.id for t in TASKS for g in t.goals if all(LIBRARY.kit.missing(slot, g, request) for request in g.request)]
    assert asked, f"no task makes the agent ask for the {slot}"


# -- through the command line ----------------------------------------------------------------------------


def test_check_proves_the_folder_through_the_command_line():
    checked = CliRunner().invoke(main, ["check", "--domain", str(FOLDER)])
    assert checked.exit_code == 0, checked.output


def test_run_evaluates_the_folder_through_the_command_line(tmp_path):
    ran = CliRunner().invoke(
        main, ["run", "--domain", str(FOLDER), "--trials", "2", "--agent", "reference:perfect", "--out", str(tmp_path)]
    )
    assert ran.exit_code == 0, ran.output
