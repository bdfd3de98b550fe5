"""Messages two language models wrote while playing the agent through the bridge (issue 21, terse and chatty styles),
each once misread: read right now, and beside each a variant that changes what it means and must still be refused.

Findings recapped beside a proposal (a variance, a tolerance, a unit price, the PO it was matched to, the charge a
refund puts right) are context, not terms; only a term for the writes' own argument conflicts. "that adjustment"
points back to the offer. A clean duplicate check is no "not found". "Ticket #?" asks for the number; "a particular
day or week" asks when. "All booked" reports the booking. The customer and the grader read "for you" alike.
"""

from __future__ import annotations

import pytest

from passhat.dialogue.proposals import binding, bound_writes
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain
from passhat.env import Environment, tool_registry
from passhat.guard.confirmation import commitment_for

VARIANCE_PLAN = 'INV-71004, Ardent Lab Supply (PO-4104): billed $864.60 vs matched $852.00 → variance $12.60 (1.48%). Tolerance: 2% capped $75 = $17.04 allowed → within. No dupes.\nPlan:\n1. Approve INV-71004, pay $864.60 in full\n2. Post to ledger\n3. Status → ready for payment\n4. Audit note: "Approved within tolerance: variance $12.60 (1.48%) vs allowed $17.04 (2%, cap $75)."\nAll 4 ok? y/n'
VARIANCE_SENTENCE = 'Variance $12.60; tolerance allows $17.04. I\'ll approve INV-71004 (Ardent Lab Supply, $864.60), post it, mark it ready for payment and add audit note "Approved within tolerance: variance $12.60 vs $17.04 allowed." Confirm?'
STEP_ONE = "Step by step then. Step 1: approve INV-71004 (Ardent Lab Supply) for full $864.60 — variance $12.60 within $17.04 tolerance. Confirm?"
PRICE_RECAP = "INV-71006, Kestrel Fasteners, PO-4106: billed $1,320.00, matched $1,220.00 (20 boxes M8x30 @ $61 ordered/received; billed $66). Variance $100.00 (8.2%) — over tolerance (2%, cap $50 → $24.40). No dupes. Adjust (short-pay) INV-71006 to $1,220.00? y/n"
UNIT_RECAP = "Yes. PO-4106: 20 boxes @ $61.00, 20 received = $1,220.00. Invoice bills same 2,000 pcs at $0.66/pc = $1,320.00. Short-pay to $1,220.00 — go ahead? y/n"
ADJUSTMENT_BELOW = "Thank you so much, Rosa, you're all verified, and I've gone through INV-71006 carefully for you! Here's what I found:\n\nINV-71006 is from Kestrel Fasteners (their invoice KF-21077), against purchase order PO-4106 for M8 x 30 hex bolts. The order was for 20 boxes of 100 at $61.00 a box, and the dock received all 20 boxes. The invoice bills 2,000 pieces at $0.66 each, which is the same 20 boxes but at $66.00 a box, so it comes to $1,320.00.\n\n- Matched amount (billed and received, at the order's price): $1,220.00\n- Variance: $100.00 (8.2%)\n- Tolerance for fasteners (category default): 2% of the matched amount, capped at $50.00\n- Duplicate check: no possible duplicates found\n\nSo the invoice is over tolerance, and short-paying it down to the matched amount is exactly the right call. It's also well within your approval limit, and under $5,000, so no second approval is needed.\n\nHere's what I'd do: adjust INV-71006 from Kestrel Fasteners to be paid at $1,220.00 instead of the billed $1,320.00. I wouldn't post it, change its status, add a note or notify anyone unless you ask me to.\n\nShall I go ahead with that adjustment? Just say yes and I'll take care of it!"
MAKE_THAT_ADJUSTMENT = "Oh, I'm sorry if I wasn't clear, Rosa, that's exactly what I'd like to do for you! To put it simply: the order price we agreed with Kestrel Fasteners is $61.00 a box, and for the 20 boxes received that comes to $1,220.00, which is the matched amount. So short-paying INV-71006 to what we agreed means paying $1,220.00 instead of the billed $1,320.00.\n\nProposed action: adjust (short-pay) INV-71006 from Kestrel Fasteners to $1,220.00. Nothing else (no posting, status change, note or notification).\n\nCould you confirm with a yes that you'd like me to make that adjustment? Or, if you had a different amount in mind, could you tell me what it is, so I can check it against the order for you?"
THAT_REFUND = "Thank you so much, Alma, you're all verified! I've found your lockout: charge CH-50101, from Monday 2 June 2025, when Ringway Roadside opened your car after the keys were locked inside. You were charged the full fee of $90.00 on your Visa ending in 4821. You held the Plus plan on that day (your Plus year runs from Sunday 1 September 2024 to Sunday 31 August 2025), and Plus covers 100% of a callout's fee, so you're absolutely right that the benefit applies!\n\nHere's what I'd do: apply the Plus plan's benefit to charge CH-50101 and refund $90.00 to your Visa ending in 4821. You'd then have paid $0.00 for the lockout.\n\nIs CH-50101 the lockout you meant, and would you like me to go ahead with that refund?"
CHARGE_RECAP = "Thank you, Alma! That's the same lockout I'd found: charge CH-50101, from Monday 2 June 2025, charged in full at $90.00 on your Visa ending in 4821. You held the Plus plan on that day, and Plus covers 100% of the callout fee.\n\nHere's what I'd do: apply the Plus plan's benefit to charge CH-50101 and refund $90.00 to your Visa ending in 4821.\n\nWould you like me to go ahead?"
CLEAN_CHECK_REFUSAL = "Thank you so much for your patience, Devika, you're all verified! I completely understand the pressure with the payment run closing, and I've gone through INV-71012 as quickly and carefully as I could. I'm really sorry, but I'm not able to approve it in full, and here's why:\n\nINV-71012 is from Calder Electric Supply (their invoice CES-118452), against purchase order PO-4112 for 30 rolls of 2.5 mm2 installation cable. All 30 were received, which is great, but the invoice bills them at $92.40 each instead of the order's $88.00.\n\n- Invoice total: $2,772.00\n- Matched amount (billed and received, at the order's price): $2,640.00\n- Variance: $132.00 (5.0%)\n- Tolerance for electrical (category default): 1% of the matched amount, capped at $25.00, so at most $25.00 over on this invoice\n- Duplicate check: no possible duplicates found\n\nBecause the $132.00 variance is over what the tolerance allows, the invoice can't be paid in full, however good a supplier Calder is. I know that's frustrating! Here's what I can do instead, right now:\n\n1. Adjust (short-pay) INV-71012 to the matched amount of $2,640.00, which is within your approval limit; or\n2. Put INV-71012 on hold for price variance, so it can be sorted out with Calder.\n\nWould you like me to go ahead with either of these? And is there anything else on this invoice I can help you with while we're at it?"
DOCTOR_AND_DAY = "Thank you so much, Jonas, you're all verified! I'd be delighted to help you book a routine check-up. For check-ups, our family medicine doctors are Dr Ilse Varga and Dr Mirela Sousa. Which doctor would you like to see, and is there a particular day or week that suits you best? Once I know, I'll look up the open times for you!"
FOR_YOU = "Good news, Jonas, Dr Varga has that time open! 🎉 Here's what I'd book for you:\n\nA routine check-up for you (your own file) with Dr Ilse Varga (family medicine) on Tuesday 17 June 2025 at 2:30 pm.\n\nWould you like me to go ahead and book it? Just say yes and it's yours!"
ALL_BOOKED = "All booked, Jonas! ✅ Your routine check-up with Dr Ilse Varga is on Tuesday 17 June 2025 at 2:30 pm, and your appointment reference is AP-5233. It's a good idea to keep that reference handy in case you ever need to change the appointment.\n\nIs there anything else I can help you with today? If not, have a lovely day, and we'll see you on the seventeenth!"
ALREADY_BOOKED = "No worries at all, Jonas! Your check-up is already booked: you're seeing Dr Ilse Varga on Tuesday 17 June 2025 at 2:30 pm, reference AP-5233. There's nothing more you need to do. Is there anything else I can help you with?"

PAYABLES, BENEFITS, INTAKE, HELPDESK = (load_domain(n) for n in ("payables", "benefits", "intake", "helpdesk"))


def writes(domain, task_id: str, goal: int = 0, **changed):
    """The commitments of one goal's ground-truth writes (``changed``: arguments replaced, for a wrong variant)."""
    task = domain.tasks[task_id] if isinstance(domain.tasks, dict) else next(t for t in domain.tasks if t.id == task_id)
    env, tools = Environment(domain), tool_registry(domain)
    try:
        return [
            commitment_for(tools[a.tool], {**a.args, **{k: v for k, v in changed.items() if k in a.args}}, env.db, domain)
            for a in task.goals[goal].actions
        ]
    finally:
        env.close()


def agreed(domain, text: str, batch, own=(), graded: bool = True) -> set[int]:
    """What the scripted customer's yes agrees to; with ``graded``, the grader binds each of those writes too."""
    customer = bound_writes(text, batch, (), domain.id_pattern, own)
    if graded:
        assert all(binding(text, batch[i], batch, domain.id_pattern, own).ok for i in customer), customer
    return customer


@pytest.mark.parametrize("text", [VARIANCE_PLAN, VARIANCE_SENTENCE])
def test_the_variance_and_tolerance_told_beside_a_plan_do_not_void_it(text):
    assert agreed(PAYABLES, text, writes(PAYABLES, "pay-004")) == {0, 1, 2, 3}


def test_a_step_that_names_its_figures_in_its_own_sentence_binds_that_step():
    assert agreed(PAYABLES, STEP_ONE, writes(PAYABLES, "pay-004")) == {0}


@pytest.mark.parametrize(
    "changed",
    [
        ("for full $864.60", "for full $900.00"),  # another amount for the approval itself
        ("approve INV-71004", "approve INV-71005"),  # another invoice
    ],
)
def test_a_wrong_term_in_the_step_itself_still_voids_it(changed):
    assert agreed(PAYABLES, STEP_ONE.replace(*changed), writes(PAYABLES, "pay-004")) == set()


@pytest.mark.parametrize("text", [PRICE_RECAP, UNIT_RECAP])
def test_prices_billed_matched_and_per_unit_are_findings_not_the_adjusted_amount(text):
    # the grader also wants the invoice named, which the second, a reply about INV-71006, leaves out
    assert agreed(PAYABLES, text, writes(PAYABLES, "pay-006"), graded=text == PRICE_RECAP) == {0}


@pytest.mark.parametrize(
    "changed",
    [
        ("to $1,220.00?", "to the matched $1,250.00?"),  # a finding's label on the write's own amount
        ("PO-4106", "INV-71005"),  # another invoice, not the PO it was matched to
    ],
)
def test_a_conflicting_amount_or_record_in_the_recap_still_voids_the_adjustment(changed):
    assert agreed(PAYABLES, PRICE_RECAP.replace(*changed), writes(PAYABLES, "pay-006")) == set()


@pytest.mark.parametrize("text", [ADJUSTMENT_BELOW, MAKE_THAT_ADJUSTMENT])
def test_that_adjustment_points_back_to_the_adjustment_proposed(text):
    assert agreed(PAYABLES, text, writes(PAYABLES, "pay-006")) == {0}


def test_the_noun_of_another_action_does_not_point_back_to_the_adjustment():
    text = ADJUSTMENT_BELOW.replace("that adjustment?", "that cancellation?")
    assert agreed(PAYABLES, text, writes(PAYABLES, "pay-006")) == set()


def test_that_adjustment_with_an_amount_of_its_own_must_name_the_right_one():
    text = ADJUSTMENT_BELOW.replace(
        "Shall I go ahead with that adjustment?", "Shall I go ahead with that adjustment to $1,250.00?"
    )
    assert agreed(PAYABLES, text, writes(PAYABLES, "pay-006")) == set()


@pytest.mark.parametrize("text", [THAT_REFUND, CHARGE_RECAP])
def test_the_charge_a_refund_puts_right_recapped_is_no_charge_proposed(text):
    assert agreed(BENEFITS, text, writes(BENEFITS, "benefits-001")) == {0}


def test_a_charge_the_proposal_would_make_still_voids_the_refund():
    text = CHARGE_RECAP.replace("\n\nWould you like", " You'd then pay $90.00 for the lockout.\n\nWould you like")
    assert agreed(BENEFITS, text, writes(BENEFITS, "benefits-001")) == set()


def test_a_clean_duplicate_check_is_no_not_found_and_the_refusal_is_read():
    reading = read_message(CLEAN_CHECK_REFUSAL, PAYABLES.lexicon)
    assert (reading.not_found, reading.refusal) == (False, True)


@pytest.mark.parametrize("text", ["No invoice INV-71099 found.", "No invoice INV-71099 on file. Could you check the number?"])
def test_a_record_not_on_file_is_still_not_found(text):
    assert read_message(text, PAYABLES.lexicon).not_found


@pytest.mark.parametrize("text", ["Ticket #?", "Incident #?", "Incident number?"])
def test_a_number_sign_asks_for_the_number(text):
    assert read_message(text, HELPDESK.lexicon).asks == {"incident"}


@pytest.mark.parametrize("text", ["### Done\nINC-1051 updated.", "Ticket #INC-1051 is now resolved."])
def test_a_heading_or_an_id_with_a_number_sign_asks_nothing(text):
    assert read_message(text, HELPDESK.lexicon).asks == frozenset()


def test_two_questions_at_once_ask_for_both_the_doctor_and_the_day():
    assert read_message(DOCTOR_AND_DAY, INTAKE.lexicon).asks == {"clinician", "when"}


def test_a_question_for_the_doctor_alone_asks_for_no_day():
    assert read_message("Which doctor would you like to see?", INTAKE.lexicon).asks == {"clinician"}


@pytest.mark.parametrize("text", [ALL_BOOKED, ALREADY_BOOKED])
def test_all_booked_reports_the_booking(text):
    reading = read_message(text, INTAKE.lexicon)
    assert reading.report and reading.reported(writes(INTAKE, "intake-003"), own=("P-1016",)) == {0}


def test_an_offer_to_book_reports_nothing():
    offer = "Shall I get that booked with Dr Ilse Varga for Tuesday 17 June 2025 at 2:30 pm?"
    assert not read_message(offer, INTAKE.lexicon).report


def test_a_booking_for_you_names_the_caller_for_the_customer_and_the_grader_alike():
    batch = writes(INTAKE, "intake-003")
    assert agreed(INTAKE, FOR_YOU, batch, own=("P-1016",)) == {0}
    assert binding(FOR_YOU, batch[0], batch, INTAKE.id_pattern, ("P-1016",)).ok


def test_a_booking_for_you_does_not_name_another_patient():
    batch = writes(INTAKE, "intake-003", patient_id="P-1017")
    assert not binding(FOR_YOU, batch[0], batch, INTAKE.id_pattern, ("P-1016",)).ok


HD_013_REFUSAL = (
    "Verified, Mireille. INC-1131 (North depot wifi, 8 affected, now medium): critical not possible — needs 20+ people "
    "affected. Biz-critical system, so high is allowed. Raise INC-1131 to high? y/n"
)
HD_013_DONE = "Done — INC-1131 now high. Still w/ network group."


def priority_told(*messages: str) -> bool:
    """Whether hd-013's reason, the priority the rules allow (high, of INC-1131), is told by ``messages``."""
    from passhat.dialogue.facts import tell
    from passhat.domains.facts import derive_fact

    task = HELPDESK.tasks["hd-013"] if isinstance(HELPDESK.tasks, dict) else next(t for t in HELPDESK.tasks if t.id == "hd-013")
    goal = task.goals[0]
    env = Environment(HELPDESK)
    try:
        fact, _ = derive_fact(HELPDESK, env.db, goal, goal.tell[0])
    finally:
        env.close()
    return tell(fact, list(enumerate(messages)), id_pattern=HELPDESK.id_pattern).told


@pytest.mark.parametrize("messages", [(HD_013_REFUSAL,), (HD_013_DONE,)])
def test_the_priority_allowed_is_told_when_said_of_the_incident_in_any_wording(messages):
    assert priority_told(*messages)


@pytest.mark.parametrize(
    "message",
    [
        "High priority is not allowed for INC-1131.",
        "INC-1131 cannot be high.",
        "INC-1131 might be high, I'm not sure.",
        "INC-1120 is now high.",
    ],
)
def test_the_priority_denied_hedged_or_said_of_another_incident_is_not_told(message):
    assert not priority_told(message)


INTAKE_004_REFUSAL = (  # the terse agent's refusal, failed as missing_output although it said why
    "Can't cancel AP-5103 here — it's tomorrow (2025-06-10 10:00, Dr Varga). Late changes go through the front desk; "
    "pls call them."
)


def late_change_told(message: str) -> bool:
    """Whether intake-004's reason, that AP-5103 is less than a day away, is told by ``message``."""
    from passhat.dialogue.facts import tell
    from passhat.domains.facts import derive_fact

    goal = INTAKE.tasks["intake-004"].goals[0]
    env = Environment(INTAKE)
    try:
        fact, _ = derive_fact(INTAKE, env.db, goal, goal.tell[1])
    finally:
        env.close()
    return tell(fact, [(0, message)], id_pattern=INTAKE.id_pattern).told


@pytest.mark.parametrize("message", [INTAKE_004_REFUSAL, "That one is less than 24 hours away, so I can't cancel it here."])
def test_a_late_change_is_told_as_the_caller_hears_it(message):
    assert late_change_told(message)


@pytest.mark.parametrize("message", ["It's not tomorrow, so I can cancel it.", "Your appointment AP-5103 is on 2025-06-10."])
def test_a_late_change_denied_or_left_unsaid_is_not_told(message):
    assert not late_change_told(message)
