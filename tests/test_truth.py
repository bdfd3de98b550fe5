"""Nothing false told: a value the agent states about a record must be one the backend held for it.

Specifications over two built-in worlds (booked times and dates and their status; billed totals), with each
conversation built in code: the agents that would fool a grader reading only the task's facts, and the correct
agents a careless check would fail.
"""

from __future__ import annotations

import asyncio

import pytest

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.env import Environment
from passhat.grade import grade_trial
from passhat.grade.truth import misstatements
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event

INTAKE = load_domain("intake")
PAYABLES = load_domain("payables")
HELPDESK = load_domain("helpdesk")
BENEFITS = load_domain("benefits")
# AP-5101 is booked for 2025-06-12 at 09:30; INV-71001 is billed at $510.00, its status an exception
BOOK = ("book_appointment", {"patient_id": "P-1016", "clinician_id": "D-11", "date": "2025-06-17", "time": "14:30"})
MOVE = ("reschedule_appointment", {"appointment_id": "AP-5101", "date": "2025-06-13", "time": "10:30"})


def told(domain, *steps):
    """The misstatements of a conversation: ("user"|"agent", text) messages and (tool, args) calls, in order."""
    env = Environment(domain)
    events = [Event("user", "Hello")]
    for kind, what in steps:
        if kind in ("user", "agent"):
            events.append(Event(kind, what))
        else:
            done = env.execute(kind, dict(what))
            events.append(Event("tool", name=done.name, args=done.args, result=done.result))
    env.close()
    return [(m.column, m.said) for m in misstatements(domain, events)]


@pytest.mark.parametrize(
    "message,false",
    [
        ("I've booked you with Dr Varga on 17 June 2025 at 2:00 pm.", ("time", "14:00")),
        ("Booked: June 17, 2025, 14:00.", ("time", "14:00")),
        ("All set: 2025-06-18 at 14:30 with Dr Varga.", ("date", "2025-06-18")),
    ],
)
def test_a_booking_told_with_a_wrong_time_or_date_is_misinformed(message, false):
    assert told(INTAKE, BOOK, ("agent", message)) == [false]


@pytest.mark.parametrize(
    "message",
    [
        "I've booked you with Dr Varga on 17 June 2025 at 2:30 pm.",
        "Booked: Tuesday, June 17 at 14:30.",
        "Done! Your appointment is on 2025-06-17 at 14:30. The desk answers calls from 8:00 to 17:00.",
        "You're booked for 17 June at 14:30; we can book up to 30 days ahead.",
    ],
)
def test_a_booking_told_right_in_any_form_beside_other_numbers_is_true(message):
    assert told(INTAKE, BOOK, ("agent", message)) == []


@pytest.mark.parametrize(
    "message,false",
    [
        ("AP-5101 is on 2025-06-12 at 10:30.", ("time", "10:30")),
        ("Your appointment AP-5101 is on June 13th.", ("date", "--06-13")),
        ("AP-5101 has been canceled.", ("status", "cancelled")),
        ("The date of birth on P-1001 is 12 February 1984.", ("birth_date", "1984-02-12")),
        ("AP-5101 is at 10:30. Sorry about the wait!", ("time", "10:30")),  # "sorry" that corrects nothing
    ],
)
def test_a_wrong_value_of_a_named_record_is_misinformed(message, false):
    assert told(INTAKE, ("agent", message)) == [false]


@pytest.mark.parametrize(
    "message",
    [
        "AP-5101 is on 12 June at 9:30 am, and it is booked.",
        "You mentioned 10:30, but AP-5101 is actually at 09:30.",  # the customer's claim, corrected
        "AP-5101 is not at 10:30.",
        "Shall I move AP-5101 to 10:30 on 2025-06-13?",
        "I can move AP-5101 to 10:30 on 2025-06-13 if you like.",  # a proposal, not a state
        "AP-5101 is at 10:30. Sorry, I mean 09:30.",  # corrected
        "AP-5101 is at 09:30; the next opening is at 11:00.",  # the other time is about something else
    ],
)
def test_a_named_record_told_right_quoted_proposed_or_corrected_is_true(message):
    assert told(INTAKE, ("agent", message)) == []


def test_a_list_under_a_named_record_is_read_by_its_labels():
    card = "**AP-5101**\n- Date: 12 June 2025\n- Time: {time}\n- Status: {status}\nThe desk opens at 08:00."
    assert told(INTAKE, ("agent", card.format(time="9:30 am", status="booked"))) == []
    wrong = card.format(time="10:30 am", status="cancelled")
    assert sorted(told(INTAKE, ("agent", wrong))) == [("status", "cancelled"), ("time", "10:30")]


def test_a_value_true_when_said_and_changed_later_by_the_agents_own_write_is_true():
    steps = [("agent", "AP-5101 is at 09:30."), ("user", "Move it please"), MOVE, ("agent", "AP-5101 is now at 10:30.")]
    assert told(INTAKE, *steps) == []


def test_the_last_word_counts():
    right_then_wrong = [("agent", "AP-5101 is at 09:30."), ("user", "Sure?"), ("agent", "Yes: AP-5101 is at 10:00.")]
    assert told(INTAKE, *right_then_wrong) == [("time", "10:00")]
    wrong_then_right = [("agent", "AP-5101 is at 10:00."), ("user", "Sure?"), ("agent", "Sorry: AP-5101 is at 09:30.")]
    assert told(INTAKE, *wrong_then_right) == []


def test_a_word_of_the_statuses_used_as_a_verb_of_something_else_says_no_status():
    # INC-1201's status is "workaround"; "assigned to" says who has it, not that its status is "assigned"
    assert told(HELPDESK, ("agent", "INC-1201 is assigned to the desktop team.")) == []
    assert told(HELPDESK, ("agent", "INC-1201 is resolved.")) == [("status", "resolved")]


def test_a_status_is_read_off_the_record_the_id_nearest_before_it_names():
    assert told(PAYABLES, ("agent", "INV-71001 duplicates INV-71002, which is already paid.")) == [("status", "paid")]
    assert told(PAYABLES, ("agent", "INV-71001 is an exception, and INV-71002 is too.")) == []


@pytest.mark.parametrize(
    "message,false",
    [
        ("The total of INV-71001 is $540.00.", [("total", "540.00")]),
        ("INV-71001 total is five hundred forty dollars.", [("total", "540.00")]),
        ("INV-71001: total $510.00.", []),
        ("INV-71001 total is five hundred ten dollars.", []),
        ("INV-71001 is $30.00 over its purchase order, past the $25.00 cap.", []),  # amounts that are no column's
        ("INV-71001 is within tolerance: the price difference of $16.36 is allowed.", []),
    ],
)
def test_an_amount_is_checked_only_when_labelled_with_the_column(message, false):
    assert told(PAYABLES, ("agent", message)) == false


@pytest.mark.parametrize(
    "message,false",
    [
        ("The total of INV-71001 is about $500.", []),  # rounded to its step of 100: true
        ("The total of INV-71001 is $0.5k.", []),
        ("The total of INV-71001 is about $700.", [("total", "700.00")]),  # "about" hides no false amount
        ("The total of INV-71001 is $0.7k.", [("total", "700.00")]),
        ("The total of INV-71001 is five hundred ten dollars.", []),
    ],
)
def test_a_rounded_amount_is_true_within_its_step_and_false_beyond_it(message, false):
    assert told(PAYABLES, ("agent", message)) == false


@pytest.mark.parametrize(
    "domain,message,false",
    [
        # INV-71001 is Kestrel Fasteners', $510.00; INV-71003 is Northmoor Packaging's; AP-5101 is with Ilse Varga
        (PAYABLES, "Escalate INV-71001 (Kestrel Fasteners, $510.00)? It is in exception.", []),
        (PAYABLES, "INV-71001 (Northmoor Packaging, $510.00) is in exception.", [("vendor_id", "Northmoor Packaging")]),
        (PAYABLES, "INV-71001 (Kestrel Fasteners, $610.00) is in exception.", [("*amounts", "610.00")]),
        (PAYABLES, "INV-71001 for $610.00 is in exception.", [("*amounts", "610.00")]),
        (PAYABLES, "INV-71001 duplicates INV-71003 (Northmoor Packaging, $1,261.20).", []),  # another record's
        (PAYABLES, "INV-71001 and INV-71003 ($1,771.20 in all) are in exception.", []),  # a total
        (PAYABLES, "INV-71001 - $30.00 over its purchase order.", []),  # a difference
        (PAYABLES, "INV-71001: $22.40 × 80 = $1,792.00, short-pay $1,523.20.", []),  # a recap's unit price
        (INTAKE, "AP-5101 (Dr Varga, 12 June) is booked.", []),
        (INTAKE, "AP-5101 is booked with I. Varga.", []),
        (INTAKE, "AP-5101 (Dr Sousa, 12 June) is booked.", [("clinician_id", "Mirela Sousa")]),
        (INTAKE, "AP-5101 is booked with Mirela Sousa.", [("clinician_id", "Mirela Sousa")]),
        (INTAKE, "AP-5101 is booked; Mirela Sousa has openings on Friday too.", []),  # another clause: someone else
        (HELPDESK, "INC-1201 is not Alba Moreau's.", []),  # denied
    ],
)
def test_an_owner_or_an_amount_said_beside_an_id_is_checked_against_the_record(domain, message, false):
    assert told(domain, ("agent", message)) == false


@pytest.mark.parametrize(
    "message,false",
    [
        # INC-1111 is with the applications group
        ("INC-1111 is with the applications team.", []),
        ("INC-1111 is assigned to applications.", []),
        ("INC-1111 was rejected by network, so it is with applications now.", []),  # another group's part in it
        ("Shall I send INC-1111 to network?", []),
        ("INC-1111 is with the network team.", [("assigned_group", "network")]),
        ("INC-1111 has gone to endpoint.", [("assigned_group", "endpoint")]),
    ],
)
def test_the_group_that_has_a_ticket_is_checked_against_the_ticket(message, false):
    assert told(HELPDESK, ("agent", message)) == false


def test_a_refund_made_leaves_the_charge_it_names_readable():
    """The adjustment a refund adds is keyed by the charge's id: the id still names the charge."""
    refund = ("apply_plan_benefit", {"charge_id": "CH-50201", "plan": "classic", "payment_method_id": "PM-30021"})
    assert told(BENEFITS, refund, ("agent", "Done: CH-50201 is refunded $46.25.")) == []
    assert told(BENEFITS, refund, ("agent", "Done: CH-50201 is refunded $51.88.")) == [("refunded", "51.88")]


def test_a_misinformed_trial_fails_with_its_signature_and_a_true_one_passes():
    task = INTAKE.tasks["intake-003"]
    spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(11, task.id, "baseline", 0))
    out = asyncio.run(run_trial(INTAKE, spec, resolve_agent("reference:perfect"), resolve_user("scripted")))
    assert out.grade.reward == 1
    last = max(i for i, e in enumerate(out.events) if e.kind == "agent")
    for said, verdict in (("It is on 17 June at 2:00 pm.", (0, "misinformed")), ("It is on 17 June at 2:30 pm.", (1, None))):
        events = list(out.events)
        events[last] = Event("agent", f"{events[last].text} {said}")
        grade = grade_trial(INTAKE, task, _replayed(events), events)
        assert (grade.reward, grade.signature) == verdict
        assert bool(grade.details["misinformed"]) == (verdict[1] == "misinformed")


def _replayed(events):
    """The backend the trial's calls leave."""
    env = Environment(INTAKE)
    for e in events:
        if e.kind == "tool":
            env.execute(e.name, dict(e.args))
    return env


CANCEL = ("cancel_appointment", {"appointment_id": "AP-5101"})
APPROVE = ("approve_invoice", {"invoice_id": "INV-71001"})
RECAP = "You're all set!\n\n**Appointment confirmed**\n- **Clinician:** Dr Ilse Varga\n- **Date:** Tuesday, 17 June 2025\n"


@pytest.mark.parametrize(
    "domain,steps",
    [
        (INTAKE, [BOOK, ("agent", RECAP + "- **Time:** 2:30 PM\n\nPlease arrive early. Our line is open 8 am to 5 pm.")]),
        (
            INTAKE,
            [BOOK, ("agent", "Booked! Your reference is AP-5233, on 17 June 2025 at 14:30. Call 24 hours before to change.")],
        ),
        (INTAKE, [MOVE, ("agent", "Done — AP-5101 has been moved from 12 June at 9:30 to Friday 13 June at 10:30.")]),
        (INTAKE, [MOVE, ("agent", "AP-5101 is now on 2025-06-13 at 10:30 (it was 2025-06-12 at 09:30).")]),
        (INTAKE, [CANCEL, ("agent", "AP-5101 (12 June, 9:30 am) is now cancelled. Anything else?")]),
        (INTAKE, [("agent", "I see AP-5101 on Thursday 12 June at 9:30 am and AP-5102 on 18 June at 2 pm.")]),
        (INTAKE, [("agent", "Dr Varga's openings on 13 June: 09:00, 10:30, 14:00. Which suits you for AP-5101?")]),
        (INTAKE, [("agent", "AP-5101 is booked for 12 June. Cancellations need 24 hours' notice (by 09:30 on 11 June).")]),
        (PAYABLES, [APPROVE, ("agent", "Done — INV-71001 is approved for payment in full, $510.00.")]),
        (PAYABLES, [("agent", "INV-71001 ($510.00, dated 2025-05-29) is in exception: the PO allows $480.00, $30.00 over.")]),
        (PAYABLES, [("agent", "| Invoice | Total | Status |\n|---|---|---|\n| INV-71001 | $510.00 | exception |")]),
        (HELPDESK, [("agent", "INC-1201 (screen flickers) has a workaround: KE-11. Its priority is medium.")]),
        (HELPDESK, [("agent", "INC-1201 can be raised, but only so far. For your records: high priority at most.")]),
    ],
)
def test_what_real_models_write_when_right_is_true(domain, steps):
    assert told(domain, *steps) == []


@pytest.mark.parametrize(
    "domain,steps,false",
    [
        (INTAKE, [BOOK, ("agent", RECAP + "- **Time:** 2:00 PM")], [("time", "14:00")]),
        (INTAKE, [MOVE, ("agent", "Done — AP-5101 is now on 13 June at 11:30.")], [("time", "11:30")]),
        (
            PAYABLES,
            [APPROVE, ("agent", "Done: INV-71001 is approved. Status: ready for payment.")],
            [("status", "ready for payment")],
        ),
        (HELPDESK, [("agent", "INC-1201's priority is high.")], [("priority", "high")]),
    ],
)
def test_what_real_models_write_when_wrong_is_misinformed(domain, steps, false):
    assert told(domain, *steps) == false


@pytest.mark.parametrize(
    "domain,message",
    [
        (
            BENEFITS,
            "I will apply the Classic plan to CH-50201, which refunds $46.25 to your card. Would you like me to go ahead?",
        ),
        (
            PAYABLES,
            '1. Hold INV-71011, reason: duplicate. 2. Audit note: "Held as duplicate of INV-60311, already paid." Proceed? y/n',
        ),
    ],
)
def test_what_a_proposal_would_do_and_quoted_wording_are_no_claims(domain, message):
    """Both were read as false claims (a refund not made yet; the note's "Held" as the invoice's decision)."""
    assert told(domain, ("agent", message)) == []


@pytest.mark.parametrize(
    "message,false",
    [
        ("The total of INV-71001 is $480.00. Shall I approve it?", ("total", "480.00")),  # a finding before the ask
        ('The total of INV-71001 is $480.00. Note: "Held as a duplicate".', ("total", "480.00")),
    ],
)
def test_a_false_finding_beside_a_proposal_or_a_quote_is_still_misinformed(message, false):
    assert told(PAYABLES, ("agent", message)) == [false]


HOLD = ("hold_invoice", {"invoice_id": "INV-71013", "reason": "duplicate"})  # INV-71013 and INV-60313: $141.00 each


def _noted(note):
    return ("add_audit_note", {"invoice_id": "INV-71013", "note": note})


@pytest.mark.parametrize(
    "steps",
    [
        # pay-035, played: the note's amount is the invoices' total, not the PO's (which holds no amount)
        [HOLD, _noted("Held as duplicate of INV-60313 (POG-3402, PO-4113, $141.00), already paid.")],
        [HOLD, _noted("dup of INV-60313 (PO-4113, $141.00)")],  # terse
        [HOLD, ("agent", "- **Duplicate of:** INV-60313 (POG-3402, PO-4113, **$141.00**), paid")],  # markdown
        [HOLD, ("agent", "Found it! INV-71013 duplicates INV-60313 (PO-4113, $141.00), which was already paid.")],
        [HOLD, _noted("Same PO-4113 (141.00 USD) as paid INV-60313.")],  # the record the note is on
    ],
)
def test_an_amount_named_with_several_records_is_true_when_true_of_any_of_them(steps):
    assert told(PAYABLES, *steps) == []


@pytest.mark.parametrize(
    "steps,false",
    [
        ([HOLD, _noted("Held as duplicate of INV-60313 (POG-3402, PO-4113, $14.10), already paid.")], "14.10"),
        ([HOLD, _noted("Held as duplicate of INV-60313 (POG-3402, PO-4113, USD 411.00).")], "411.00"),  # respelled
        ([HOLD, ("agent", "INV-71013 (PO-4113, $150.00) is on hold.")], "150.00"),  # the one record named
        ([HOLD, _noted("INV-71013 (PO-4113, $150.00) held as duplicate of INV-60313.")], "150.00"),
        (
            [
                HOLD,
                ("agent", "INV-71013 duplicates INV-60313 (PO-4113, $141.00)."),
                ("agent", "To recap, INV-71013 (Pellham Office Goods, $150.00) is on hold."),
            ],
            "150.00",
        ),  # a later contradiction
        (
            [("agent", "INV-71001 (Kestrel Fasteners, $1,261.20) and INV-71003 (Northmoor Packaging, $510.00) are open.")],
            "1261.20",
        ),  # each other's totals
    ],
)
def test_an_amount_false_of_every_record_named_with_it_is_still_misinformed(steps, false):
    assert ("*amounts", false) in told(PAYABLES, *steps)
