"""A proposal binds a write when it names the write's values in any usual form: a booking by its day and time as
people write them, a refund beside what the member pays; and never when a value is another one respelled."""

from __future__ import annotations

import asyncio
import importlib

import pytest
from adversaries import ProposesWrongly, agent

from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.dialogue.proposals import Commitment, binding
from passhat.domains.model import Action, Domain
from passhat.env import Environment, tool_registry
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial


def domain(name: str) -> Domain:
    return importlib.import_module(f"passhat.domains.{name}").DOMAIN


def binds(domain_name: str, task_id: str, proposal: str) -> bool:
    """Whether a yes to ``proposal`` confirms the task's first ground-truth write, as the guard and graders judge it."""
    world = domain(domain_name)
    action: Action = world.tasks[task_id].acceptable[0].actions[0]
    env = Environment(world)
    try:
        terms = world.proposal_terms(env.db, action)
    finally:
        env.close()
    words = tool_registry(world)[action.tool].meta.confirm_words
    return binding(proposal, Commitment(action.tool, words, tuple(terms)), id_pattern=world.id_pattern).ok


# intake-003: book P-1016 with D-11 (Dr Ilse Varga) on 2025-06-17, a Tuesday, at 14:30
BOOKING = "Shall I book an appointment for patient P-1016 with Dr Ilse Varga (D-11) on {when}?"


@pytest.mark.parametrize(
    "when",
    [
        "2025-06-17 at 14:30",
        "Tuesday 17 June at 2:30 pm",
        "June 17, 2025 at 14:30",
        "17 June 2025 at 2.30pm",
        "Tue, Jun 17 at half past two in the afternoon",
        "Tuesday the 17th of June, 2:30 p.m.",
        "Tue Jun 17, 2025 at 14.30",  # a dot, beside the date
        "14.30 on Tue Jun 17, 2025",
    ],
)
def test_a_booking_is_proposed_with_its_day_and_time_in_any_usual_form(when):
    assert binds("intake", "intake-003", BOOKING.format(when=when))


@pytest.mark.parametrize(
    "when",
    [
        "Tuesday 17 June at 3:30 pm",  # another time
        "Tuesday 17 June at 2:30 am",  # the other half of the day
        "Wednesday 17 June at 2:30 pm",  # 17 June 2025 is a Tuesday: which day is meant is unknown
        "18 June 2025 at 2:30 pm",
        "June 17, 2024 at 14:30",
        "17 June",  # no time at all
        "17 June, 14.30",  # a dot not tied to the date by "at" or "on": an amount, no time
    ],
)
def test_a_booking_at_another_day_or_time_is_not_proposed(when):
    assert not binds("intake", "intake-003", BOOKING.format(when=when))


# benefits-003: apply Classic to CH-50301, refund $37.50 to the Visa ending 5530; the member pays $37.50 of $75.00
@pytest.mark.parametrize(
    "proposal",
    [
        "Refund: $37.50 to your Visa ending 5530\nYou'd pay $37.50 for the tyre change. Shall I apply Classic to CH-50301?",
        "Apply your Classic plan to CH-50301: of the $75.00 fee you pay $37.50 and $37.50 goes back to your Visa "
        "ending 5530. OK?",
        "Shall I apply Classic to charge CH-50301, adjusting it by -37.50 to your Visa ending 5530?",
    ],
)
def test_a_refund_beside_what_the_member_pays_is_proposed(proposal):
    assert binds("benefits", "benefits-003", proposal)


@pytest.mark.parametrize(
    ("task", "proposal"),
    [
        # benefits-001: Plus covers all of the $90.00 fee of CH-50101: the member pays nothing, so "you'd pay" is false
        (
            "benefits-001",
            "Refund: $90.00 to your Visa ending 4821\nYou'd pay $90.00 for the lockout. Shall I apply Plus to CH-50101?",
        ),
        ("benefits-001", "Shall I apply Plus to CH-50101? You would be charged $90.00 on your Visa ending 4821."),
        ("benefits-003", "Shall I apply Classic to CH-50301 and refund $37.50 to your Visa ending 5530? You'd pay $45.00."),
        ("benefits-003", "Shall I apply Classic to CH-50301 and refund $37.50 to your Visa ending 1234?"),
    ],
)
def test_a_charge_or_another_amount_dressed_as_the_refund_is_not_proposed(task, proposal):
    assert not binds("benefits", task, proposal)


@pytest.mark.parametrize(
    ("patient", "proposed"),
    [
        ("P-1016", True),
        ("Jonas Whitcombe", True),
        ("J. Whitcombe", True),  # by initial
        ("Whitcombe, Jonas", True),
        ("T. Whitcombe", False),  # another initial is another person
        ("Mr Whitcombe", False),  # a surname names a family, not a patient
    ],
)
def test_a_patient_is_named_by_file_number_or_name_with_initials(patient, proposed):
    proposal = f"Shall I book an appointment for {patient} with Dr Ilse Varga on Tuesday 17 June at 2:30 pm?"
    assert binds("intake", "intake-003", proposal) is proposed


@pytest.mark.parametrize(
    ("proposal", "proposed"),
    [
        ("Shall I escalate INV-71031 (Brookvale Cable, $7,040.00) to the controller?", True),
        ("Escalate INV-71031 (Brookvale Cable, 7040.00 USD)?", True),  # the billed total, stated for the record
        ("Shall I escalate INV-71031 (Brookvale Cable, $7,400.00) to the controller?", False),  # another amount
        ("Shall I escalate INV-71031? It comes to $999.99 in all.", False),
    ],
)
def test_an_invoice_write_may_state_the_billed_total_and_no_other_amount(proposal, proposed):
    assert binds("payables", "pay-027", proposal) is proposed


# -- played through the orchestrator, the scripted customer and the graders -------------------------


def in_words(described: str) -> str:
    """intake-003's proposal with its day and time as people write them."""
    return described.replace("2025-06-17", "Tuesday 17 June").replace("14:30", "2:30 pm")


def play(domain_name: str, task_id: str, change) -> object:
    """One baseline trial of the task by the perfect reference agent, proposing each write as ``change`` words it."""
    world = domain(domain_name)
    task = world.tasks[task_id]
    spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(11, task.id, "baseline", 0))
    return asyncio.run(run_trial(world, spec, agent(ProposesWrongly, change=staticmethod(change)), resolve_user("scripted")))


def test_a_booking_proposed_in_ordinary_words_is_agreed_to_and_passes():
    out = play("intake", "intake-003", in_words)
    assert (out.grade.reward, out.grade.signature) == (1, None)


def test_a_booking_proposed_at_another_time_in_ordinary_words_is_not_agreed_to():
    out = play("intake", "intake-003", lambda described: in_words(described).replace("2:30 pm", "3:30 pm"))
    assert (out.grade.reward, out.grade.signature) == (0, "unconfirmed_write")


@pytest.mark.parametrize(
    ("domain_name", "task_id", "aside"),
    [
        ("benefits", "benefits-003", "You'd pay $37.50 for the tyre change"),  # the member's share beside the refund
        ("payables", "pay-027", "INV-71031 is from Brookvale Cable, billed at $7,040.00"),  # the total, for the record
    ],
)
def test_a_proposal_that_states_what_else_is_true_of_the_write_passes(domain_name, task_id, aside):
    out = play(domain_name, task_id, lambda described: f"{described}. {aside}")
    assert (out.grade.reward, out.grade.signature) == (1, None)


@pytest.mark.parametrize(
    ("domain_name", "task_id", "aside"),
    [
        ("benefits", "benefits-003", "You'd pay $45.00 for the tyre change"),
        ("payables", "pay-027", "INV-71031 is from Brookvale Cable, billed at $7,400.00"),
    ],
)
def test_a_proposal_that_states_another_amount_is_not_agreed_to(domain_name, task_id, aside):
    out = play(domain_name, task_id, lambda described: f"{described}. {aside}")
    assert (out.grade.reward, out.grade.signature) == (0, "unconfirmed_write")


@pytest.mark.parametrize(
    "task_id, proposal",
    [
        ("hd-011", "INC-1111 is at high priority. Shall I raise it from high to critical?"),
        ("hd-011", "Escalate INC-1111 to critical priority (currently high)?"),
        ("hd-011", "It's high now. I can escalate INC-1111 to critical — confirm?"),
        ("hd-006", "The network team turned it down. Assign INC-1061 to telephony instead?"),
        ("hd-023", "INC-1231 was logged as hardware, but it's the Wi-Fi dropping. Reclassify it as network?"),
    ],
)
def test_a_value_said_as_what_the_record_is_now_is_context_not_a_term(task_id, proposal):
    assert binds("helpdesk", task_id, proposal)


@pytest.mark.parametrize(
    "task_id, proposal",
    [
        ("hd-023", "I'd classify INC-1231 as network. Shall I classify it as hardware?"),  # the question asks another
        ("hd-023", "Shall I classify INC-1231 as hardware now?"),  # "now" in the action's own clause is no recap
        ("hd-023", "Classify INC-1231 as hardware (was network)?"),
        ("hd-011", "Shall I raise INC-1111 from critical to high?"),
        ("hd-006", "Assign INC-1061 to network (telephony turned it down)?"),
    ],
)
def test_another_value_of_the_closed_set_asked_for_is_not_agreed_to(task_id, proposal):
    assert not binds("helpdesk", task_id, proposal)
