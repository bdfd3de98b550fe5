"""Several acceptable outcomes and required orderings, on small tasks of the library test domain built here.

A task may accept more than one end state (``outcomes``): a trial passes when it reaches any of them, and
its grade names the one it reached. It may require some calls before others (``order``): a call made
before the one it needs fails the trial as ``out_of_order``. The scripted customer wants the result, not one
path to it; the reference agent picks an outcome per trial, so its passes show every label.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
import yaml

from passhat.agents import resolve_agent
from passhat.customers import ScriptedUser, resolve_user
from passhat.customers.personas import PERSONAS
from passhat.dialogue import is_affirmative
from passhat.domains import load_domain, load_task_files
from passhat.domains.model import Action, Domain, Task
from passhat.env import Environment
from passhat.errors import UserError
from passhat.grade.check import ANY_FAILURE, Case, check_task, replay_case, unknown_tools
from passhat.grade.ordering import out_of_order
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event

LIBRARY: Domain = load_domain(str(Path(__file__).parent / "domains" / "library"))
BASTIAN = {"customer_id": "M-1002", "first_name": "Bastian", "card_number": "229055120964", "birth_date": "1979-11-02"}
AUDIOBOOK = {"tool": "place_hold", "args": {"member_id": "M-1002", "title_id": "T-217", "branch": "Central"}}
PRINT = {"tool": "place_hold", "args": {"member_id": "M-1002", "title_id": "T-216", "branch": "Central"}}
RENEW = {"tool": "renew_loan", "args": {"loan_id": "L-50201"}}
RENEW_OTHER = {"tool": "renew_loan", "args": {"loan_id": "L-50203"}}
HOLD_GOAL = {
    "kind": "hold",
    "request": ["Please put Night Trains of Europe on hold for me, the audiobook or the book, whichever is fine."],
    "outcome": "done",
    "title": "Night Trains of Europe",
    "format": "audiobook",
    "branch": "Central",
    "actions": [AUDIOBOOK],
}
RENEW_GOAL = {
    "kind": "renew",
    "request": ["Please renew The Glass Orchard for me."],
    "outcome": "done",
    "title": "The Glass Orchard",
    "actions": [RENEW],
}


def task(**fields) -> Task:
    raw = {"id": "t", "summary": "s", "customer": BASTIAN, "instruction": "i", "goals": [HOLD_GOAL], **fields}
    return LIBRARY.task_model.model_validate(raw)


EITHER_FORMAT = task(id="either-format", outcomes=[{"label": "print", "actions": [PRINT]}])
RENEW_THEN_HOLD = task(
    id="renew-then-hold",
    goals=[RENEW_GOAL, HOLD_GOAL],
    order=[{"before": {"tool": "renew_loan", "args": {"loan_id": "L-50201"}}, "after": {"tool": "place_hold"}}],
)
EITHER_LOAN = {**RENEW_GOAL, "request": ["Please renew The Glass Orchard, or The Beekeeper's Ledger, either will do."]}
TWO_PATHS = task(id="two-paths", goals=[HOLD_GOAL, EITHER_LOAN], outcomes=[{"label": "other", "actions": [PRINT, RENEW_OTHER]}])


def played(t: Task, writes: list[dict], **case) -> tuple[int, str | None, str | None]:
    """A synthetic conversation making ``writes`` (each proposed and confirmed): (reward, signature, outcome)."""
    grade = replay_case(LIBRARY, t, Case("played", [Action.model_validate(w) for w in writes], **case)).grade
    return grade.reward, grade.signature, grade.outcome


# -- grading against several acceptable outcomes -------------------------------------------------------------


def test_each_acceptable_outcome_passes_and_is_labelled_with_its_own_name() -> None:
    assert played(EITHER_FORMAT, [AUDIOBOOK]) == (1, None, "primary")
    assert played(EITHER_FORMAT, [PRINT], outcome="print") == (1, None, "print")


def test_an_end_state_no_outcome_accepts_fails_and_is_labelled_with_none() -> None:
    wrong_branch = {**PRINT, "args": {**PRINT["args"], "branch": "Riverside"}}
    reward, signature, outcome = played(EITHER_FORMAT, [wrong_branch], outcome="print", expect=ANY_FAILURE)
    assert (reward, outcome) == (0, None)
    assert signature == "wrong_arguments"  # judged against the closest outcome: the print hold, at the wrong branch


def test_a_mix_of_two_outcomes_writes_fails() -> None:
    assert played(TWO_PATHS, [AUDIOBOOK, RENEW]) == (1, None, "primary")
    assert played(TWO_PATHS, [PRINT, RENEW_OTHER], outcome="other") == (1, None, "other")
    reward, _, outcome = played(TWO_PATHS, [AUDIOBOOK, RENEW_OTHER], expect=ANY_FAILURE)
    assert (reward, outcome) == (0, None)


def test_writes_of_another_outcome_are_not_unrequested_writes_of_the_one_reached() -> None:
    grade = replay_case(
        LIBRARY, TWO_PATHS, Case("other", [Action.model_validate(w) for w in (PRINT, RENEW_OTHER)], outcome="other")
    ).grade
    assert grade.details["unrequested_writes"] == [] and grade.details["required_writes_done"] is True


# -- required orderings ----------------------------------------------------------------------------------------


def test_the_required_order_passes() -> None:
    assert played(RENEW_THEN_HOLD, [RENEW, AUDIOBOOK]) == (1, None, "primary")


def test_the_wrong_order_fails_as_out_of_order_in_strict_mode_only() -> None:
    reward, signature, outcome = played(RENEW_THEN_HOLD, [AUDIOBOOK, RENEW], expect="out_of_order")
    assert (reward, signature, outcome) == (0, "out_of_order", "primary")  # the end state is right; the way is not
    assert played(RENEW_THEN_HOLD, [AUDIOBOOK, RENEW], mode="tau") == (1, None, "primary")  # tau judges state and output


def test_an_ordering_args_must_match_for_a_call_to_count_as_done_first() -> None:
    renew_other_first = task(
        goals=[RENEW_GOAL, HOLD_GOAL],
        outcomes=[{"label": "other", "actions": [RENEW_OTHER, AUDIOBOOK]}],
        order=[{"before": {"tool": "renew_loan", "args": {"loan_id": "L-50201"}}, "after": {"tool": "place_hold"}}],
    )
    assert played(renew_other_first, [RENEW_OTHER, AUDIOBOOK], outcome="other", expect="out_of_order")[1] == "out_of_order"


def test_only_calls_that_took_effect_count_on_either_side_of_an_ordering() -> None:
    ok, failed = {"status": "ok", "data": {}}, {"status": "error", "error": {"type": "x", "message": "no"}}

    def call(tool: str, result: dict) -> Event:
        return Event("tool", name=tool, args={"loan_id": "L-50201"}, result=result)

    order = RENEW_THEN_HOLD.order
    assert out_of_order([call("renew_loan", ok), call("place_hold", ok)], order) == []
    assert len(out_of_order([call("renew_loan", failed), call("place_hold", ok)], order)) == 1
    assert out_of_order([call("place_hold", failed), call("renew_loan", ok)], order) == []


# -- passhat check ---------------------------------------------------------------------------------------------


LOOK_BEFORE_RENEWING = task(
    id="look-before-renewing",
    goals=[{**RENEW_GOAL, "lookups": [{"tool": "get_loan", "args": {"loan_id": "L-50201"}}]}],
    order=[{"before": {"tool": "get_loan"}, "after": {"tool": "renew_loan"}}],
)


@pytest.mark.parametrize("t", [EITHER_FORMAT, RENEW_THEN_HOLD, TWO_PATHS, LOOK_BEFORE_RENEWING], ids=lambda t: t.id)
def test_check_proves_every_outcome_and_breaks_every_ordering(t: Task) -> None:
    results = check_task(LIBRARY, t)
    assert [(r.case.label, r.grade.signature) for r in results if not r.holds] == []
    proven = {r.case.outcome for r in results if r.case.expect is None and r.applied}
    assert proven == {o.label for o in t.acceptable}
    broken = [r for r in results if r.case.swap is not None]
    assert len(broken) == len(t.order) and all(r.grade.signature == "out_of_order" for r in broken)


def test_check_labels_each_outcomes_cases_only_when_there_are_several() -> None:
    labels = [r.case.label for r in check_task(LIBRARY, EITHER_FORMAT)]
    assert "primary: ground truth" in labels and "print: ground truth" in labels
    assert "primary: every write repeated" in labels and "print: every write repeated" in labels


def test_check_tries_no_near_miss_that_is_another_acceptable_outcome() -> None:
    labels = [r.case.label for r in check_task(LIBRARY, EITHER_FORMAT)]
    assert "primary: another branch in write 1" in labels
    assert "primary: another format in write 1" not in labels  # the print hold: the other outcome, not a miss
    assert "ground truth" in [r.case.label for r in check_task(LIBRARY, RENEW_THEN_HOLD)]


def test_check_refuses_an_order_broken_by_an_outcomes_own_ground_truth() -> None:
    hold_first = task(goals=[RENEW_GOAL, HOLD_GOAL], order=[{"before": {"tool": "place_hold"}, "after": {"tool": "renew_loan"}}])
    failing = [r.case.label for r in check_task(LIBRARY, hold_first) if not r.holds]
    assert "ground truth" in failing


# -- task validation -------------------------------------------------------------------------------------------


def test_outcome_labels_are_unique_and_primary_is_taken() -> None:
    with pytest.raises(ValueError, match="labels must be unique"):
        task(outcomes=[{"label": "print", "actions": [PRINT]}, {"label": "print", "actions": [AUDIOBOOK]}])
    with pytest.raises(ValueError, match="primary"):
        task(outcomes=[{"label": "primary", "actions": [PRINT]}])


def test_an_ordering_must_name_a_call_of_some_outcome(tmp_path: Path) -> None:
    raw = {"id": "t", "summary": "s", "customer": BASTIAN, "instruction": "i", "goals": [HOLD_GOAL]}
    raw["order"] = [{"before": {"tool": "cancel_hold"}, "after": {"tool": "place_hold"}}]
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(UserError, match=r"t\.yaml.*order\[0\]\.before \(cancel_hold"):
        load_task_files(tmp_path, LIBRARY.task_model)


def test_tools_of_outcomes_and_orderings_must_be_the_domains() -> None:
    typo = {**PRINT, "tool": "place_hlod"}
    t = task(
        outcomes=[{"label": "print", "actions": [typo]}],
        order=[{"before": {"tool": "place_hold"}, "after": {"tool": "place_hlod"}}],
    )
    problems = unknown_tools(LIBRARY, t)
    assert [p.split(" ")[0] for p in problems] == ["outcomes[0].actions[0].tool", "order[0].after.tool"]


# -- the scripted customer and the reference agent --------------------------------------------------------------


def proposed(t: Task, *writes: dict) -> list[bool]:
    """Whether the scripted customer says yes to each write proposed in turn (each reported done once agreed)."""
    user, env = ScriptedUser(LIBRARY, t, PERSONAS["baseline"], random.Random(0)), Environment(LIBRARY)
    try:
        asyncio.run(user.respond(None))
        answers = []
        for write in writes:
            action = Action.model_validate(write)
            reply = asyncio.run(user.respond(f"I can {LIBRARY.describe_action(env.db, action)}. Shall I go ahead?")).text
            answers.append(is_affirmative(reply))
            if answers[-1]:
                env.replay([action])
                asyncio.run(user.respond("Done: it has been completed. Is there anything else I can help you with?"))
        return answers
    finally:
        env.close()


def test_the_scripted_customer_says_yes_to_any_outcomes_proposal() -> None:
    assert proposed(EITHER_FORMAT, PRINT) == [True]
    assert proposed(EITHER_FORMAT, AUDIOBOOK) == [True]
    assert proposed(EITHER_FORMAT, {**PRINT, "args": {**PRINT["args"], "branch": "Hillcrest"}}) == [False]


def test_the_scripted_customer_says_no_to_a_mix_of_two_outcomes() -> None:
    assert proposed(TWO_PATHS, PRINT, RENEW_OTHER) == [True, True]
    assert proposed(TWO_PATHS, PRINT, RENEW) == [True, False]


def test_the_reference_agent_takes_every_outcome_over_seeds_and_every_trial_passes() -> None:
    def trial(n: int):
        spec = TrialSpec(EITHER_FORMAT, PERSONAS["baseline"], n, trial_seed(7, EITHER_FORMAT.id, "baseline", n))
        return asyncio.run(run_trial(LIBRARY, spec, resolve_agent("reference:perfect"), resolve_user("scripted"))).grade

    grades = [trial(n) for n in range(8)]
    assert all(g.reward == 1 for g in grades), [(g.signature, g.details["end"]) for g in grades]
    assert {g.outcome for g in grades} == {"primary", "print"}
    assert [g.outcome for g in grades] == [trial(n).outcome for n in range(8)]  # the same seed, the same outcome
