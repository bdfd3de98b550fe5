"""A second complete domain, a public library's member desk, written only against passhat's public domain
contract (tests/domains/library): it proves that a domain is the unit of extension.

Its members identify by library card number and date of birth, ask about titles in several formats and
pickup branches, and know nothing of the built-in shop. Every one of its tasks is proved like retail's;
the perfect reference agent passes every trial of it under every persona, the flaky one fails some in
the ways its profile makes; and the folder works through the command line like any domain folder.
"""

from __future__ import annotations

import ast
import asyncio
import collections
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from passhat.agents import resolve_agent
from passhat.cli import main
from passhat.domains import load_domain
from passhat.domains.model import Domain, Goal, Task
from passhat.env import Environment, tool_registry
from passhat.grade.check import check_task
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial
from passhat.users import resolve_user
from passhat.users.personas import PERSONAS

FOLDER = Path(__file__).parent / "domains" / "library"
LIBRARY: Domain = load_domain(str(FOLDER))
TASKS = list(LIBRARY.tasks.values())
TOOLS = tool_registry(LIBRARY)
TRIALS = 3

# What a domain may import of passhat: the contract, the task-file loader and the dialogue helpers.
PUBLIC_CONTRACT = ("passhat.domains.model", "passhat.domains.kit", "passhat.domains.toolkit", "passhat.domains.facts")
RETAIL_WORDS = re.compile(r"\b(?:retail|shop(?:per)?s?|products?|items?|zip codes?|orders?)\b(?! by)|#R\d{7}", re.I)


@pytest.fixture(scope="module")
def results():
    return {task.id: check_task(LIBRARY, task) for task in TASKS}


def play(agent: str, task: Task, persona: str, trial: int) -> TrialOutput:
    spec = TrialSpec(task, PERSONAS[persona], trial, trial_seed(5, task.id, persona, trial))
    return asyncio.run(run_trial(LIBRARY, spec, resolve_agent(agent), resolve_user("scripted")))


# -- the tasks -----------------------------------------------------------------------------------------


def test_every_case_of_every_task_holds(results):
    broken = [
        (task_id, r.case.label, r.case.expect, r.grade.reward, r.grade.signature)
        for task_id, rs in results.items()
        for r in rs
        if not r.holds
    ]
    assert broken == []


def test_the_near_misses_and_perturbations_are_really_tried(results):
    """Guards against a check that holds only because the domain offered no near miss the backend accepts."""
    applied = collections.Counter(r.case.expect for rs in results.values() for r in rs if r.applied)
    for signature in (
        "wrong_entity_write",
        "wrong_arguments",
        "extra_write",
        "no_write",
        "partial_resolution",
        "unconfirmed_write",
        "policy_violation",
        "missing_output",
        "duplicate_write",
        "privacy_violation",
        "policy_disclosure",
    ):
        assert applied[signature] >= 1, signature
    assert applied[None] == 2 * len(TASKS)  # ground truth, strict and tau


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


# -- the reference agents against the scripted member ----------------------------------------------------


@pytest.mark.parametrize("persona", list(PERSONAS))
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_perfect_agent_passes_every_trial(task: Task, persona: str):
    for trial in range(TRIALS):
        out = play("reference:perfect", task, persona, trial)
        assert out.grade.reward == 1, (trial, out.grade.signature, out.grade.details, [e.to_dict() for e in out.events])


# What the flaky profile's slips earn in strict mode: a near miss made after a yes to the right proposal
# (unconfirmed_write), a forbidden request carried out (policy_violation), a fact mis-stated or left out
# (missing_output), an allowed request declined or a needless referral, and an early goodbye.
FLAKY_SIGNATURES = {
    "unconfirmed_write",
    "policy_violation",
    "missing_output",
    "no_write",
    "partial_resolution",
    "closed_unresolved",
}


def test_the_flaky_agent_fails_some_trials_in_the_ways_its_profile_makes():
    signatures = collections.Counter(
        play("reference:flaky", task, persona, trial).grade.signature
        for task in TASKS
        for persona in PERSONAS
        for trial in range(TRIALS)
    )
    failures = {s: n for s, n in signatures.items() if s is not None}
    assert 0 < sum(failures.values()) < signatures[None] / 4, signatures
    assert set(failures) <= FLAKY_SIGNATURES, signatures
    assert len(failures) >= 3 and failures.get("unconfirmed_write"), signatures


def test_the_incoherent_members_slips_are_made_and_recovered_from():
    """Over the trials above, the incoherent member both misreads a digit of the card (the lookup finds nobody, then
    the corrected number is found) and gives the card number alone (the agent asks again)."""
    typo = card_only = 0
    for task in TASKS:
        for trial in range(TRIALS):
            events = play("reference:perfect", task, "incoherent", trial).events
            lookups = [e.result["status"] for e in events if e.kind == "tool" and e.name == "find_member"]
            typo += lookups == ["not_found", "ok"]
            card_only += any(e.kind == "agent" and e.text == LIBRARY.kit.ask_identity_again for e in events)
    assert typo and card_only, (typo, card_only)


# -- the folder: its own world, the public contract only ---------------------------------------------------


def test_the_backend_is_generated_the_same_from_the_same_seed():
    def dump() -> list[str]:
        db = sqlite3.connect(":memory:")
        db.executescript(LIBRARY.schema_sql)
        LIBRARY.generate(db, LIBRARY.data_seed)
        return list(db.iterdump())

    first = dump()
    assert first == dump()
    counts = collections.Counter(line.split('"')[1] for line in first if line.startswith("INSERT"))
    assert counts["members"] >= 30 and counts["loans"] >= 30 and counts["holds"] >= 10, counts


def _imports(path: Path) -> list[str]:
    """The absolute modules a file imports (relative imports stay inside the folder)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def test_the_domain_imports_only_the_public_contract_and_nothing_of_retail():
    sources = sorted(FOLDER.glob("*.py"))
    assert {p.name for p in sources} >= {"domain.py", "tools.py", "rules.py", "kit.py", "facts.py"}
    passhat = {(p.name, m) for p in sources for m in _imports(p) if m.split(".")[0] == "passhat"}
    assert not [m for _, m in passhat if m.startswith("passhat.domains.retail")]
    allowed = (*PUBLIC_CONTRACT, "passhat.dialogue")
    outside = [(f, m) for f, m in passhat if m != "passhat.domains" and not m.startswith(allowed)]
    assert outside == []


def test_the_domain_speaks_none_of_retails_vocabulary():
    files = [p for p in FOLDER.rglob("*") if p.is_file() and p.suffix in (".py", ".sql", ".md", ".yaml")]
    said = {p.relative_to(FOLDER).as_posix(): RETAIL_WORDS.findall(p.read_text(encoding="utf-8")) for p in files}
    assert {f: words for f, words in said.items() if words} == {}


# -- through the command line ----------------------------------------------------------------------------


def test_check_proves_the_folder_through_the_command_line():
    checked = CliRunner().invoke(main, ["check", "--domain", str(FOLDER)])
    assert checked.exit_code == 0, checked.output


def test_run_evaluates_the_folder_through_the_command_line(tmp_path):
    ran = CliRunner().invoke(
        main, ["run", "--domain", str(FOLDER), "--trials", "2", "--agent", "reference:perfect", "--out", str(tmp_path)]
    )
    assert ran.exit_code == 0, ran.output
