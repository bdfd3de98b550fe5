"""How the scripted customer read a language model playing the agent in the terse and markdown styles (issue 21), each
once misread: a request for details as a bold label over a bullet list, an answer with a follow-up offer, an
explanatory "I can't" inside an answer, a refusal said as the rule, a question for where a refund goes, a status
that names a channel, and part of a request reported done. Each wording is read right now, with variants in other
styles, beside the wording that must still be read the other way (a note, a report, an offer whose terms carry the
value, a refusal that answers nothing, "no problem", a real question for the email, a request with nothing done).
"""

from __future__ import annotations

import pytest
from test_played_bridge import writes
from test_played_customer import conversation, said

from passhat.dialogue import is_affirmative
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain

RETAIL, PAYABLES, BENEFITS, INTAKE = (load_domain(n) for n in ("retail", "payables", "benefits", "intake"))


def asks(domain, text: str) -> frozenset[str]:
    return read_message(text, domain.lexicon).asks


# -- 1. a bold label over a bullet list ------------------------------------------------------------------------------

PAY_LABEL = (
    "Of course — I can work that out for **INV-71019**.\n\n**First, please verify yourself:**\n- Employee number\n- Work email"
)


@pytest.mark.parametrize(
    ("domain", "text"),
    [
        (PAYABLES, PAY_LABEL),
        (PAYABLES, "Happy to work that out. Verification first:\n1. Your employee number\n2. Your work email"),
        (BENEFITS, "__Verification first:__\n1. Membership card number\n2. Last name"),
        (
            INTAKE,
            "Let's sort this out.\n\n**Please verify yourself first:**\n- the phone number on your file\n- your date of birth",
        ),
    ],
)
def test_a_label_that_asks_over_a_list_asks_for_what_it_lists(domain, text: str) -> None:
    assert asks(domain, text) == {"identity"}


@pytest.mark.parametrize(
    "text",
    [
        "**Please note:**\n- Your work email is on file\n- Nothing has been changed on INV-71019",
        "**Verified:**\n- Employee number E-40173\n- Work email rosa.okafor.101@brightwater.example",
        "**What I checked:**\n- Employee number\n- Work email",
    ],
)
def test_a_label_that_notes_reports_or_names_a_topic_asks_nothing(text: str) -> None:
    assert asks(PAYABLES, text) == frozenset()


def test_the_customer_gives_who_it_is_to_a_label_over_a_list() -> None:
    (reply,) = conversation(PAYABLES, "pay-019", PAY_LABEL)
    assert "E-40173" in reply.text and "rosa.okafor.101@brightwater.example" in reply.text


# -- 2. an answer with a follow-up offer -----------------------------------------------------------------------------

PAY_ANSWER = (
    "Thanks, **Rosa** — verified (BW-US).\n\n## INV-71019 — Wexley Bearings (WB-66208), PO-4119\n\n| | Amount |\n|---|---|\n"
    "| **Invoice total** | $440.00 |\n| **Matched amount** | **$399.00** |\n| **Variance** | **$41.00** (10.28%) |\n\n"
    "Nothing has been changed on the invoice. Would you like me to check it against its tolerance or work it further?"
)
RETAIL_ANSWER = (
    "Ok — order #R4912223, delivered, so this would be an exchange.\n"
    "- Throw Blanket wool/rust (V-80799, $70.51) -> wool/navy (V-79342, $65.17). In stock.\n"
    "- Canvas Sneakers size 7 white (V-69074, $64.79) -> size 8 white (V-83641, $61.51). In stock.\n"
    "Net: you get $8.62 back. Refund goes to the original gift card (gift_337219) unless you prefer otherwise.\n"
    "Exchange is one-time for this order. Anything else to swap? If not, want me to place it?"
)


@pytest.mark.parametrize(
    ("domain", "task_id", "text"),
    [
        (PAYABLES, "pay-019", PAY_ANSWER),
        (
            PAYABLES,
            "pay-019",
            "Great question, Rosa! The matched amount on INV-71019 comes to $399.00, and the variance is $41.00. "
            "Would you like me to check that against the vendor's tolerance too?",
        ),
        (RETAIL, "retail-041", RETAIL_ANSWER),
    ],
)
def test_an_answer_with_a_follow_up_offer_is_credited_and_the_offer_declined(domain, task_id: str, text: str) -> None:
    (reply,) = conversation(domain, task_id, text)
    assert reply.text.startswith(said("no_thanks"))
    assert not reply.text.startswith(said("no"))


def test_the_answer_with_an_offer_and_anything_else_ends_the_conversation_satisfied() -> None:
    (reply,) = conversation(RETAIL, "retail-041", RETAIL_ANSWER)
    assert reply.stop == "satisfied"


def test_an_offer_whose_terms_carry_the_value_answers_nothing() -> None:
    offer, answer = conversation(
        PAYABLES, "pay-019", "Shall I short-pay INV-71019 to $399.00 with a variance of $41.00?", PAY_ANSWER
    )
    assert offer.stop is None and not offer.text.startswith(said("no_thanks"))
    assert answer.text.startswith(said("no_thanks"))  # only the answer settles the question


# -- 3. an explanatory "I can't" inside an answer --------------------------------------------------------------------

INTAKE_ANSWER = (
    "Thank you, **Yusuf** — you're verified.\n\n## Your authorization for Selma Demir\n\n| | |\n|---|---|\n"
    "| **Your role** | caregiver |\n| **Expired on** | **31 May 2025** |\n| **What you may do today** | **nothing** |\n\n"
    "Because the authorization ran out on **31 May 2025**, I can't book, move or cancel appointments or request records "
    "for your mother at the moment, and I can't share details about her."
)


@pytest.mark.parametrize(
    "text",
    [
        INTAKE_ANSWER,
        "Verified. Your authorization for Selma Demir ran out on 31 May 2025, so your access is nothing today. I can't book, "
        "move or cancel her appointments.",
        "Thanks so much, Yusuf. Your authorization for Selma Demir expired on 31 May 2025, so there's nothing you may do on "
        "her file today — I'm not able to book or change appointments for her until she authorizes you again.",
    ],
)
def test_an_answer_that_explains_what_the_agent_cannot_do_is_credited_not_pushed_back(text: str) -> None:
    (reply,) = conversation(INTAKE, "intake-013", text, persona="emotional")
    assert not reply.text.startswith(said("pushback"))
    assert reply.text.startswith(said("ack"))  # the answer settles the goal: on to the next request


def test_a_refusal_that_answers_nothing_is_still_pushed_back() -> None:
    (reply,) = conversation(INTAKE, "intake-013", "I'm sorry, Yusuf, but I can't share anything about Selma Demir's file.")
    assert reply.text.startswith(said("pushback"))


# -- 4. a refusal said as the rule -----------------------------------------------------------------------------------

BENEFITS_RULE = (
    "Understood it's stressful. But the rule is firm: renewal opens 30 days before the end date, so not before 2025-12-15. "
    "You're covered on Premier until 2026-01-14 in the meantime — no gap, nothing at risk today."
)


@pytest.mark.parametrize(
    ("text", "refuses"),
    [
        (BENEFITS_RULE, True),
        (
            "I hear you, but the policy is strict here: a membership renews only from 30 days before it ends, so not until 15 December 2025.",
            True,
        ),
        ("I completely understand! I'm afraid the answer is no for today — renewal opens on 2025-12-15.", True),
        ("That is no problem at all, Katya — your Premier cover runs until 2026-01-14.", False),
        ("**Good news:** the rule is clear — your Premier cover runs until **2026-01-14**, with no gap.", False),
        ("Your renewal window opens on 2025-12-15; nothing is due before then.", False),
    ],
)
def test_a_refusal_said_as_the_rule_is_a_refusal(text: str, refuses: bool) -> None:
    assert read_message(text, BENEFITS.lexicon).refusal is refuses


def test_the_customer_accepts_a_refusal_said_as_the_rule_after_its_push_back() -> None:
    first = (
        "Can't renew today though. A running paid membership can only be renewed from 30 days before it ends — for you, "
        "from 2025-12-15."
    )
    pushback, accepted = conversation(BENEFITS, "benefits-011", first, BENEFITS_RULE, persona="emotional")
    assert pushback.text.startswith(said("pushback"))
    assert accepted.stop == "satisfied"


# -- 5. where a refund goes ------------------------------------------------------------------------------------------

RETAIL_WHERE = (
    "Found you, Mateo. Order #R4143761, delivered. Returnable:\n- Cast Iron Skillet, 10 in enameled (V-17918), $45.91\n"
    "- Wool Socks, M striped (V-20689), $14.12\nRefund total $60.03. Where should it go: the original Discover card ending "
    "8698, or your gift card?"
)


@pytest.mark.parametrize(
    ("domain", "text", "slots"),
    [
        (RETAIL, RETAIL_WHERE, {"payment"}),
        (RETAIL, "**Refund: $60.03** — back to the **Discover card ending 8698**, or to your **gift card**?", {"payment"}),
        (RETAIL, "Lovely! Where do you want the $60.03: your Discover card ending 8698, or the gift card?", {"payment"}),
        (BENEFITS, "Plus applies: refund $190.00. Where should it go: club credit or the Visa ending 6482?", {"payment"}),
        (RETAIL, "Where should we ship the replacement?", {"address"}),
        (RETAIL, "The refund of $60.03 goes to the gift card you chose unless you say otherwise.", set()),
    ],
)
def test_a_question_for_where_the_money_goes_asks_for_the_payment_method(domain, text: str, slots: set[str]) -> None:
    assert asks(domain, text) == slots


def test_the_customer_names_where_its_refund_goes() -> None:
    (reply,) = conversation(RETAIL, "retail-012", RETAIL_WHERE)
    assert "gift" in reply.text.lower()
    assert not reply.text.startswith(said("restate")) and said("restate")[0] not in reply.text


# -- 6. a status that names a channel --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        (
            "Done. Return requested on #R4143761. $60.03 refunded to gift card gift_67375. Return instructions coming by email.",
            set(),
        ),
        ("Refund arriving in 3-5 days. Label going to your email.", set()),
        ("Thanks for your patience, Mateo! Return label heading your way by email shortly.", set()),
        ("Email on the account, please.", {"identity"}),
        ("Full name and billing zip, please.", {"identity"}),
    ],
)
def test_a_status_naming_a_channel_asks_for_nothing(text: str, slots: set[str]) -> None:
    assert asks(RETAIL, text) == slots


# -- 7. part of a request reported done ------------------------------------------------------------------------------

PAY_ESCALATE = (
    "Verified, Tobias. INV-71014, Brookvale Cable, $3,870.00. But the amount is over your $2,500.00 approval limit, so I "
    "can't approve it for you. It has to go to the controller, who decides it.\n"
    "Proposal: escalate INV-71014 (Brookvale Cable, $3,870.00) to the controller. Ok to proceed?"
)
PAY_HALF_DONE = (
    "Done. INV-71014 escalated; the controller decides it. Status not changed — say if you want it marked with "
    "controller. Anything else?"
)


def test_part_of_a_request_done_the_customer_asks_only_for_the_rest() -> None:
    yes, rest = conversation(PAYABLES, "pay-014", PAY_ESCALATE, PAY_HALF_DONE)
    assert is_affirmative(yes.text)
    assert rest.text.startswith(said("rest_open"))
    assert "mark it with controller" in rest.text and "escalate" not in rest.text.lower()
    assert not rest.text.startswith(said("just_that"))


def test_an_offer_beside_a_report_is_not_read_as_done() -> None:
    reading = read_message(PAY_HALF_DONE, PAYABLES.lexicon)
    assert reading.report and "marked" not in reading.done_text


def test_anything_else_with_nothing_done_yet_says_only_this_and_the_whole_request() -> None:
    (reply,) = conversation(PAYABLES, "pay-014", "Anything else I can look at for you?")
    assert reply.text.startswith(said("just_that"))


def test_a_hand_off_offered_instead_beside_a_refusal_is_not_reported_done() -> None:
    offer = (
        "I'm sorry to say that I can't refund dues part-way through a membership year myself. Your dues of $219.00 were "
        "charged to your Amex ending in 9921.\n\nWhat I can do instead is pass your request to our staff. Would you like "
        "me to hand your request over to them?"
    )
    reading = read_message(offer, BENEFITS.lexicon)
    assert reading.reported(writes(BENEFITS, "benefits-019"), own=("M-3019",)) == set()
