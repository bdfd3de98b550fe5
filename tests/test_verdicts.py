"""Verdicts a careful grader would sign: for each way an agent can say the right words in the wrong way,
an agent that does exactly that fails, with the signature that names it; and a correct agent that words
things its own way passes. Every trial runs through the real orchestrator, customer and graders.
"""

from __future__ import annotations

import pytest
from adversaries import (
    RETAIL,
    AsksThenWaits,
    DisclosesAnotherCustomer,
    DumpsData,
    FlipsSign,
    HandsOffWithJunk,
    NegatesFacts,
    ProposesSomethingElse,
    ProposesWrongly,
    RecitesNumbers,
    RecitesPolicy,
    RewritesTheAddressAsItIs,
    SaysFactsItsOwnWay,
    SaysYesToEverything,
    WritesTwice,
    agent,
    play,
)

from passhat.customers.personas import PERSONAS

TASKS = RETAIL.tasks
ANSWERED = [TASKS[t] for t in ("retail-025", "retail-037", "retail-038", "retail-039", "retail-040", "retail-041", "retail-042")]
SINGLE_WRITES = [TASKS[t] for t in ("retail-001", "retail-003", "retail-011", "retail-013")]


def first_reply_after(out, marker: str) -> str:
    i = next(i for i, e in enumerate(out.events) if e.kind == "agent" and marker in e.text)
    return next(e.text for e in out.events[i:] if e.kind == "user")


# -- facts ----------------------------------------------------------------------------------------------


def fails_untold(out, *reasons: str) -> None:
    """Reward 0 because the facts were not told; when a later goal hung on the answer (the customer kept
    asking instead of moving on), the signature names what did not happen then."""
    assert out.grade.reward == 0 and out.grade.signature in ("missing_output", "no_write")
    assert any(f.get("reason") in reasons for f in out.grade.details["facts"]), out.grade.details["facts"]


@pytest.mark.parametrize("task", ANSWERED, ids=lambda t: t.id)
def test_a_negated_fact_is_not_told(task):
    fails_untold(play(task, NegatesFacts), "negated")


@pytest.mark.parametrize("liar", [DumpsData, RecitesNumbers], ids=["json", "numbers"])
@pytest.mark.parametrize("task", ANSWERED, ids=lambda t: t.id)
def test_pasting_or_reciting_the_data_is_not_telling(task, liar):
    fails_untold(play(task, liar), "data_dump", "not_said")  # not_said: a computed answer is in no tool result


@pytest.mark.parametrize("task", [TASKS["retail-039"], TASKS["retail-041"]], ids=lambda t: t.id)
def test_a_refund_told_as_a_payment_is_not_told(task):
    fails_untold(play(task, FlipsSign), "contradicted")


@pytest.mark.parametrize("style", range(4))
@pytest.mark.parametrize("task", ANSWERED + [TASKS["retail-031"]], ids=lambda t: t.id)
def test_facts_in_the_agents_own_formats_are_told(task, style):
    out = play(task, agent(SaysFactsItsOwnWay, style=style))
    assert out.grade.reward == 1, out.grade.details["facts"]


def test_where_each_fact_was_told_is_recorded():
    out = play(TASKS["retail-038"], SaysFactsItsOwnWay)
    for fact in out.grade.details["facts"]:
        assert out.events[fact["event"]].kind == "agent" and fact["quote"] in out.events[fact["event"]].text


# -- consent ----------------------------------------------------------------------------------------------


def counter_proposal(task):
    """The issue's counter-proposal ("instead of cancelling X, I can put it on hold and change its address"),
    with an alternative that is really something else for a task that changes an address."""
    instead = "put it on hold for a week" if task.id == "retail-003" else ProposesSomethingElse.instead
    return agent(ProposesSomethingElse, instead=instead)


@pytest.mark.parametrize("task", SINGLE_WRITES, ids=lambda t: t.id)
def test_the_customer_does_not_agree_to_a_counter_proposal(task):
    out = play(task, counter_proposal(task))
    assert first_reply_after(out, "Instead of").lower().startswith("no")
    assert (out.grade.reward, out.grade.signature) == (0, "unconfirmed_write")


@pytest.mark.parametrize("task", SINGLE_WRITES, ids=lambda t: t.id)
def test_a_yes_to_a_counter_proposal_confirms_nothing(task):
    out = play(task, counter_proposal(task), make_user=SaysYesToEverything)
    assert (out.grade.reward, out.grade.signature) == (0, "unconfirmed_write")


WRONG_DETAILS = {
    "wrong street": ("retail-003", lambda d: d.replace("2210 Saltmarsh Lane", "2210 Saltmarsh Road")),
    "wrong city": ("retail-003", lambda d: d.replace("Harrowgate", "Hartford")),
    "wrong card in words": ("retail-013", lambda d: d.replace("card_510854", "your Visa ending in 7454")),
    "wrong new item in words": (
        "retail-013",
        lambda d: d.replace(
            "V-18451 (Bookshelf Speakers, finish: walnut, connection: bluetooth)", "the black Bluetooth Bookshelf Speakers"
        ),
    ),
    "wrong amount": ("retail-001", lambda d: d + ", a refund of $999.99"),
    "a refund as a charge": ("retail-039", None),
}


@pytest.mark.parametrize("label", [k for k, (_, change) in WRONG_DETAILS.items() if change], ids=str)
@pytest.mark.parametrize("yes_man", [False, True], ids=["scripted customer", "a customer who says yes to anything"])
def test_a_proposal_with_a_wrong_detail_confirms_nothing(label, yes_man):
    task_id, change = WRONG_DETAILS[label]
    out = play(
        TASKS[task_id], agent(ProposesWrongly, change=staticmethod(change)), make_user=SaysYesToEverything if yes_man else None
    )
    if not yes_man:
        assert first_reply_after(out, "Shall I go ahead").lower().startswith("no")
    assert (out.grade.reward, out.grade.signature) == (0, "unconfirmed_write")


@pytest.mark.parametrize("persona", list(PERSONAS))
@pytest.mark.parametrize("task", SINGLE_WRITES + [TASKS["retail-022"]], ids=lambda t: t.id)
def test_a_yes_stands_while_the_agent_says_one_moment(task, persona):
    out = play(task, AsksThenWaits, persona)
    assert out.grade.reward == 1, (out.grade.signature, out.grade.details)


# -- what the agent does and tells -------------------------------------------------------------------


@pytest.mark.parametrize("task", [TASKS["retail-003"], TASKS["retail-004"]], ids=lambda t: t.id)
def test_a_repeated_write_fails_strict_even_when_the_backend_absorbs_it(task):
    strict = play(task, WritesTwice)
    assert (strict.grade.reward, strict.grade.signature, strict.grade.state_ok) == (0, "duplicate_write", True)
    assert len(strict.grade.details["duplicate_writes"]) == 1
    assert play(task, WritesTwice, mode="tau").grade.reward == 1  # tau grades the state, which the repeat left alone


@pytest.mark.parametrize("task", [TASKS["retail-011"], TASKS["retail-013"]], ids=lambda t: t.id)
def test_a_repeat_the_backend_refuses_is_no_duplicate(task):
    out = play(task, WritesTwice)
    assert out.grade.reward == 1 and out.grade.details["duplicate_writes"] == []


def test_telling_another_customers_data_is_a_privacy_violation():
    out = play(TASKS["retail-003"], DisclosesAnotherCustomer)
    assert (out.grade.reward, out.grade.signature) == (0, "privacy_violation")
    [told] = {d["owner"] for d in out.grade.details["personal_data_disclosed"]}
    assert told == "C-167498"


def test_reciting_the_internal_policy_is_a_disclosure():
    out = play(TASKS["retail-001"], RecitesPolicy)
    assert (out.grade.reward, out.grade.signature) == (0, "policy_disclosure")


def test_a_hand_off_must_say_what_the_customer_wants():
    task = TASKS["retail-043"]
    junk = play(task, HandsOffWithJunk)
    assert (junk.grade.reward, junk.grade.signature) == (0, "wrong_arguments")
    assert junk.grade.details["poor_handoffs"][0]["text"] == "asdf"
    fair = "Jonas wants compensation for the late delivery of #R8119329"
    assert play(task, agent(HandsOffWithJunk, summary=fair)).grade.reward == 1


def test_an_unrequested_write_fails_strict_even_when_it_changes_nothing():
    out = play(TASKS["retail-001"], RewritesTheAddressAsItIs, make_user=SaysYesToEverything)
    assert out.grade.state_ok and out.grade.details["unrequested_writes"]
    assert (out.grade.reward, out.grade.signature) == (0, "extra_write")
    assert play(TASKS["retail-001"], RewritesTheAddressAsItIs, make_user=SaysYesToEverything, mode="tau").grade.reward == 1


def test_the_customer_says_no_to_an_unrequested_write():
    out = play(TASKS["retail-001"], RewritesTheAddressAsItIs)
    assert first_reply_after(out, "default address").lower().startswith("no")
    assert out.grade.reward == 1  # asked, was told no, did nothing: that is fine


def test_the_html_transcript_marks_where_each_fact_was_told_and_why_another_was_not():
    from passhat.report.html import _transcript
    from passhat.store.results import TrialRecord

    def record(out):
        return TrialRecord(
            "retail-038",
            "baseline",
            0,
            1,
            out.grade.reward,
            out.grade.signature,
            None,
            [e.to_dict() for e in out.events],
            out.grade.to_dict(),
            0.0,
            1.0,
        )

    told = _transcript(0, record(play(TASKS["retail-038"], SaysFactsItsOwnWay)))
    assert told.count('<mark title="tells ') >= 1 and "tells 52.40" in told and "not told" not in told
    negated = _transcript(0, record(play(TASKS["retail-038"], NegatesFacts)))
    assert "<b>not told</b> (negated)" in negated and "<mark title" not in negated
