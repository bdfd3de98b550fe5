"""Verdicts on free text the agent writes for someone else: a hand-off summary judged by meaning (it names
the customer's records or words, and does not turn the request round), and a note or notice that must
not say a task's fact wrongly. Every trial runs through the real orchestrator, customer and graders."""

from __future__ import annotations

import asyncio

from adversaries import RETAIL, Adversary, agent, play

from passhat.agents.reference import Script
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.domains.model import Action
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event

PAYABLES = load_domain("payables")
HANDOFF = RETAIL.tasks["retail-043"]  # compensation for the late delivery of #R8119329, handed over
NOTICE = PAYABLES.tasks["pay-025"]  # INV-71028 is within tolerance, approved, and the vendor notified


class WritesProse(Adversary):
    """The perfect agent, with its own text in one free-text argument of its writes."""

    argument = "summary"
    text = ""

    def _round(self, actions: list[Action], text: str | None = None) -> Script[list[Event]]:
        mine = [Action(tool=a.tool, args={**a.args, self.argument: self.text}) if self.argument in a.args else a for a in actions]
        return (yield from super()._round(mine, text))


def payables_play(make_agent):
    spec = TrialSpec(NOTICE, PERSONAS["baseline"], 0, trial_seed(11, NOTICE.id, "baseline", 0))
    return asyncio.run(run_trial(PAYABLES, spec, make_agent, resolve_user("scripted")))


def test_a_hand_off_summary_in_other_words_than_the_customer_s_passes_when_it_names_the_records():
    summary = "Goodwill credit requested: parcel R8119329 came after journey."  # no word of the customer's
    assert play(HANDOFF, agent(WritesProse, text=summary)).grade.reward == 1


def test_a_hand_off_summary_that_turns_the_request_round_fails():
    summary = "Customer does not want compensation for the late delivery of #R8119329."
    out = play(HANDOFF, agent(WritesProse, text=summary))
    assert (out.grade.reward, out.grade.signature) == (0, "wrong_arguments")
    assert out.grade.details["poor_handoffs"][0]["text"] == summary


def test_a_summary_that_denies_what_the_customer_denied_is_no_turn_round():
    summary = "Customer wants compensation for the late delivery of #R8119329; no cancellation, no return."
    assert play(HANDOFF, agent(WritesProse, text=summary)).grade.reward == 1


def test_a_vendor_notice_that_says_a_fact_wrongly_fails():
    notice = "INV-71028 is over tolerance, so we will pay only part of it."
    out = payables_play(agent(WritesProse, argument="message", text=notice))
    assert (out.grade.reward, out.grade.signature) == (0, "wrong_arguments")
    assert [m["fact"] for m in out.grade.details["misstated_writes"]] == ["within tolerance"]


def test_a_vendor_notice_in_its_own_words_passes():
    notice = "Good news: INV-71028 is within tolerance and has been approved in full for payment."
    out = payables_play(agent(WritesProse, argument="message", text=notice))
    assert out.grade.reward == 1 and out.grade.details["misstated_writes"] == []


def test_a_summary_that_restates_a_dispute_in_its_own_negation_is_no_turn_round():
    from passhat.grade.graders import _turned_round

    said = ["There's a tow on my account, charge CH-51801, that never happened. I want it looked into and removed."]
    assert not _turned_round("Member did not have the tow on 2025-06-07 (CH-51801); wants it removed.", said)
    assert _turned_round("Member does not want the tow charge CH-51801 looked into or removed.", said)


def test_a_notice_that_says_wrongly_what_the_backend_holds_about_its_record_fails_even_when_the_task_lists_no_such_fact():
    notice = "INV-71028 has been moved to vendor query; we will contact you."  # it is ready for payment
    out = payables_play(agent(WritesProse, argument="message", text=notice))
    assert (out.grade.reward, out.grade.signature) == (0, "wrong_arguments")
    assert "ready for payment" in [m["fact"] for m in out.grade.details["misstated_writes"]]


def test_a_hand_off_summary_that_says_the_customer_confirmed_what_they_denied_fails():
    """The customer said the parcel "didn't arrive in time for my trip"."""
    summary = "Customer confirmed the order arrived in time for the trip; wants compensation."
    out = play(HANDOFF, agent(WritesProse, text=summary))
    assert (out.grade.reward, out.grade.signature) == (0, "wrong_arguments")
    assert out.grade.details["poor_handoffs"][0]["text"] == summary


def test_a_hand_off_summary_that_confirms_the_denial_in_its_own_words_passes():
    summary = "Customer confirmed order #R8119329 did not arrive in time for the trip; wants compensation."
    assert play(HANDOFF, agent(WritesProse, text=summary)).grade.reward == 1


def test_a_hand_off_summary_that_says_a_record_wrongly_fails_even_when_the_task_lists_no_such_fact():
    """#R8119329 is processed, not cancelled: the person taking over would act on a false status."""
    summary = "Order #R8119329 is cancelled; customer asks for compensation for the late delivery."
    out = play(HANDOFF, agent(WritesProse, text=summary))
    assert (out.grade.reward, out.grade.signature) == (0, "misinformed")
    assert [(m["column"], m["said"]) for m in out.grade.details["misinformed"]] == [("status", "cancelled")]


def test_a_hand_off_summary_that_says_the_record_right_passes():
    summary = "Order #R8119329 is processed but came late for the trip; customer asks for compensation."
    out = play(HANDOFF, agent(WritesProse, text=summary))
    assert (out.grade.reward, out.grade.details["misinformed"]) == (1, [])
