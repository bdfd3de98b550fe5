"""`passhat check` proves that a task's customer asks for its ground truth: every record the customer names is one
the ground truth touches, every record a write acts on is named by each phrasing of the request (or by the goal's
details), every write is asked for, and every fact is worded as what a customer is told, not as the policy's rule.
Each proof refuses a careless task and accepts a correct one worded unusually."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from passhat.cli import main
from passhat.domains import load_domain
from passhat.domains.model import Task
from passhat.grade import GroundTruthError
from passhat.grade.asked import request_problems, rule_worded_facts
from passhat.grade.check import check_task

HELPDESK = load_domain("helpdesk")
CALLER = {"customer_id": "U-2014", "first_name": "Nils", "staff_number": "841536", "birth_date": "1975-09-12"}
ESCALATE = {"tool": "escalate_incident", "args": {"incident_id": "INC-1141", "priority": "high"}}


def task(*requests: str, extra: tuple[dict[str, Any], ...] = (), **details: Any) -> Task:
    """A one-goal helpdesk task: the caller wants INC-1141 raised to high (plus ``extra`` writes)."""
    goal = {"kind": "escalate", "request": list(requests), "outcome": "done", "priority": "high", **details}
    goal["actions"] = [ESCALATE, *extra]
    return HELPDESK.task_model.model_validate(
        {"id": "t-1", "summary": "raise a ticket", "customer": CALLER, "instruction": "You want INC-1141 high.", "goals": [goal]}
    )


def problems(t: Task) -> list[str]:
    return request_problems(HELPDESK, t)


# -- the records a request names --------------------------------------------------------------------------


def test_a_request_that_names_another_record_than_the_writes_is_refused():
    wrong = task("Please raise INC-1151 to high priority.", "Make INC-1141 high, please.", incident="INC-1141")
    assert problems(wrong) == [
        "goals[0].request[0] names INC-1151, a record the goal's ground truth never touches: "
        "name the record its actions change, or change the actions"
    ]


def test_a_detail_the_customer_gives_when_asked_that_names_another_record_is_refused():
    wrong = task("Please raise INC-1141 to high priority.", incident="INC-1151")
    assert [p for p in problems(wrong) if "details (incident)" in p] == [
        "goals[0].details (incident) names INC-1151, a record the goal's ground truth never touches: "
        "name the record its actions change, or change the actions"
    ]


def test_a_request_in_other_words_that_names_its_record_only_when_asked_is_accepted():
    """No id in the words at all: the caller gives the incident number when asked (the goal's detail)."""
    assert (
        problems(task("Six of us are stuck without the Dock 3 printer; could you bump it up to high?", incident="INC-1141")) == []
    )


def test_a_request_may_name_records_the_ground_truth_reads_or_the_customer_itself():
    """The caller's own directory record, and the incident itself, are records the ground truth touches."""
    assert problems(task("I'm U-2014. INC-1141 needs to be high priority, six of us can't print.", incident="INC-1141")) == []


def test_details_that_describe_another_record_than_the_one_written_are_refused():
    """retail-002's customer knows no order number and describes its order by the white speakers in it. Pointed at
    the customer's other pending order (which holds black wired speakers), the ground truth cancels a record the
    customer never describes: the item it names is in no record the ground truth reads."""
    retail = load_domain("retail")
    raw = retail.tasks["retail-002"].model_dump(by_alias=True)
    raw["goals"][0]["order_id"] = raw["goals"][0]["actions"][0]["args"]["order_id"] = "#R3675178"
    assert [p.split(",")[0] for p in request_problems(retail, retail.task_model.model_validate(raw))] == [
        "goals[0].details (items) names V-22765"
    ]


def test_a_phrasing_that_never_names_the_record_a_write_acts_on_is_refused():
    """Without the detail, a caller who says the second phrasing can never say which incident it means."""
    vague = task("Please raise INC-1141 to high priority.", "Can you make my printer ticket high?")
    [problem] = problems(vague)
    assert problem.startswith("goals[0].actions[0] acts on INC-1141, which goals[0].request[1] and the goal's details never name")
    assert "knows() in" in problem  # and says where to give it: the kit's knows, as a goal detail


# -- the writes a request asks for ------------------------------------------------------------------------

RESOLVE = {"tool": "resolve_incident", "args": {"incident_id": "INC-1141"}}


def test_a_write_no_request_asks_for_is_refused():
    extra = task("Please raise INC-1141 to high priority.", incident="INC-1141", extra=(RESOLVE,))
    [problem] = problems(extra)
    assert problem.startswith("goals[0].actions[1] (resolve_incident) is a write goals[0] never asks for")


def test_a_write_asked_in_only_one_phrasing_is_refused():
    """Each customer says one phrasing: the one who says the first never asks for the incident to be closed."""
    extra = task("Please raise INC-1141 to high.", "Raise INC-1141 to high and close it.", incident="INC-1141", extra=(RESOLVE,))
    assert [p.split(" is ")[0] for p in problems(extra)] == ["goals[0].actions[1] (resolve_incident)"]


def test_a_write_the_request_declines_is_not_asked_for():
    extra = task("Raise INC-1141 to high, but don't close it.", incident="INC-1141", extra=(RESOLVE,))
    assert [p.split(" is ")[0] for p in problems(extra)] == ["goals[0].actions[1] (resolve_incident)"]


def test_writes_asked_in_the_words_of_every_phrasing_are_accepted():
    both = task(
        "Raise INC-1141 to high, and once it's printing again you can close it.",
        "Could you escalate INC-1141 to high and then resolve it?",
        incident="INC-1141",
        extra=(RESOLVE,),
    )
    assert problems(both) == []


def test_a_write_that_sets_the_goals_own_detail_is_asked_for_in_any_words():
    """ "Make it high" names no action word: the priority it asks for is the write's."""
    assert problems(task("INC-1141: six people, no printing. Make it high.", incident="INC-1141")) == []


def test_a_write_of_another_action_that_sets_a_detail_the_customer_gives_is_asked_for():
    """ "Get it to the endpoint team" uses none of assign's words; the group it asks for is the write's."""
    assign = {"tool": "assign_incident", "args": {"incident_id": "INC-1141", "group": "endpoint"}}
    routed = task(
        "Raise INC-1141 to high and get it to the endpoint team.", incident="INC-1141", group="endpoint", extra=(assign,)
    )
    assert problems(routed) == []
    assert len(problems(task("Raise INC-1141 to high, please.", incident="INC-1141", extra=(assign,)))) == 1


def test_a_hand_off_is_asked_for_only_by_a_goal_that_wants_one():
    """A transfer declares no action words: only the goal's outcome can ask for it (hd-025's lost laptop does)."""
    handoff = {"tool": "transfer_to_specialist", "args": {"staff_number": "841536", "summary": "Printer down."}}
    [problem] = problems(task("Please raise INC-1141 to high priority.", incident="INC-1141", extra=(handoff,)))
    assert problem.startswith("goals[0].actions[1] (transfer_to_specialist) is a write goals[0] never asks for")


def test_the_proofs_run_in_passhat_check_naming_the_task_and_field():
    with pytest.raises(GroundTruthError, match=re.escape("task t-1: goals[0].request[0] names INC-1151")):
        check_task(HELPDESK, task("Please raise INC-1151 to high priority.", incident="INC-1141"))


def test_passhat_check_exits_1_naming_the_task_and_field_of_a_request_for_another_record(tmp_path: Path):
    wrong = task("Please raise INC-1151 to high priority.", incident="INC-1141")
    (tmp_path / "t-1.yaml").write_text(yaml.safe_dump(wrong.model_dump(by_alias=True, exclude_defaults=True)), encoding="utf-8")
    checked = CliRunner().invoke(main, ["check", "--domain", "helpdesk", "--tasks-dir", str(tmp_path), "--tasks", "t-1"])
    assert checked.exit_code == 1, checked.output
    assert "t-1: DOES NOT HOLD task t-1: goals[0].request[0] names INC-1151" in " ".join(checked.output.split())


# -- facts worded as what a customer is told --------------------------------------------------------------


def facts(*worded: str, synonyms: tuple[str, ...] = ()) -> Task:
    """A task that tells ``worded`` facts (their ``is``), each with ``synonyms``."""
    tell = [{"fact": "priority", "of": {"incident_id": "INC-1141"}, "is": w, "synonyms": list(synonyms)} for w in worded]
    return task("Please raise INC-1141 to high priority.", incident="INC-1141", tell=tell)


@pytest.mark.parametrize(
    "wording,found",
    [
        ("high priority at most", "at most"),
        ("no more than two changes", "no more than"),
        ("must go to the controller", "must"),
        ("never sent back to a group that rejected it", "never"),
        ("the policy on refunds", "policy"),
        ("only the caller's own tickets", "only the"),
        ("not allowed for this plan", "allowed"),
    ],
)
def test_a_fact_worded_as_a_rule_is_refused(wording, found):
    assert rule_worded_facts(facts(wording)) == [
        f"goals[0].tell[0] (priority) {wording!r} is worded as a rule ({found!r}), not as what a customer is told: "
        "state the value or state of their case the rule turns on"
    ]


def test_another_wording_of_a_fact_is_held_to_the_same_test():
    assert [p.split(" is worded")[0] for p in rule_worded_facts(facts("high", synonyms=("the rules allow high",)))] == [
        "goals[0].tell[0] (priority) 'the rules allow high'"
    ]


@pytest.mark.parametrize(
    "wording",
    [
        "high priority",
        "appointments only",
        "over tolerance",
        "not entitled",
        "already rejected",
        "$1,220.00",
        "2025-05-31",
        "INC-1141",
        "cancelled",
        "mayfield depot",
        "ruler",
    ],
)
def test_a_value_or_a_state_of_the_customers_case_is_accepted(wording):
    """Values of a kind and statements of the case, however they are spelt; rule words inside other words are none."""
    assert rule_worded_facts(facts(wording)) == []


def test_the_built_in_tasks_ask_for_their_ground_truth_and_word_facts_as_told():
    domains = [load_domain(name) for name in ("retail", "payables", "helpdesk", "benefits", "intake")]
    found = [
        f"{d.name}/{t.id}: {p}" for d in domains for t in d.tasks.values() for p in request_problems(d, t) + rule_worded_facts(t)
    ]
    assert found == []
