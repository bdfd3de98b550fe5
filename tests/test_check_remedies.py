"""Every way `passhat check` finds a task that does not hold says what to change, naming the domain's own code:
the function that decides it and the file it is in (`lookups() in studio/conversation.py`), or the task file's
field. A case that holds says nothing. Built on a starter domain in a temporary folder; no trial is run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from passhat.domains import load_domain
from passhat.domains.model import Action, Domain, Task
from passhat.domains.where import defined_at
from passhat.grade.check import ANY_FAILURE, Case, CaseResult, check_task, unknown_to_customer
from passhat.grade.expected import GroundTruthError, ground_truth_calls
from passhat.grade.graders import Grade
from passhat.grade.remedies import remedy
from passhat.scaffold import new_domain


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    return load_domain(str(new_domain("studio", tmp_path_factory.mktemp("domains"))))


def changed(domain: Domain, task_id: str, change) -> Task:
    raw = domain.tasks[task_id].model_dump(by_alias=True)
    change(raw)
    return domain.task_model.model_validate(raw)


def graded(case: Case, reward: int, signature: str | None) -> CaseResult:
    return CaseResult(case, Grade(reward, signature, bool(reward), True, True, {}, "primary" if reward else None), applied=True)


WRITE = Action(tool="cancel_booking", args={"booking_id": "B-7001"})
OTHER = Action(tool="cancel_booking", args={"booking_id": "B-7002"})


# -- the task itself --------------------------------------------------------------------------------------


def test_a_value_the_goal_holds_but_knows_leaves_out_names_knows_and_the_field(studio: Domain) -> None:
    forgetful = dataclasses.replace(studio, kit=dataclasses.replace(studio.kit, knows=lambda goal: []))
    [problem] = unknown_to_customer(forgetful, studio.tasks["studio-001"])
    assert problem.startswith("goals[0].actions[0].args.booking_id = B-7001: the customer never says it: the request's words")
    assert "the goal's booking_id holds it: return it from knows()" in problem
    assert "the lambda at " in problem and "test_check_remedies.py" in problem  # the knows this domain wired in
    assert unknown_to_customer(studio, studio.tasks["studio-001"]) == []  # the starter's knows returns every detail


def test_a_value_no_detail_holds_names_the_goal_model_to_add_it_to(studio: Domain) -> None:
    task = changed(studio, "studio-001", lambda raw: raw["goals"][0].update(booking_id=None, class_title=None))
    [problem] = unknown_to_customer(studio, task)
    assert f"knows() in {defined_at(studio.kit.knows).split(' in ')[1]}" in problem
    assert "adding that field to BookingGoal in " in problem and problem.count("model.py") == 1


def test_a_fact_the_backend_contradicts_says_to_correct_is_in_the_task_file(studio: Domain) -> None:
    task = changed(studio, "studio-002", lambda raw: raw["goals"][0]["tell"][0].update({"is": "booked"}))
    with pytest.raises(GroundTruthError, match=r"correct `is` in the task file \(or booking_status\(\) in .*facts\.py"):
        check_task(studio, task)


def test_a_misspelt_tool_says_to_correct_the_name_or_add_the_tool(studio: Domain) -> None:
    task = changed(studio, "studio-001", lambda raw: raw["goals"][0]["actions"][0].update(tool="cancel_bookng"))
    with pytest.raises(GroundTruthError, match="correct the name in the task file, or add the tool to the domain's tools"):
        check_task(studio, task)


def test_an_identity_no_lookup_can_use_names_authenticate_and_identity_text(studio: Domain) -> None:
    anonymous = dataclasses.replace(studio, authenticate=lambda customer, text: None)
    with pytest.raises(GroundTruthError, match=r"the lambda at .* finds none in what identity_text\(\) in .*kit\.py says"):
        ground_truth_calls(anonymous, studio.tasks["studio-001"])


# -- the cases ----------------------------------------------------------------------------------------------


def test_a_ground_truth_the_backend_refuses_says_to_correct_the_call(studio: Domain) -> None:
    refused = CaseResult(Case("ground truth", [WRITE]), Grade(0, "tool_error_unrecovered", False, True, True, {}), applied=False)
    assert remedy(studio, studio.tasks["studio-001"], refused).startswith("the backend refuses a ground-truth write")


def test_a_case_that_holds_has_no_remedy(studio: Domain) -> None:
    task = studio.tasks["studio-001"]
    assert remedy(studio, task, graded(Case("ground truth", [WRITE]), 1, None)) is None
    assert remedy(studio, task, graded(Case("missing last write", [], expect="no_write"), 0, "no_write")) is None


@pytest.mark.parametrize(
    "case,reward,got,says,names",
    [
        (
            Case("ground truth", [WRITE]),
            0,
            "unconfirmed_write",
            "does not confirm the ground truth's proposal",
            "describe_action() in ",
        ),
        (Case("ground truth", [WRITE]), 0, "policy_violation", "a rule refuses a ground-truth call", "rules.py"),
        (Case("ground truth", [WRITE]), 0, "max_turns", "--agent reference:perfect --tasks studio-001", None),
        (Case("ground truth", [WRITE], outcome="other"), 1, None, "reaches outcome 'primary', not 'other'", None),
        (Case("missing last write", [], expect="no_write"), 0, "closed_unresolved", "no read before it names", "lookups() in "),
        (Case("x in write 1", [OTHER], expect="wrong_entity_write"), 1, None, "leaves the backend as", "near_misses() in "),
        (Case("x in write 1", [OTHER], expect="wrong_arguments"), 0, "extra_write", "one detail wrong", "near_misses() in "),
        (Case("wrong booking_id", [WRITE], expect="unconfirmed_write"), 1, None, "yes still counts", "cancel_booking() in "),
        (Case("every write repeated", [WRITE], expect="duplicate_write"), 1, None, "not seen as a repeat", "tools.py"),
        (Case("extra write", [WRITE, OTHER], expect="extra_write"), 1, None, "another record", "near_misses() in "),
        (Case("forbidden cancel_booking", [WRITE], expect="policy_violation"), 1, None, "breaks no rule", "rules.py"),
        (Case("facts not told", [WRITE], expect="missing_output"), 1, None, "count as told", "describe_action() in "),
        (Case("another customer's data told", [WRITE], expect="privacy_violation"), 1, None, "personal_data", None),
        (Case("the policy recited", [WRITE], expect="policy_disclosure"), 1, None, "`policy`", None),
        (Case("order[0] broken", [WRITE], expect="out_of_order"), 1, None, "task's `order`", None),
        (Case("does nothing", [], expect=ANY_FAILURE, idle=True), 1, None, "rewards an agent that does nothing", None),
        (Case("wrong guess: x", [OTHER], expect=ANY_FAILURE, risk="x"), 1, None, "not found as that risk", None),
    ],
    ids=lambda v: v.label if isinstance(v, Case) else None,
)
def test_each_case_that_does_not_hold_names_its_cause_and_what_to_change(studio, case, reward, got, says, names) -> None:
    fix = remedy(studio, studio.tasks["studio-001"], graded(case, reward, got))
    assert fix is not None and says in fix, fix
    assert names is None or names in fix, fix  # the domain's function (or file) that decides it


def test_the_function_named_is_the_one_the_domain_wired_in_with_its_file() -> None:
    here = Path(__file__).name
    assert defined_at(test_the_function_named_is_the_one_the_domain_wired_in_with_its_file).endswith(here)
    assert defined_at(lambda: None).startswith("the lambda at ") and here in defined_at(lambda: None)
    assert defined_at(Case).startswith("Case in ")
