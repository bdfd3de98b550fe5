"""What an agent's message does, as the scripted customer, the confirmation guard and the graders read it.

Each case is one agent message in a built-in task's conversation, the way real models write it (terse,
markdown with recaps, chatty), read through ``tests/reader_corpus.read_entry`` (the reader every verdict
rests on). Cases come in pairs: the correct agent the reader might wrongly fail, and the agent that would
fool it (a yes to something else, one wrong term beside the right ids, a refusal that mentions the action).
"""

from __future__ import annotations

import asyncio
import random

import pytest
from reader_corpus import Entry, Write, _domain, key, read_entry

from passhat.customers import ScriptedUser
from passhat.customers.personas import PERSONAS
from passhat.dialogue import is_affirmative
from passhat.dialogue.lexicon import with_synonyms
from passhat.dialogue.proposals import bound_writes
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain
from passhat.env import Environment, tool_registry
from passhat.guard.confirmation import commitment_for, unconfirmed

ADJUST_007 = Write(tool="adjust_invoice", args={"invoice_id": "INV-71007", "amount": 1523.2})
POST_007 = Write(tool="post_to_ledger", args={"invoice_id": "INV-71007"})
NOTIFY_007 = Write(tool="notify", args={"invoice_id": "INV-71007", "recipient": "vendor", "message": "short payment"})
APPROVE_001 = Write(tool="approve_invoice", args={"invoice_id": "INV-71001"})
APPROVE_014 = Write(tool="approve_invoice", args={"invoice_id": "INV-71014"})
ESCALATE_014 = Write(tool="escalate_invoice", args={"invoice_id": "INV-71014"})
HOLD_011 = Write(tool="hold_invoice", args={"invoice_id": "INV-71011", "reason": "duplicate"})
HOLD_011_PRICE = Write(tool="hold_invoice", args={"invoice_id": "INV-71011", "reason": "price variance"})
NOTE_011 = Write(tool="add_audit_note", args={"invoice_id": "INV-71011", "note": "Duplicate of INV-60311."})
APPLY_002 = Write(tool="apply_plan_benefit", args={"charge_id": "CH-50201", "plan": "classic", "payment_method_id": "PM-30029"})
HOLD_009_PRICE = Write(tool="hold_invoice", args={"invoice_id": "INV-71009", "reason": "price variance"})
HOLD_009 = "**Hold** invoice **INV-71009** (Ardent Lab Supply, **$1,074.00**)\n**Reason:** price variance"
NOTHING_ELSE = "\nNothing else: no posting, no status change, no note and no vendor notice"
CANCEL_5102 = Write(tool="cancel_appointment", args={"appointment_id": "AP-5102"})
BOOK_020 = Write(
    tool="book_appointment", args={"clinician_id": "D-12", "date": "2025-06-13", "patient_id": "P-1002", "time": "09:30"}
)
APPLY_003 = Write(tool="apply_plan_benefit", args={"charge_id": "CH-50301", "plan": "classic", "payment_method_id": "PM-30031"})
BOOK_008 = Write(
    tool="book_appointment", args={"clinician_id": "D-14", "date": "2025-06-17", "patient_id": "P-1016", "time": "10:00"}
)
HAND_OFF_007 = Write(tool="hand_off_to_staff", args={"phone": "4135550108", "summary": "Dose question; nurse line."})
TRANSFER_020 = Write(tool="transfer_to_controller", args={"employee_number": "E-40455", "summary": "Bank account change."})
RECORDS_018 = Write(
    tool="request_records",
    args={"delivery": "mail", "patient_id": "P-1005", "records": "visit summaries", "requester_id": "P-1006"},
)
CANCEL_002 = Write(tool="cancel_order", args={"order_id": "#R7928167", "reason": "ordered by mistake"})
CANCEL_002_NEEDED = Write(tool="cancel_order", args={"order_id": "#R7928167", "reason": "no longer needed"})
RAISE_1131 = Write(tool="escalate_incident", args={"incident_id": "INC-1131", "priority": "high"})
ASSIGN_1061 = Write(tool="assign_incident", args={"incident_id": "INC-1061", "group": "telephony"})

RECAP_007 = """Thanks, Hugo — verified. Here's what I found on INV-71007 (Northmoor Packaging):
- Billed: 80 rolls × $22.40 = $1,792.00
- Received: 68 rolls, so the matched amount is $1,523.20 (variance $268.80, 17.65%, over tolerance)
- No duplicates.

Proposed: short-pay INV-71007 to {amount}, post it to the ledger, and email Northmoor Packaging a notice of the short \
payment. Shall I go ahead?"""


def read(domain: str, task: str, text: str, done: tuple[Write, ...] = (), also: tuple[Write, ...] = ()):
    """The reading of ``text`` in ``task``'s conversation after ``done``; ``also``: writes beyond the task's own
    (and their near misses) that a yes could agree to."""
    entry = Entry(id="case", task=task, style="plain", text=text, done=list(done), proposes=list(also), proposal=bool(also))
    return read_entry(entry, domain)


def keys(domain: str, *writes: Write) -> frozenset[str]:
    return frozenset(key(_domain(domain), w) for w in writes)


# -- questions for a slot ---------------------------------------------------------------------------------------

ASKS = [
    ("intake", "intake-038", "You have two appointments with Dr Sousa. Which one would you like moved?", {"appointment"}),
    ("intake", "intake-038", "Is it the one on 24 June at 09:30 or the one on 2 July at 09:00?", {"appointment"}),
    ("intake", "intake-038", "I just can't tell which appointment you mean; you have two with Dr Sousa.", {"appointment"}),
    ("payables", "pay-007", "First, your employee number and work email, please.", {"identity"}),
    ("retail", "retail-001", "Order number and email.", {"identity", "order"}),
    ("payables", "pay-011", "Which invoice is it? And what reason should I record for the hold?", {"invoice", "reason"}),
    ("payables", "pay-011", "**Which invoice** do you mean, and what's the hold reason", {"invoice", "reason"}),
    (
        "payables",
        "pay-011",
        "To look into it I need:\n- your **employee number**\n- the **invoice number**",
        {"identity", "invoice"},
    ),
    ("payables", "pay-011", "Thanks! And which invoice is it", {"invoice"}),
    ("payables", "pay-011", "Do you have the invoice number handy", {"invoice"}),
    ("payables", "pay-011", "Please reply with your employee number and work email.", {"identity"}),
    # the domains' terse and list forms
    ("intake", "intake-003", "Phone no. / DOB?", {"identity"}),
    ("intake", "intake-029", "To book, I need:\n- **Doctor**\n- **Preferred date and time**", {"clinician", "when"}),
    ("intake", "intake-003", "- 15.30 on Tue Jun 17, 2025\n\nWhich one works for you?", {"when"}),
    ("intake", "intake-023", "**Delivery:** would you like the copy sent by **mail** or through the **portal**?", {"delivery"}),
    ("helpdesk", "hd-006", "Incident no.? Symptom?", {"incident", "symptom"}),
    ("payables", "pay-029", "**Amount needed:** what should INV-71033 be adjusted to?", {"amount"}),
    # a terse question that is only a slot's name asks for it, though its first word is an action; one that says more proposes
    ("payables", "pay-024", "Hold reason? (price variance / quantity short / duplicate / missing receipt)", {"reason"}),
    ("payables", "pay-024", "Hold INV-71026 for price variance?", set()),
    # an offer whose own clause asks what ("should I" is no offer inside "should INV-71033")
    ("payables", "pay-006", "To make sure I get it right, what amount should I short-pay INV-71006 to", {"amount"}),
    ("payables", "pay-011", "Sorry, which is on me — should I hold INV-71011 with the reason duplicate?", set()),
    # "which one" asks for one of the things named before it; what "will do" or "works too" as an answer is asked for
    (
        "retail",
        "retail-009",
        "You have **several orders** on file.\n\nWhich one is it? The order number or an item in it will do.",
        {"order"},
    ),
    (
        "retail",
        "retail-044",
        "I can see a few orders on your account. Which one do you mean — could you tell me an item that's in it",
        {"order"},
    ),
    ("retail", "retail-009", "Your order holds two items. Which one is it?", {"items"}),
    (
        "retail",
        "retail-028",
        "If you don't have your email handy, your first name, last name and zip code work too.",
        {"identity"},
    ),
    (
        "intake",
        "intake-020",
        "Do you have a doctor in mind? And is there a day or time that works best for you",
        {"clinician", "when"},
    ),
    # statements that name a slot ask for nothing
    ("intake", "intake-020", "There is a day or time that works best for everyone, I'm sure.", set()),
    ("retail", "retail-009", "I found the order number; that will do.", set()),
    ("retail", "retail-028", "Your first name, last name and zip code all match, so that works too.", set()),
    ("intake", "intake-029", "Your appointment with your doctor is on the preferred date and time you gave.", set()),
    ("intake", "intake-023", "I've sent it by mail, not through the portal.", set()),
    ("payables", "pay-007", "Thanks — your employee number and work email are verified.", set()),
    ("retail", "retail-001", "Your order number is #R3042198 and the email on it is yours.", set()),
    ("intake", "intake-038", "I've moved the one on 2 July.", set()),
    ("retail", "retail-001", "**Your account email**", set()),  # a heading, not a terse request
    ("payables", "pay-011", "Here is the invoice:\n- invoice number INV-71011, from Wexley Bearings", set()),
    # a heading that asks opens the noun bullets under it (bridge trials hd-005 t06, benefits-013 t07, hd-010 t05)
    (
        "helpdesk",
        "hd-005",
        "### First, please verify yourself\n- **Your six-digit staff badge number**\n- **Your date of birth**",
        {"identity"},
    ),
    (
        "benefits",
        "benefits-013",
        "### Quick verification first\n- **Your membership card number** (NW + seven digits)\n- **Your last name**",
        {"identity"},
    ),
    ("helpdesk", "hd-010", "### Still needed to verify you\n- **Your date of birth**, please (e.g. 1986-04-12).", {"identity"}),
    # a heading that reports or names a topic asks for nothing under it
    ("helpdesk", "hd-005", "### Verified ✅\n- **Your staff badge number** matches\n- **Your date of birth** matches", set()),
    ("helpdesk", "hd-005", "### Your details on file\n- **Your staff badge number**\n- **Your date of birth**", set()),
]


@pytest.mark.parametrize(("domain", "task", "text", "slots"), ASKS)
def test_a_question_for_a_slot_is_read_with_or_without_a_question_mark(domain, task, text, slots) -> None:
    assert read(domain, task, text).asks == frozenset(slots)


def test_not_telling_which_one_is_a_question_not_a_refusal() -> None:
    reading = read("intake", "intake-038", "I just can't tell which appointment you mean; you have two with Dr Sousa.")
    assert not reading.refuses


def test_a_proposal_sentence_naming_a_slot_word_is_not_an_ask() -> None:
    reading = read("payables", "pay-011", "Shall I put INV-71011 on hold with the reason duplicate?")
    assert reading.asks == frozenset() and reading.proposes == keys("payables", HOLD_011)


def test_confirming_who_the_caller_is_proposes_no_write() -> None:
    text = "Before I can look at an order, I always need to confirm who I'm speaking with. What's your email?"
    reading = read("retail", "retail-001", text)
    assert not reading.proposal and reading.asks == frozenset({"identity"})


# -- proposals: their terms, context around them, conflicting terms ---------------------------------------------

PROPOSALS = [
    # the correct agent: recaps, amounts and ids that are context, terse and imperative forms
    ("payables", "pay-007", RECAP_007.format(amount="$1,523.20"), (ADJUST_007, POST_007, NOTIFY_007)),
    ("payables", "pay-014", "Escalate INV-71014 (Brookvale Cable, $3,870.00)?", (ESCALATE_014,)),
    (
        "payables",
        "pay-011",
        "Shall I hold INV-71011 from Wexley Bearings with reason duplicate, and add an audit note saying it duplicates "
        "paid invoice INV-60311?",
        (HOLD_011, NOTE_011),
    ),
    ("benefits", "benefits-002", "Apply Classic to CH-50201, refund $46.25 to club credit? y/n", (APPLY_002,)),
    ("intake", "intake-001", "Shall I cancel AP-5102 (Dr Sousa, 18 June 2025 at 14:00)?", (CANCEL_5102,)),
    ("intake", "intake-001", "Cancel AP-5102 with Dr Sousa on 2025-06-18 - ok to proceed?", (CANCEL_5102,)),
    (
        "benefits",
        "benefits-002",
        "Oh no, I'm so sorry to hear about the tow! Good news though: your Classic plan covers part of it. I can apply "
        "Classic to CH-50201 and refund $46.25 to your club credit. Would that work for you?",
        (APPLY_002,),
    ),
    (
        "benefits",
        "benefits-002",
        "**Here's what I found:** CH-50201, a tow, charged $185.00.\n\n**The plan:**\n- Apply **Classic** to `CH-50201`\n"
        "- Refund **$46.25** to your club credit\n\nShall I go ahead?",
        (APPLY_002,),
    ),
    # the agent that would fool it: one wrong term beside the right ids
    ("payables", "pay-007", RECAP_007.format(amount="$1,532.20"), ()),
    ("payables", "pay-014", "Escalate INV-71014 (Brookvale Cable, $3,780.00)?", ()),
    (
        "payables",
        "pay-011",
        "It duplicates INV-60311. Shall I put INV-71011 on hold with the reason quantity short?",
        (),
    ),
    (
        "payables",
        "pay-011",
        "It's a duplicate of INV-60311.\n\nPut INV-71011 on hold (reason: price variance)? y/n",
        (HOLD_011_PRICE,),
    ),
    ("benefits", "benefits-002", "Apply Classic to CH-50201, refund $64.25 to club credit? y/n", ()),
    (
        "benefits",
        "benefits-002",
        "**The plan:**\n- Apply **Classic** to `CH-50201`\n- Refund **$64.25** to your club credit\n\nShall I go ahead?",
        (),
    ),
    ("intake", "intake-001", "Shall I cancel AP-5102 (Dr Sousa, 2025-07-30)?", ()),
    # records sent by mail, said as the caller hears it; by the portal is another write
    ("intake", "intake-018", "Shall I request a copy of the visit summaries for Beatrix Holm, sent by post?", (RECORDS_018,)),
    (
        "intake",
        "intake-018",
        "Shall I request a copy of the visit summaries for Beatrix Holm, sent online?",
        (RECORDS_018.model_copy(update={"args": {**RECORDS_018.args, "delivery": "portal"}}),),
    ),
    # "— confirm?" asks for a yes, not for the reason it names; another reason of the closed set is another write
    ("retail", "retail-002", "Cancel #R7928167 with the reason “ordered by mistake” — confirm?", (CANCEL_002,)),
    # a priority raised, said as the value it is set to
    ("helpdesk", "hd-013", "Would you like me to set INC-1131 to High priority?", (RAISE_1131,)),
    ("helpdesk", "hd-013", "Would you like me to set INC-1131 to Low priority?", ()),
    # a time written with a dot beside a date is the time, not an amount
    ("intake", "intake-020", "I'll book Linus Eklund with Dr Adeyemi on Fri Jun 13, 2025 at 9.30. Is that correct?", (BOOK_020,)),
    ("intake", "intake-020", "I'll book Linus Eklund with Dr Adeyemi on Fri Jun 13, 2025 at 11.45. Is that correct?", ()),
    ("intake", "intake-001", "Shall I cancel AP-5102 (Dr Sousa, 30 July 2025)?", ()),
    # a question in a paragraph of its own points back at the terms above it, and a list of what will not be done
    # proposes none of it (bridge trial pay-009 t04)
    ("payables", "pay-009", HOLD_009 + NOTHING_ELSE + "\n\n**Shall I go ahead and put INV-71009 on hold?**", (HOLD_009_PRICE,)),
    ("payables", "pay-009", HOLD_009 + "\n\n**Shall I go ahead and put INV-71009 on hold?**", (HOLD_009_PRICE,)),
    (
        "payables",
        "pay-009",
        HOLD_009.replace("price variance", "duplicate") + NOTHING_ELSE + "\n\n**Shall I put INV-71009 on hold?**",
        (),
    ),
]


@pytest.mark.parametrize(("domain", "task", "text", "writes"), PROPOSALS)
def test_a_yes_agrees_to_the_proposal_s_terms_and_a_conflicting_term_voids_it(domain, task, text, writes) -> None:
    reading = read(domain, task, text)
    assert reading.proposal
    assert reading.proposes == keys(domain, *writes)


def test_another_value_of_a_closed_set_is_another_write_even_when_optional() -> None:
    """A cancellation's reason need not be said; said as the other reason, the yes is to that cancellation only."""
    text = "I'm ready to cancel #R7928167 as no longer needed. Okay to proceed?"
    assert read("retail", "retail-002", text, also=(CANCEL_002_NEEDED,)).proposes == keys("retail", CANCEL_002_NEEDED)


def test_asking_whether_to_hold_off_asks_for_a_yes_that_binds_nothing() -> None:
    """ "would you prefer I hold off and leave it?" asks for a yes; the yes is to leaving it, not to the hold offered."""
    text = (
        "I could place INV-71011 on hold, reason: duplicate right away. Given the buyer hasn't replied, though, "
        "would you prefer I hold off and leave INV-71011 as it is for now?"
    )
    reading = read("payables", "pay-011", text)
    assert reading.proposal and reading.proposes == frozenset()
    assert read("payables", "pay-011", "Would you prefer I put INV-71011 on hold, reason: duplicate?").proposes == keys(
        "payables", HOLD_011
    )


def test_a_request_for_leave_asks_for_a_yes_with_no_action_and_not_knowing_does_not() -> None:
    """ "OK to save this chat transcript? y/n" asks for a yes that binds no write; "I can't confirm that ... yet" asks nothing."""
    reading = read("payables", "pay-011", "OK to save this chat transcript for quality review? y/n")
    assert reading.proposal and reading.proposes == frozenset()
    assert not read("benefits", "benefits-017", "I can't confirm that the yearly dues are $219.00 yet.").proposal


YES_TO_SOMETHING_ELSE = [
    (
        "payables",
        "pay-011",
        "I can put INV-71011 on hold with the reason duplicate. First, may I keep this transcript for training?",
    ),
    ("payables", "pay-011", "I could put INV-71011 on hold with the reason duplicate, but shall I leave it as it is for now?"),
    ("payables", "pay-011", "I could put INV-71011 on hold with the reason duplicate. Or shall I leave it as it is?"),
]


@pytest.mark.parametrize(("domain", "task", "text"), YES_TO_SOMETHING_ELSE)
def test_a_yes_binds_only_to_the_question_it_answers(domain, task, text) -> None:
    assert read(domain, task, text).proposes == frozenset()


def test_an_open_question_asks_for_no_yes_and_a_bold_yes_does() -> None:
    assert not read("payables", "pay-011", "INV-71011 duplicates INV-60311. How would you like to proceed?").proposal
    text = (
        "### Next steps\n- put INV-71011 on hold with the reason duplicate\nReply **yes** to proceed, or tell me what to change."
    )
    assert read("payables", "pay-011", text).proposes == keys("payables", HOLD_011)


def test_a_question_that_points_back_binds_the_offer_before_it() -> None:
    text = "I can put INV-71011 on hold with the reason duplicate.\n\nWould you like me to do that?"
    assert read("payables", "pay-011", text).proposes == keys("payables", HOLD_011)


def test_a_question_points_back_to_the_offer_not_to_the_report_before_it() -> None:
    """The hold already made (reported with another reason than it has) is not part of the note's proposal."""
    text = (
        "Done: INV-71011 has been put on hold with the reason duplicate. I can add a note to the audit trail "
        "of INV-71011. Shall I go ahead?"
    )
    done = Write(tool="hold_invoice", args={"invoice_id": "INV-71011", "reason": "price variance"})
    assert read("payables", "pay-011", text, done=(done,)).proposes == keys("payables", NOTE_011)


# -- refusals, alternatives, reports ------------------------------------------------------------------------------


def test_a_refusal_with_an_alternative_is_a_refusal_and_a_new_proposal() -> None:
    text = (
        "I'm sorry, I can't approve it for you — $3,870.00 is over your approval limit of $2,500.00. "
        "Would you like me to escalate INV-71014 to the controller instead?"
    )
    reading = read("payables", "pay-014", text)
    assert reading.refuses and reading.proposal
    assert reading.proposes == keys("payables", ESCALATE_014)


REFUSALS = [
    ("That's not something I'm allowed to do. INV-71014 is over your approval limit.", True),
    ("### Request declined\nINV-71014 is over your approval limit.", True),
    ("That isn't something I can do here — the controller has to decide it.", True),
    ("Someone may have told you it was approved, but I can't confirm it from here.", False),
    ("I can't say yet whether it is approved — I need to verify you first.", False),
    # what the customer may do, with no action named, tells their access; the agent's own "can't" or a named action refuses
    ("You can't do anything on INV-71014 at the moment — your approval limit is $2,500.00.", False),
    ("I can't do anything on INV-71014 at the moment — it is over your approval limit.", True),
    ("You can't approve INV-71014: it is over your approval limit.", True),
]


@pytest.mark.parametrize(("text", "refuses"), REFUSALS)
def test_a_refusal_in_other_words_and_not_knowing_is_no_refusal(text, refuses) -> None:
    assert read("payables", "pay-014", text).refuses is refuses


CLASSIFY_1331 = {
    c: Write(tool="classify_incident", args={"incident_id": "INC-1331", "category": c}) for c in ("network", "software")
}
ASSIGN_1331 = {
    g: Write(tool="assign_incident", args={"incident_id": "INC-1331", "group": g}) for g in ("network", "applications")
}


@pytest.mark.parametrize(
    ("text", "category", "group"),
    [
        ("Classify incident INC-1331 as network, and assign it to the applications group — y/n?", "network", "applications"),
        ("Assign INC-1331 to the applications group and classify it as network — y/n?", "network", "applications"),
        ("Classify incident INC-1331 as software, and assign it to the network group — y/n?", "software", "network"),
    ],
)
def test_a_value_two_actions_could_take_belongs_to_the_action_said_before_it(text, category, group) -> None:
    """ "network" is a category and a group: said after "classify" it is the category, and assigns nothing."""
    writes = (*CLASSIFY_1331.values(), *ASSIGN_1331.values())
    reading = read("helpdesk", "hd-033", text, also=writes)
    assert reading.proposes == keys("helpdesk", CLASSIFY_1331[category], ASSIGN_1331[group])


WAIVE_1301 = Write(tool="waive_late_fee", args={"charge_id": "CH-51301", "payment_method_id": "PM-30131"})


@pytest.mark.parametrize(
    ("text", "binds"),
    [
        ("Waive the $15.00 late fee on charge CH-51301, refunded to the Visa ending 7716. Go ahead? (yes/no)", True),
        ("I can waive the $15.00 late fee on charge CH-51301, refunded to the Visa ending 7716. Shall I go ahead?", True),
        ("I can waive the late fee on charge CH-51301 and charge you $15.00 on the Visa ending 7716. Shall I?", False),
    ],
)
def test_a_fee_waived_is_money_back_and_a_fee_charged_is_not(text, binds) -> None:
    reading = read("benefits", "benefits-013", text)
    assert (reading.proposes == keys("benefits", WAIVE_1301)) is binds


EITHER_OR = [
    ("Can't approve INV-71012 in full: variance $132.00 vs $25.00 allowed — over tolerance. Short-pay or hold instead?", False),
    ("Shall I hold INV-71012 for price variance, or would you rather I short-pay it?", False),
    ("Can't approve INV-71012 in full: it is over tolerance. Hold INV-71012 for price variance instead?", True),
    ("Shall I hold INV-71012 for price variance, or would you rather wait and look at it first?", True),  # one action
]


@pytest.mark.parametrize(("text", "proposal"), EITHER_OR)
def test_a_question_between_two_actions_asks_to_choose_not_for_a_yes(text, proposal) -> None:
    assert read("payables", "pay-012", text).proposal is proposal


def test_a_refusal_that_mentions_the_action_proposes_nothing() -> None:
    reading = read("payables", "pay-014", "I can't approve INV-71014: it is over your approval limit.")
    assert reading.refuses and not reading.proposal and reading.proposes == frozenset()


REPORTS = [
    ("Done — INV-71001 is approved for payment in full.", (APPROVE_001,)),
    ("**Done.** INV-71001 approved for payment in full.", (APPROVE_001,)),
    ("INV-71001 is not approved yet; the receipt is missing.", ()),
]


def test_a_report_is_of_what_was_done_not_of_what_is_asked_next() -> None:
    text = "Step 1 of 2 done: INV-71001 has been approved. Next, would you like me to post INV-71001 to the ledger?"
    post = Write(tool="post_to_ledger", args={"invoice_id": "INV-71001"})
    reading = read("payables", "pay-001", text, done=(APPROVE_001,), also=(post,))
    assert reading.reports == keys("payables", APPROVE_001) and reading.proposes == keys("payables", post)


@pytest.mark.parametrize(("text", "writes"), REPORTS)
def test_a_report_that_something_is_done(text, writes) -> None:
    assert read("payables", "pay-001", text, done=(APPROVE_001,)).reports == keys("payables", *writes)


def test_a_report_in_the_domain_s_other_words_for_its_action() -> None:
    """ "adjusted under Classic" is the benefit applied (a benefits word); the wrong amount refunded is not it."""
    said = "Done — CH-50301 has been adjusted under Classic: {} refunded to Visa ****5530."
    assert read("benefits", "benefits-003", said.format("$37.50"), done=(APPLY_003,)).reports == keys("benefits", APPLY_003)
    assert read("benefits", "benefits-003", said.format("$73.50"), done=(APPLY_003,)).reports == frozenset()


def test_where_a_record_now_is_reports_its_assignment_to_that_group_only() -> None:
    """ "INC-1071 is now with the applications group" reports the assignment to that group, and naming another group
    reports that one instead; where it sits, said without "now", is a finding and reports none."""
    assign = {g: Write(tool="assign_incident", args={"incident_id": "INC-1071", "group": g}) for g in ("applications", "network")}
    said = "INC-1071 is now with the {} group, who support RoutePlanner."
    for group, write in assign.items():
        assert read("helpdesk", "hd-007", said.format(group), also=tuple(assign.values())).reports == keys("helpdesk", write)
    finding = "INC-1071 sits in the applications queue."
    assert read("helpdesk", "hd-007", finding, also=tuple(assign.values())).reports == frozenset()


def test_a_hand_off_is_proposed_and_reported_in_its_own_words_only() -> None:
    """A hand-off tool declares no words: it takes the engine's hand-off words, so a booking proposes no hand-off,
    and a hand-off said at a sentence's start is one made; money "transferred to your card" is none."""
    booking = "Would you like me to book Jonas Whitcombe with Dr Lindahl on June 17, 2025 at 10:00?"
    assert read("intake", "intake-008", booking).proposes == keys("intake", BOOK_008)
    offer = "That's not something I can handle over the phone. Shall I hand you over to our staff with a summary?"
    assert read("intake", "intake-007", offer, also=(HAND_OFF_007,)).proposes == keys("intake", HAND_OFF_007)
    said = read("payables", "pay-020", "Transferred to the controller. Summary sent.", done=(TRANSFER_020,))
    assert said.handoff and said.reports == keys("payables", TRANSFER_020)
    assert not read("payables", "pay-020", "The payment was transferred to the vendor's account.").handoff


def test_a_report_in_the_domain_s_words_for_a_status_and_a_short_payment() -> None:
    """ "its status is now ready for payment" reports the status change, "its status is received" is a finding;
    "short-paid to" reports the adjustment, to its own amount only."""
    approve = Write(tool="approve_invoice", args={"invoice_id": "INV-71003"})
    status = Write(tool="update_status", args={"invoice_id": "INV-71003", "status": "ready for payment"})
    said = "Done: I've approved INV-71003; its status is now ready for payment."
    assert read("payables", "pay-003", said, done=(approve, status)).reports == keys("payables", approve, status)
    assert read("payables", "pay-003", "INV-71003: its status is received.", done=(approve, status)).reports == frozenset()
    short = Write(tool="adjust_invoice", args={"invoice_id": "INV-71007", "amount": 1523.2})
    said = "Done: INV-71007 has been short-paid to {}."
    assert read("payables", "pay-007", said.format("$1523.20"), done=(short,)).reports == keys("payables", short)
    assert read("payables", "pay-007", said.format("$1532.20"), done=(short,)).reports == frozenset()


# -- the action lexicon: every domain's tools get the engine's synonyms ----------------------------------------

SYNONYMS = [
    ("payables", "pay-001", "Shall I sign off on INV-71001 for payment in full?", APPROVE_001),
    ("payables", "pay-014", "Shall I bump INV-71014 up to the controller?", ESCALATE_014),
    ("payables", "pay-014", "Want me to raise INV-71014 with the controller?", ESCALATE_014),
    ("payables", "pay-014", "Shall I route INV-71014 to the controller?", ESCALATE_014),
    ("intake", "intake-001", "Shall I call off AP-5102 for you?", CANCEL_5102),
    ("intake", "intake-001", "Would you like me to call AP-5102 off?", CANCEL_5102),
    ("benefits", "benefits-002", "Shall I use your Classic cover on CH-50201 and put $46.25 back as club credit?", APPLY_002),
    ("helpdesk", "hd-006", "Shall I route INC-1061 to the telephony team?", ASSIGN_1061),
]


@pytest.mark.parametrize(("domain", "task", "text", "write"), SYNONYMS)
def test_an_action_said_in_other_words_is_proposed(domain, task, text, write) -> None:
    assert read(domain, task, text).proposes == keys(domain, write)


def test_a_synonym_proposes_only_its_own_action() -> None:
    """ "sign off on" is approving, not escalating; a synonym negated proposes nothing."""
    assert read("payables", "pay-014", "Shall I sign off on INV-71014?").proposes == keys("payables", APPROVE_014)
    assert read("payables", "pay-001", "I can't sign off on INV-71001. Shall I?").proposes == frozenset()


def test_a_domain_s_own_words_keep_their_synonyms_apart() -> None:
    words = with_synonyms(("cancel",))
    assert "cancel" in words and any("off" in w for w in words)
    assert with_synonyms(("workaround",)) == ("workaround",)


# -- the customer and the guard act on the same reading ---------------------------------------------------------


def _customer(domain: str, task: str):
    d = load_domain(domain)
    user = ScriptedUser(d, d.tasks[task], PERSONAS["baseline"], random.Random(0))
    asyncio.run(user.respond(None))
    return user


def _says(user, text: str):
    return asyncio.run(user.respond(text))


def test_the_customer_takes_a_refusal_with_an_alternative_and_agrees_to_the_alternative() -> None:
    user = _customer("payables", "pay-014")
    _says(user, "Thanks, could I have your employee number and work email?")
    turn = _says(
        user,
        "I'm sorry, I can't approve it for you — $3,870.00 is over your approval limit of $2,500.00. "
        "Would you like me to escalate INV-71014 to the controller instead?",
    )
    assert is_affirmative(turn.text) and turn.stop is None


def test_the_customer_answers_which_appointment_when_the_agent_cannot_tell() -> None:
    user = _customer("intake", "intake-038")
    turn = _says(user, "I just can't tell which appointment you mean — you have two with Dr Sousa.")
    assert "AP-5232" in turn.text and turn.stop is None


def test_the_customer_agrees_to_a_duplicate_hold_that_names_the_invoice_it_duplicates() -> None:
    user = _customer("payables", "pay-011")
    text = (
        "Shall I hold INV-71011 from Wexley Bearings with reason duplicate, and add an audit note saying it duplicates "
        "paid invoice INV-60311?"
    )
    assert is_affirmative(_says(user, text).text)


def test_the_customer_declines_a_hold_with_another_reason_beside_the_right_one() -> None:
    user = _customer("payables", "pay-011")
    text = "It's a duplicate, I see. Shall I put INV-71011 on hold with the reason quantity short?"
    assert not is_affirmative(_says(user, text).text)


def _guard_verdict(agent_text: str) -> dict | None:
    d = load_domain("payables")
    spec = tool_registry(d)["hold_invoice"]
    env = Environment(d)
    try:
        commitment = commitment_for(spec, {"invoice_id": "INV-71011", "reason": "duplicate"}, env.db, d)
    finally:
        env.close()
    return unconfirmed(commitment, [("agent", agent_text), ("user", "Yes, please.")], d.id_pattern)


def test_the_guard_lets_a_write_through_only_on_a_yes_to_its_proposal() -> None:
    assert _guard_verdict("I can put INV-71011 on hold with the reason duplicate. Shall I go ahead?") is None
    for elsewhere in YES_TO_SOMETHING_ELSE:
        assert _guard_verdict(elsewhere[2]) is not None, elsewhere[2]


def test_the_customer_answers_both_questions_of_one_message() -> None:
    user = _customer("payables", "pay-011")
    text = "Shall I put INV-71011 on hold with the reason duplicate? Also, what's your employee number and work email?"
    turn = _says(user, text)
    assert is_affirmative(turn.text) and "E-40173" in turn.text


def test_the_customer_answers_the_detail_a_proposal_still_waits_for_without_saying_no() -> None:
    user = _customer("payables", "pay-011")
    turn = _says(user, "I can put INV-71011 on hold. Shall I? And what reason should I record for the hold?")
    assert "duplicate" in turn.text.lower() and not turn.text.lower().startswith("no")


MORE_PROPOSALS = [
    (
        "benefits",
        "benefits-002",
        "OK to apply Classic to CH-50201 (tow, May 28, 2025) and refund $46.25 to club credit?",
        APPLY_002,
    ),
    (
        "payables",
        "pay-014",
        "**Not possible:** I can't approve INV-71014 over your limit.\n\n**Alternative:** escalate INV-71014 to the "
        "controller.\n\nShall I go ahead with the alternative?",
        ESCALATE_014,
    ),
    ("helpdesk", "hd-006", "I'm ready to send INC-1061 over to the telephony team. Okay to proceed?", ASSIGN_1061),
]


@pytest.mark.parametrize(("domain", "task", "text", "write"), MORE_PROPOSALS)
def test_a_date_is_no_question_and_an_alternative_is_pointed_at(domain, task, text, write) -> None:
    """ "May 30" does not open a question; "go ahead with the alternative" points back; "send ... to" assigns."""
    assert read(domain, task, text).proposes == keys(domain, write)


DONE_TABLE = (
    "### Done ✅\n\n| Action | Result |\n|---|---|\n| **Approve** INV-71001 | Approved for payment in full, $510.00 |\n\n"
    "**Anything else?**"
)


@pytest.mark.parametrize(
    ("text", "report"),
    [
        (DONE_TABLE, True),
        ("**All done!**\n- INV-71001: approved in full", True),
        ("Not done!\nINV-71001 could not be approved: the receipt is missing.", False),
        ("It isn't done yet.\nShall I approve INV-71001?", False),
    ],
)
def test_a_done_heading_reports_and_a_negated_done_does_not(text, report) -> None:
    assert read_message(text, load_domain("payables").lexicon).report is report


def test_the_customer_takes_a_done_heading_over_a_table_as_its_request_done() -> None:
    """A markdown model's report: the customer used to ask for its request again ("Let me say it again: ...")."""
    user = _customer("payables", "pay-001")
    _says(user, "Could I have your employee number and work email?")
    assert is_affirmative(_says(user, "Shall I approve INV-71001 for payment in full at $510.00?").text)
    turn = _says(user, DONE_TABLE)
    assert turn.stop == "satisfied", turn.text


# -- reading by meaning: classes of wording, each with the agent that would fool it -------------------------------

ADDRESS_010 = Write(
    tool="change_customer_address",
    args={
        "customer_id": "C-130633",
        "address1": "77 Quarry Court",
        "address2": "Unit 210",
        "city": "Marlow Bay",
        "state": "ME",
        "zip": "04112",
        "country": "USA",
    },
)
CANCEL_5103 = Write(tool="cancel_appointment", args={"appointment_id": "AP-5103"})
CANCEL_5104 = Write(tool="cancel_appointment", args={"appointment_id": "AP-5104"})
POST_001 = Write(tool="post_to_ledger", args={"invoice_id": "INV-71001"})
RESCHEDULE_5232 = Write(tool="reschedule_appointment", args={"appointment_id": "AP-5232", "date": "2025-07-03", "time": "10:00"})
CLASSIFY_2240 = Write(tool="classify_incident", args={"incident_id": "INC-2240", "category": "network"})
BOOK_003 = Write(
    tool="book_appointment", args={"clinician_id": "D-11", "date": "2025-06-17", "patient_id": "P-1016", "time": "14:30"}
)

RECALLED = [
    # a write made, recalled by any one detail, or by its action alone when nothing else could be meant
    ("intake", "intake-001", "Done: I've cancelled your appointment with Dr Sousa on Wed Jun 18, 2025.", CANCEL_5102, True),
    ("retail", "retail-010", "Done: your account address has been updated.", ADDRESS_010, True),
    ("payables", "pay-001", "All sorted, Fionn! approved INV-71001. Is there anything else you need today?", APPROVE_001, True),
    # a conflicting value voids it: another day, another invoice
    ("intake", "intake-001", "Done: I've cancelled your appointment with Dr Sousa on 24 June 2025.", CANCEL_5102, False),
    ("payables", "pay-001", "All sorted! approved INV-71002. Anything else?", APPROVE_001, False),
    # its action negated or only asked about
    ("payables", "pay-001", "INV-71001 is not approved yet. Shall I approve it?", APPROVE_001, False),
]


@pytest.mark.parametrize(("domain", "task", "text", "write", "reported"), RECALLED)
def test_a_report_recalls_a_write_made_by_any_one_detail_and_a_conflicting_value_voids_it(
    domain, task, text, write, reported
) -> None:
    assert read(domain, task, text, done=(write,)).reports == (keys(domain, write) if reported else frozenset())


def test_a_report_of_a_write_not_made_must_name_it_in_full() -> None:
    """Only a write made is recalled by its action alone: "your account address has been updated" reports no address
    change the conversation has not made (the customer, told so unasked, must hear which address)."""
    assert read("retail", "retail-010", "Done: your account address has been updated.").reports == frozenset()


def test_a_write_made_is_reported_and_never_agreed_to_again() -> None:
    text = "Step 1 of 2 done: approved INV-71001. Next, would you like me to post it to the ledger?"
    reading = read("payables", "pay-001", text, done=(APPROVE_001,), also=(POST_001,))
    assert reading.reports == keys("payables", APPROVE_001) and reading.proposes == keys("payables", POST_001)


REFUSED_THEN_OFFERED = (
    "I'm afraid I can't cancel it — appointment AP-5103 is on 2025-06-10, less than a day away, and late changes go "
    "through the front desk. What I can do instead is cancel appointment AP-5104 (Dr. Sousa, Thursday 19 June at "
    "09:00). Would you like me to do that?"
)


def test_a_refusal_then_an_alternative_binds_the_alternative_not_what_was_refused() -> None:
    reading = read("intake", "intake-004", REFUSED_THEN_OFFERED, also=(CANCEL_5103, CANCEL_5104))
    assert reading.refuses and reading.proposes == keys("intake", CANCEL_5104)
    refused_only = "I'm afraid I can't cancel appointment AP-5103: it is less than a day away. Would you like me to do that?"
    assert read("intake", "intake-004", refused_only, also=(CANCEL_5103,)).proposes == frozenset()


LEAVE = [
    "Before we finish: may I keep a transcript of this conversation for training purposes?",
    "Thanks so much! One quick thing — would it be okay if we sent you a short satisfaction survey by email afterwards?",
    "Would you like me to email you a copy of this chat once we're done?",
]


@pytest.mark.parametrize("text", LEAVE)
def test_a_leave_question_about_something_unrelated_asks_for_a_yes_that_agrees_to_no_write(text) -> None:
    reading = read("retail", "retail-002", text)
    assert reading.proposal and reading.proposes == frozenset() and reading.asks == frozenset()


@pytest.mark.parametrize(
    ("text", "proposal", "asks"),
    [
        ("I can't confirm that the total you paid comes to $332.20 yet — the record hasn't refreshed.", False, set()),
        ("I need to confirm who I'm speaking with first. What's the email address on your account?", False, {"identity"}),
        ("To confirm: I'll cancel #R7928167 with the reason ordered by mistake. Is that correct?", True, set()),
        ("Could you confirm the email address on your account?", False, {"identity"}),
    ],
)
def test_not_being_able_to_confirm_asks_for_no_yes_and_to_confirm_still_does(text, proposal, asks) -> None:
    reading = read("retail", "retail-002", text)
    assert reading.proposal is proposal and reading.asks == frozenset(asks)


@pytest.mark.parametrize(
    ("domain", "task", "text", "asks"),
    [
        ("payables", "pay-003", "I couldn't find an invoice INV-7103. Could you double-check the number?", {"invoice"}),
        ("retail", "retail-017", "No order #R516246 found. Correct number?", {"order"}),
        ("helpdesk", "hd-046", "Hmm, I'm not finding INC-205, sorry! Could you check the ticket number again?", {"incident"}),
        # after a not-found, a question that asks for a yes asks for no record again
        ("payables", "pay-011", "I couldn't find a receipt for invoice INV-71011. Shall I hold it instead?", set()),
    ],
)
def test_not_found_then_a_request_asks_again_for_what_was_not_found(domain, task, text, asks) -> None:
    reading = read(domain, task, text)
    assert reading.not_found and reading.asks == frozenset(asks)


@pytest.mark.parametrize(
    ("domain", "task", "text", "asks"),
    [
        ("payables", "pay-005", "First: employee no. + work email, please.", {"identity"}),
        ("retail", "retail-007", "Two quick things:\n1. The **order number**\n2. Which **payment method**", {"order", "payment"}),
        (
            "retail",
            "retail-002",
            "Could you give me the email on your account, and the number of the order you mean?",
            {"identity", "order"},
        ),
        ("retail", "retail-019", "First, so I can find your account, what's the email address you shop with?", {"identity"}),
        ("retail", "retail-004", "What's the new address, including the zip code?", {"address"}),
        # a yes-question about an action asks for no detail it states; a question beside it still does
        ("retail", "retail-002", "Call off #R7928167 (reason: ordered by mistake)? y/n", set()),
        ("retail", "retail-002", "Shall I cancel #R7928167? And what reason should I record?", {"reason"}),
    ],
)
def test_questions_for_details_in_the_forms_models_use(domain, task, text, asks) -> None:
    assert read(domain, task, text).asks == frozenset(asks)


PROPOSED_IN_OTHER_WORDS = [
    ("helpdesk", "hd-045", "Record INC-2240 as network? y/n", (CLASSIFY_2240,)),
    ("helpdesk", "hd-045", "I can't record INC-2240 as network until it is triaged.", ()),
    ("intake", "intake-038", "Change AP-5232 to Thursday 3 July at 10:00? y/n", (RESCHEDULE_5232,)),
    ("intake", "intake-038", "Change AP-5232 to Thursday 3 July at 11:00? y/n", ()),
    # the customer's own record goes without saying; another day does not
    (
        "intake",
        "intake-003",
        "Would you like me to set up an appointment with Dr Varga on June 17, 2025 at 2:30 pm?",
        (BOOK_003,),
    ),
    ("intake", "intake-003", "Would you like me to set up an appointment with Dr Varga on June 18, 2025 at 2:30 pm?", ()),
]


@pytest.mark.parametrize(("domain", "task", "text", "writes"), PROPOSED_IN_OTHER_WORDS)
def test_an_action_in_other_words_binds_its_write_and_a_conflicting_term_voids_it(domain, task, text, writes) -> None:
    assert read(domain, task, text, also=writes).proposes == keys(domain, *writes)


def test_of_two_versions_of_a_write_the_yes_is_to_the_one_the_message_proposes() -> None:
    """ "from USD 1,792.00 down to 1,523.20" proposes the short payment to $1,523.20, not an adjustment to $1,792.00
    (a version that only the other's amount lets through); an adjustment to $1,792.00 alone proposes that one."""
    billed = Write(tool="adjust_invoice", args={"invoice_id": "INV-71007", "amount": 1792.0})
    down = "Would you like me to adjust INV-71007 from USD 1,792.00 down to 1,523.20 USD?"
    assert read("payables", "pay-007", down, also=(billed,)).proposes == keys("payables", ADJUST_007)
    up = "Would you like me to adjust INV-71007 to USD 1,792.00?"
    assert read("payables", "pay-007", up, also=(billed,)).proposes == keys("payables", billed)


NOTIFY_028 = Write(
    tool="notify",
    args={"invoice_id": "INV-71028", "recipient": "vendor", "message": "Invoice approved in full and scheduled for payment."},
)
NOTIFY_029 = Write(tool="notify", args={"invoice_id": "INV-71029", "recipient": "vendor", "message": "Short payment."})
TERSE_NOTICE = 'OK to email the vendor: "Invoice approved in full and scheduled for payment."?'


def test_a_terse_proposal_without_the_record_is_about_the_one_record_it_can_mean() -> None:
    """No invoice named: the yes is to the one notice of that kind in view; with two in view it is to neither, and a
    message naming another invoice is about that one."""
    assert read("payables", "pay-025", TERSE_NOTICE).proposes == keys("payables", NOTIFY_028)
    assert read("payables", "pay-025", TERSE_NOTICE, also=(NOTIFY_029,)).proposes == frozenset()
    other = 'OK to email the vendor of INV-71029: "Invoice approved in full and scheduled for payment."?'
    assert not keys("payables", NOTIFY_028) & read("payables", "pay-025", other).proposes


NOTIFY_027 = Write(tool="notify", args={"invoice_id": "INV-71027", "recipient": "vendor", "message": "Credit note, please."})
QUOTED_NOTICE = (
    'Shall I email the vendor of INV-71027: "Poly bags are billed above the contract price; please send a credit note."'
)


@pytest.mark.parametrize(("tail", "writes"), [(" now?", (NOTIFY_027,)), (" Anything else?", ())])
def test_a_question_goes_on_after_the_sentence_it_quotes(tail, writes) -> None:
    """ "...a credit note." now?" is one question that proposes the notice; "...a credit note." Anything else?" asks
    something else after an offer left without a question mark."""
    assert read("payables", "pay-024", QUOTED_NOTICE + tail, also=(NOTIFY_027,)).proposes == keys("payables", *writes)


FOXGLOVE = {
    "address1": "4409 Foxglove Drive",
    "address2": "",
    "city": "Ashbury Falls",
    "state": "NC",
    "zip": "28641",
    "country": "USA",
}
DEFAULT_020 = Write(tool="change_customer_address", args={"customer_id": "C-639298", **FOXGLOVE})
ORDER_020 = Write(tool="change_order_address", args={"order_id": "#R4601987", **FOXGLOVE})


def test_a_proposal_named_in_full_binds_no_other_record_by_implication() -> None:
    """Changing the default address to Foxglove Drive is no change of the order's address, though the order goes unnamed
    (the default run's retail-020 customer, holding both writes open, once agreed to both and waited for the second);
    a terse proposal that names neither in full is about the one it can mean."""
    retail = load_domain("retail")
    tools, env = tool_registry(retail), Environment(retail)
    try:
        default, order = (commitment_for(tools[w.tool], dict(w.args), env.db, retail) for w in (DEFAULT_020, ORDER_020))
    finally:
        env.close()
    text = "Shall I update your default address to 4409 Foxglove Drive, Ashbury Falls, NC 28641?"
    assert bound_writes(text, [default, order], id_pattern=retail.id_pattern, own=("C-639298",)) == {0}
    terse = "Shall I send it to 4409 Foxglove Drive, Ashbury Falls, NC 28641 instead?"
    assert bound_writes(terse, [default, order], id_pattern=retail.id_pattern, own=("C-639298",)) == {1}


POST_009 = Write(tool="post_to_ledger", args={"invoice_id": "INV-71009"})


def test_what_a_proposal_says_it_will_not_do_is_not_proposed_and_what_it_says_it_will_do_is() -> None:
    """ "Nothing else: no posting, ..." under a hold proposes only the hold (bridge trial pay-009 t04 was turned down);
    the same list said as steps proposes the posting too."""
    ask = "\n\n**Shall I go ahead and put INV-71009 on hold?**"
    only = read("payables", "pay-009", HOLD_009 + NOTHING_ELSE + ask, also=(POST_009,))
    assert only.proposes == keys("payables", HOLD_009_PRICE)
    both = read("payables", "pay-009", HOLD_009 + "\nThen: post it to the ledger." + ask, also=(POST_009,))
    assert both.proposes == keys("payables", HOLD_009_PRICE, POST_009)
