"""Proposals as models wrote them while playing the agent (issue 21, markdown, terse and chatty rounds), each once
turned down by the customer: a return listing the item kept beside the one returned, a numbered plan followed by what
will not be done, a recap of the charge and of the approval threshold beside a refund, an appointment left alone
beside the one cancelled, "Yes to both?". A yes to each agrees to what it offers; the same wording with the kept item
returned, a step left out, another card or another appointment offered does not."""

from __future__ import annotations

import pytest

from passhat.dialogue.proposals import bound_writes
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain
from passhat.env import Environment, tool_registry
from passhat.guard.confirmation import commitment_for


def bound(domain_name: str, task_id: str, text: str) -> list[tuple[str, str]]:
    """The task's ground-truth writes (tool, first argument) a yes to ``text`` agrees to, as the customer reads it."""
    domain = load_domain(domain_name)
    task, env, tools = domain.tasks[task_id], Environment(domain), tool_registry(domain)
    try:
        actions = [a for g in task.goals for a in g.actions]
        wanted = [commitment_for(tools[a.tool], a.args, env.db, domain) for a in actions]
    finally:
        env.close()
    chosen = bound_writes(text, wanted, [], domain.id_pattern, (task.customer.customer_id,))
    return [(actions[i].tool, str(next(iter(actions[i].args.values())))) for i in sorted(chosen)]


RETURN = (
    "### Proposed return\n\n- **Return:** V-50175 — Ergonomic Office Chair (black, leather, adjustable armrests)\n"
    "- {kept}\n- **Refund:** **$274.50** to your **PayPal** account\n\n**Shall I submit this return?** (yes / no)"
)


@pytest.mark.parametrize(
    "kept",
    [
        "**Keep:** V-45881 — Denim Jeans",
        "❌ **Not returning:** V-45881 — Denim Jeans (you keep these)",
        "**Jeans (V-45881):** stay with you, not returned",
    ],
)
def test_the_item_said_as_kept_beside_the_one_returned_is_context(kept):
    assert bound("retail", "retail-047", RETURN.format(kept=kept)) == [("return_items", "#R2144957")]


@pytest.mark.parametrize("kept", ["**Return:** V-45881 — Denim Jeans", "**Also returning:** V-45881 (keep the receipt)"])
def test_a_second_item_returned_is_no_return_of_the_chair_alone(kept):
    assert bound("retail", "retail-047", RETURN.format(kept=kept)) == []


PLAN = "Thanks, **Hugo** — verified (BW-US, approval limit $5,000.00).\n\n## INV-71003 — Northmoor Packaging (NMP-5530)\n\n| Check | Result |\n|---|---|\n| Invoice total | **$1,261.20** |\n| Purchase order | PO-4103 (packaging, BW-US) |\n| Goods receipt | GR-8103 — 600 cartons and 48 tapes received in full |\n| Matched amount | $1,258.80 |\n| Variance | **$2.40** (0.19%) — tape billed at $3.15 vs $3.10 on the PO |\n| Tolerance | 5% capped at $100.00 (packaging default) |\n| Duplicates | none found |\n\n**Within tolerance**, within your approval limit, and not over $5,000, so no second approval is needed.\n\n### Proposed actions\n1. **Approve** INV-71003 (Northmoor Packaging) — pay in full, **$1,261.20**\n2. **Post** INV-71003 to the ledger\n3. **Mark** INV-71003 status **ready for payment**\n\nNo audit note or notifications. **Shall I go ahead with all three — yes?**"


def test_a_plan_followed_by_what_will_not_be_done_binds_every_step_listed():
    writes = [("approve_invoice", "INV-71003"), ("post_to_ledger", "INV-71003"), ("update_status", "INV-71003")]
    assert bound("payables", "pay-035", PLAN) == writes


def test_a_plan_that_leaves_a_step_out_of_its_list_binds_no_write_it_does_not_list():
    assert ("update_status", "INV-71003") not in bound(
        "payables", "pay-035", PLAN.replace("3. **Mark** INV-71003 status **ready for payment**\n", "")
    )


BENEFIT = (
    "Verified, Anselm. CH-52701: tow on 2025-06-14, $380.00 charged to Visa ending 6482. You held Plus that day "
    "(2024-11-25 to 2025-11-24), so it applies. Plus pays 50%: refund $190.00, you pay $190.00.\n"
    "Refunds over $150 need a colleague's approval, so it will be passed on once I submit it.\n"
    "Proposal: apply Plus benefit to CH-52701, refund $190.00 to {where}. Confirm?"
)


def test_the_charge_recapped_and_the_approval_threshold_are_context_beside_a_refund():
    assert bound("benefits", "benefits-027", BENEFIT.format(where="your club credit")) == [("apply_plan_benefit", "CH-52701")]


@pytest.mark.parametrize(
    "where",
    [
        "your Visa ending 6482",  # the card recapped, offered as where the refund goes
        "your club credit; the $190.00 would be charged to Visa ending 6482",  # a charge to the card, offered
    ],
)
def test_a_refund_offered_to_the_recapped_card_is_no_refund_to_club_credit(where):
    assert bound("benefits", "benefits-027", BENEFIT.format(where=where)) == []


CANCEL = "Here's what I'd do:\n\n- Cancel appointment {cancel} on your own file (Greer Pryce)\n\n{other}\n\nShall I go ahead?"


@pytest.mark.parametrize(
    "other",
    [
        "Your other appointment that day, AP-5229 with Ilse Varga at 14:00, stays exactly as it is.",
        "AP-5229 won't be touched.",
    ],
)
def test_another_appointment_said_as_left_alone_is_context(other):
    assert bound("intake", "intake-039", CANCEL.format(cancel="AP-5230", other=other)) == [("cancel_appointment", "AP-5230")]


@pytest.mark.parametrize(
    "cancel, other",
    [
        ("AP-5229 and AP-5230", "The rest stays as it is."),  # both cancelled: no yes to one alone
        ("AP-5229", "AP-5230 stays booked."),  # the other one cancelled
    ],
)
def test_the_appointment_wanted_left_alone_or_cancelled_with_another_is_not_agreed_to(cancel, other):
    assert bound("intake", "intake-039", CANCEL.format(cancel=cancel, other=other)) == []


SHORT_PAY = (
    "That is what I proposed. Restated:\n1. Adjust INV-71033 (Northmoor Packaging) to $372.00, surcharge left out.\n"
    "2. Email Northmoor Packaging that INV-71033 is short-paid to $372.00 because the express freight surcharge is not on "
    "the order.\n{ask}"
)


@pytest.mark.parametrize("ask", ["Yes to both?", "Yes?", "Yes to all?"])
def test_a_bare_yes_question_after_a_plan_asks_for_the_yes_to_it(ask):
    text = SHORT_PAY.format(ask=ask)
    assert read_message(text, load_domain("payables").lexicon).proposal
    assert bound("payables", "pay-029", text) == [("adjust_invoice", "INV-71033"), ("notify", "INV-71033")]


@pytest.mark.parametrize("ask", ["Yes, the surcharge was not on the order.", "I said yes to both."])
def test_a_yes_said_in_a_statement_asks_for_nothing(ask):
    assert not read_message(SHORT_PAY.format(ask=ask), load_domain("payables").lexicon).proposal


KEPT_APPOINTMENT = (
    "Cancel appointment AP-5228, your appointment with Dr Kofi Lindahl on 24 June 2025 at 2:30 pm. {other}"
    "Would you like me to go ahead with the cancellation?"
)


@pytest.mark.parametrize(
    "other, agreed",
    [
        ("Your other appointment with Dr Lindahl (AP-5227, on the twenty-fifth of June) stays as it is. ", True),
        ("I'll also cancel the one on the twenty-fifth of June. ", False),  # another day offered
    ],
)
def test_the_day_of_an_appointment_left_alone_is_context(other, agreed):
    assert bool(bound("intake", "intake-037", KEPT_APPOINTMENT.format(other=other))) is agreed


APPROVAL = (
    "Verified, Devika. INV-71035, Brookvale Cable (BVC-4519), PO-4135, electrical. Variance 60.00 within tolerance. "
    "Proposal: approve INV-71035 in full at 2,460.00, then post it to the ledger{also}. Confirm? y/n"
)


def test_a_record_of_another_kind_in_a_recap_of_findings_is_context():
    assert bound("payables", "pay-031", APPROVAL.format(also="")) == [
        ("approve_invoice", "INV-71035"),
        ("post_to_ledger", "INV-71035"),
    ]


def test_a_record_of_another_kind_in_the_offer_itself_is_not_agreed_to():
    assert bound("payables", "pay-031", APPROVAL.format(also=", and close PO-4135")) == []


@pytest.mark.parametrize(
    "domain, text",
    [
        (
            "intake",
            "Cancel appointment AP-5228 with Dr Kofi Lindahl on 24 June 2025. Is that the right one? If yes, just say so and I'll cancel it.",
        ),
        (
            "payables",
            "It can't be approved as billed: a short-pay can only be to the matched amount. Otherwise, a yes from you and I'll adjust INV-71021 to $720.00.",
        ),
    ],
)
def test_a_request_for_the_yes_in_other_words_asks_for_it(domain, text):
    assert read_message(text, load_domain(domain).lexicon).proposal


def test_nothing_i_can_do_is_a_refusal():
    text = "Checked. File is clear: emergency contact, no authorization — nothing I can do for Thea's records."
    assert read_message(text, load_domain("intake").lexicon).refusal
    assert not read_message("Nothing I can see is wrong with the file.", load_domain("intake").lexicon).refusal


@pytest.mark.parametrize(
    "text, asks",
    [
        (
            "Which tow do you mean? You have two: CH-50201 on the second of June and CH-50202 on the ninth. Your Plus plan "
            "ran from the tenth of May 2024 to the ninth of May 2025. Let me know which one and I'll take it from there.",
            {"charge"},
        ),
        ("You have two plans on file, Classic and Plus. Which one?", {"plan"}),  # no question before: the last named
    ],
)
def test_which_one_after_a_which_question_asks_what_that_question_asked(text, asks):
    assert read_message(text, load_domain("benefits").lexicon).asks == asks


RENEWAL = (
    "### One thing I can't do\n**Club credit can't be used for yearly dues**. {credit}\n\n### Proposed renewal\n| | |\n"
    "|---|---|\n| **Plan** | Classic |\n| **Dues** | **$79.00** for one year |\n| **Paid with** | Visa ending **3041** |\n\n"
    "**Shall I renew your Classic membership for $79.00 on your Visa ending 3041?**"
)


@pytest.mark.parametrize(
    "credit, agreed",
    [
        ("Your club credit balance of **$120.00** stays untouched for future callouts.", True),
        ("Your club credit ($120.00) will not be used.", True),
        ("$120.00 will be refunded to your club credit; the rest stays untouched.", False),  # money moved, then "the rest"
    ],
)
def test_a_balance_said_as_left_alone_is_no_refund_beside_a_renewal(credit, agreed):
    assert bool(bound("benefits", "benefits-033", RENEWAL.format(credit=credit))) is agreed
