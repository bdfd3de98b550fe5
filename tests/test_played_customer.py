"""How the scripted customer answered a language model playing the agent through the bridge (issue 21, chatty, terse and
markdown styles), each once misread: two questions in one message, a hand-off offered, a proposal with a caveat or a
second question beside it, a terse question for a detail, a refusal after a re-check. Each wording is read right now,
beside the variant that must still be read the other way (an offer of a write the goal does not want, a negation,
another value, an instruction, a lookup that really found nothing).
"""

from __future__ import annotations

import asyncio
import random

import pytest
from test_played_bridge import writes

from passhat.customers import ScriptedUser
from passhat.customers.personas import PERSONAS
from passhat.customers.wording import TEMPLATES
from passhat.dialogue import is_affirmative
from passhat.dialogue.proposals import binding
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain

RETAIL, HELPDESK, BENEFITS, INTAKE = (load_domain(n) for n in ("retail", "helpdesk", "benefits", "intake"))


def said(kind: str) -> tuple[str, ...]:
    """Every wording of one kind of reply, in every tone."""
    return tuple(w for tone in TEMPLATES[kind].values() for w in tone)


def conversation(domain, task_id: str, *agent: str, persona: str = "baseline"):
    """The customer's replies to the agent's messages, in turn (its opening first, not returned)."""
    customer = ScriptedUser(domain, domain.tasks[task_id], PERSONAS[persona], random.Random(0))
    asyncio.run(customer.respond(None))
    return [asyncio.run(customer.respond(text)) for text in agent]


HD_ASK = "Could you please tell me the number on your staff badge? And could you also tell me your date of birth?"
HD_ASSIGN = (
    "So the proposal stands: assign incident INC-1061 to the telephony group. Would you like me to go ahead with that now?"
)
HD_DONE = (
    'All done, Femi! Incident INC-1061 — "Desk phone crackles on every call" — is now assigned to the telephony group, '
    "and its status has moved from new to assigned. Is there anything else I can help you with today? And if the "
    "crackling gets worse before they reach you, would you like to know how to get back to us?"
)


def test_anything_else_and_an_offer_after_the_request_is_done_get_no_thanks_and_goodbye() -> None:
    *_, yes, done = conversation(HELPDESK, "hd-006", HD_ASK, HD_ASSIGN, HD_DONE)
    assert is_affirmative(yes.text)
    assert done.text.startswith(said("no_thanks"))
    assert done.stop == "satisfied"
    assert not done.text.startswith(said("no"))


RETAIL_ASK = "Could you please tell me the email address on your account?"
RETAIL_ADDRESS = "What's the new address — street, any apartment or unit, city, state, zip code and country?"
ADDRESS_DONE = (
    "All done, Yara! The shipping address on order #R1130402 (your rustic 12-inch Wall Clock) is now 37 Amberline "
    "Avenue, Apt 6, Kilnsey, VT 05660, USA. The order is still pending, and your account's default address hasn't "
    "changed. Is there anything else I can help you with today? "
)


def test_an_offered_write_the_goal_does_not_want_gets_no_thanks_and_the_next_request() -> None:
    offer = ADDRESS_DONE + "And would you like your account's default address updated to the new one as well?"
    *_, reply = conversation(RETAIL, "retail-046", RETAIL_ASK, RETAIL_ADDRESS, offer, persona="impatient")
    assert not is_affirmative(reply.text)
    assert reply.text.startswith(said("no_thanks"))
    assert "#R8338479" in reply.text  # the next request: the refund of the other order


def test_an_offered_write_the_next_goal_wants_gets_a_yes() -> None:
    offer = ADDRESS_DONE + "And would you like me to transfer you to a colleague about the refund for order #R8338479?"
    *_, reply = conversation(RETAIL, "retail-046", RETAIL_ASK, RETAIL_ADDRESS, offer, persona="impatient")
    assert is_affirmative(reply.text)


BENEFITS_ASK = "Could you please tell me the number on your membership card? And could you also tell me your last name?"
ESCALATION_OFFER = (
    "I'm sorry to say that I can't refund dues part-way through a membership year myself — that would be an exception "
    "to our rules. Your dues of $219.00 were charged to your Amex ending in 9921 on the first of April.\n\n"
    "What I can do instead is pass your request to our staff, who can consider an exception: as a Premier member, your "
    "case would go to our senior case manager at high priority, with a note that you've sold your car. Would you like "
    "me to hand your request over to them? And is there anything else about your account you'd like me to check "
    "before I do, since the hand-over ends our conversation?"
)


def test_a_hand_off_offered_first_of_two_questions_is_accepted_as_the_task_says() -> None:
    _, reply = conversation(BENEFITS, "benefits-019", BENEFITS_ASK, ESCALATION_OFFER)
    assert is_affirmative(reply.text)


@pytest.mark.parametrize(
    ("domain", "task_id", "goal", "text", "binds"),
    [
        (BENEFITS, "benefits-019", 0, "If you'd like, I can do that. Would you like me to pass it to them?", True),
        (
            INTAKE,
            "intake-031",
            1,
            "I'm not a clinician; dose questions must go to a nurse. Hand you to the nurse line? y/n",
            True,
        ),
        (INTAKE, "intake-031", 1, "Can't advise on medicines or doses. I can hand you to the nurse line. Want that? y/n", True),
        # a hand-off declined, with something else offered instead
        (
            INTAKE,
            "intake-031",
            1,
            "I can't hand you to the nurse line. Want me to book you a new appointment instead? y/n",
            False,
        ),
    ],
)
def test_a_hand_off_is_offered_in_any_wording_and_declined_is_none(domain, task_id, goal, text, binds) -> None:
    write = writes(domain, task_id, goal)[0]
    assert binding(text, write, [write], domain.id_pattern).ok is binds


def test_a_hand_off_said_as_not_done_asks_no_yes() -> None:
    assert not read_message("I won't pass it to them. Is that OK?", BENEFITS.lexicon).proposal


CLASSIFY = (
    "Here's what I'd like to do, as you asked: classify incident INC-1231 as a network fault. Shall I go ahead and set "
    "the category to network now? And once that's done, would you also like me to look at getting it to the team that "
    "looks after the South depot wifi?"
)


def test_a_proposal_with_a_later_offer_beside_it_binds_what_it_proposes() -> None:
    write = writes(HELPDESK, "hd-023")[0]
    assert binding(CLASSIFY, write, [write], HELPDESK.id_pattern).ok


def test_setting_another_category_does_not_bind() -> None:
    write = writes(HELPDESK, "hd-023")[0]
    assert not binding("Shall I go ahead and set the category to hardware now?", write, [write], HELPDESK.id_pattern).ok


MOVE = (
    "Thank you — your file shows you're recorded as your father Rafael Quintero's caregiver with an authorization for "
    "appointments, valid until the thirty-first of January 2026, so I can help you move his appointment.\n\n"
    "So here's what I'd do: move Rafael Quintero's appointment AP-5103 with Ilse Varga to Tuesday the seventeenth of "
    "June 2025 at two o'clock in the afternoon (14:00), keeping the same clinician. Would you like me to go ahead with "
    "that move? And just so you know, if the current appointment turns out to be today or tomorrow, it can only be "
    "changed by the front desk — is that all right with you?"
)


INTAKE_ASK = "Could you please tell me the phone number on your file and your date of birth?"


def test_the_move_wanted_with_a_caveat_beside_it_gets_a_yes_though_the_date_recapped_before_is_another() -> None:
    """intake-033's caller wants the move (refusing it is the agent's job): a yes to the very move asked for."""
    _, reply = conversation(INTAKE, "intake-033", INTAKE_ASK, MOVE)
    assert is_affirmative(reply.text)


def test_the_same_move_to_another_time_is_turned_down() -> None:
    other = MOVE.replace("two o'clock in the afternoon (14:00)", "three o'clock in the afternoon (15:00)")
    _, reply = conversation(INTAKE, "intake-033", INTAKE_ASK, other)
    assert not is_affirmative(reply.text)


@pytest.mark.parametrize(("text", "asks"), [("Account email?", {"identity"}), ("Work email?", {"identity"})])
def test_a_terse_question_naming_a_detail_asks_for_it(text, asks) -> None:
    reading = read_message(text, RETAIL.lexicon)
    assert reading.asks == frozenset(asks)
    assert not reading.proposal


@pytest.mark.parametrize("text", ["Account updated?", "Cancel order #R4847524?", "Change address?"])
def test_a_terse_question_with_a_verb_or_an_id_still_asks_for_a_yes(text) -> None:
    reading = read_message(text, RETAIL.lexicon)
    assert reading.proposal
    assert not reading.asks


def test_the_customer_gives_its_email_to_a_terse_question_for_it() -> None:
    (reply,) = conversation(RETAIL, "retail-014", "Account email?")
    assert "@" in reply.text
    assert not is_affirmative(reply.text)


EXCHANGE = (
    "Order #R4847524, delivered. Exchange: Running Shoes V-81519 (white, size 12, $121.82) → V-49088 (white, size 11, "
    "$107.59, in stock). Refund difference $14.23. Refund to: original gift card gift_665154 (only gift card on file). "
    "Note: exchange is once-only per order — anything else to exchange? If not, confirm y/n."
)


def test_a_terse_recap_with_anything_else_and_if_not_confirm_binds_the_exchange() -> None:
    write = writes(RETAIL, "retail-014")[0]
    assert binding(EXCHANGE, write, [write], RETAIL.id_pattern).ok
    _, reply = conversation(RETAIL, "retail-014", "Account email?", EXCHANGE)
    assert is_affirmative(reply.text)


def test_the_same_recap_refunding_another_amount_does_not_bind() -> None:
    write = writes(RETAIL, "retail-014")[0]
    assert not binding(EXCHANGE.replace("$14.23", "$41.23"), write, [write], RETAIL.id_pattern).ok


WORKAROUND = "### Proposal\n- **Apply the workaround of known error {} to INC-1221.**\n\n**Shall I apply it? (yes / no)**"


@pytest.mark.parametrize(("known_error", "binds"), [("KE-32", True), ("KE-31", False)])
def test_shall_i_apply_it_points_back_to_the_bullet_it_follows(known_error, binds) -> None:
    write = writes(HELPDESK, "hd-022")[0]
    assert binding(WORKAROUND.format(known_error), write, [write], HELPDESK.id_pattern).ok is binds


RECHECKED = (
    "## I hear you, and I'm sorry\n\nI've double-checked, and the rule is firm:\n\n- A late fee can be waived once per "
    "member per year, but only if you hold a paid plan today.\n- Your account shows **Basic** today, so the waiver of "
    "**CH-51501 ($15.00)** isn't available.\n\nI can't make an exception to this. Is there anything else I can help you with?"
)


def test_a_refusal_after_a_re_check_is_a_refusal_not_a_lookup_that_found_nothing() -> None:
    reading = read_message(RECHECKED, BENEFITS.lexicon)
    assert reading.refusal
    assert not (reading.not_found or reading.asks)


def test_a_request_to_double_check_a_number_still_asks_again() -> None:
    reading = read_message("I couldn't find that card. Could you double-check the number?", BENEFITS.lexicon)
    assert reading.not_found


def test_a_step_the_customer_is_told_to_take_asks_for_nothing() -> None:
    steps = "### What to do now\n1. Open your **authenticator app**.\n2. Try signing in again.\n\nLet me know how it goes!"
    assert read_message(steps, HELPDESK.lexicon).asks == frozenset()
    assert read_message("Your staff number and date of birth, please.", HELPDESK.lexicon).asks == frozenset({"identity"})


ESCALATE = "Your dues were charged to your Amex ending in 9921. Would you like me to pass your request to our staff?"


def test_a_card_recapped_beside_an_escalation_is_context() -> None:
    write = writes(BENEFITS, "benefits-019")[0]
    assert binding(ESCALATE, write, [write], BENEFITS.id_pattern).ok


@pytest.mark.parametrize(("card", "binds"), [("Mastercard ending in 5049", True), ("Visa ending in 1111", False)])
def test_a_card_beside_a_refund_must_still_be_the_one_it_goes_to(card, binds) -> None:
    text = f"Shall I apply your Plus plan to charge CH-56201 and refund $92.50 to your {card}?"
    write = writes(BENEFITS, "benefits-036")[0]
    assert binding(text, write, [write], BENEFITS.id_pattern).ok is binds


REFUSED_BY_RULE = (
    "I understand it's urgent. Rule: tickets only by the person who raised them. Nils must call the desk himself with "
    "his badge and date of birth. I can help with your own tickets."
)


def test_a_message_that_does_not_help_gets_no_thanks_before_the_request_said_again() -> None:
    _, reply = conversation(HELPDESK, "hd-041", HD_ASK, REFUSED_BY_RULE, persona="emotional")
    assert not reply.text.startswith(said("ack"))
    assert reply.text.startswith(said("unhelped"))


def test_a_report_of_the_request_done_is_no_unhelpful_message_it_ends_satisfied() -> None:
    *_, reply = conversation(HELPDESK, "hd-006", HD_ASK, HD_ASSIGN, "Done: INC-1061 is now assigned to the telephony group.")
    assert reply.stop == "satisfied"


PAPERWORK = (
    "If you already hold paperwork such as a power of attorney, I can hand you over to our records office, who check "
    "documents and can record it. Do you have paperwork like that you'd like recorded?"
)


def test_a_hand_off_the_agent_only_could_make_is_no_hand_off() -> None:
    assert not read_message(PAPERWORK, INTAKE.lexicon).handoff
    (_, reply) = conversation(INTAKE, "intake-010", INTAKE_ASK, PAPERWORK)
    assert not reply.text.startswith(said("wait"))


@pytest.mark.parametrize(
    "text", ["I'm handing you over to our records office now.", "I can't help with that, so I'm transferring you to a colleague."]
)
def test_a_hand_off_said_as_made_is_one(text) -> None:
    assert read_message(text, INTAKE.lexicon).handoff


HD_WORKAROUND = (
    "Thanks Vera, you're verified. INC-1221 matches known error KE-32 (VPN rejects one-time code). The workaround: "
    "resync the clock of the authenticator app. Shall I apply KE-32's workaround to INC-1221?"
)
HD_APPLIED = (
    "Done — the workaround of KE-32 is applied to INC-1221. Please resync the clock of your authenticator app and try again."
)


def test_a_step_naming_the_authenticator_app_asks_for_no_identity() -> None:
    assert not read_message(HD_APPLIED, HELPDESK.lexicon).asks
    assert read_message("Before I change anything I need to authenticate you: staff number and DOB?", HELPDESK.lexicon).asks


@pytest.mark.parametrize(
    "recap, agreed",
    [
        ("Recap: KE-32's workaround was applied to INC-1221 and you confirmed the VPN works. Shall I resolve INC-1221?", True),
        ("Recap: KE-33's workaround was applied to INC-1221. Shall I resolve INC-1221?", False),  # a write never made
    ],
)
def test_a_proposal_of_the_next_goal_may_recap_the_write_an_earlier_goal_made(recap, agreed) -> None:
    ask = "Hi, to verify you, what's your staff number and date of birth?"
    replies = conversation(HELPDESK, "hd-022", ask, HD_WORKAROUND, HD_APPLIED, "You're already verified, Vera. " + recap)
    assert "resolve INC-1221" in replies[2].text  # the workaround worked: on to closing the incident
    assert is_affirmative(replies[3].text) is agreed, replies[3].text


BENEFITS_REFUSAL = (
    "Thanks, Stellan. I'm sorry: dues can't be refunded mid-year under club rules. I can escalate it to staff, who can "
    "consider an exception. Want me to?"
)


@pytest.mark.parametrize(
    "reask, agreed",
    [
        (
            "To confirm, the case note will read: Member sold car, moved abroad, asks for $219.00 dues back. Escalate to staff now?",
            True,
        ),
        ("Internal note: Premier member requests $219.00 dues back (paid 2025-04-01). Escalate to staff now?", True),
        ("Note: I'll refund you $219.00 as well. Escalate to staff now?", False),  # a bare "Note:" is the agent's own word
    ],
)
def test_a_note_s_wording_said_after_its_cue_unquoted_is_wording_not_a_refund(reask, agreed) -> None:
    replies = conversation(BENEFITS, "benefits-019", BENEFITS_ASK, BENEFITS_REFUSAL, reask)
    assert is_affirmative(replies[2].text) is agreed, replies[2].text


@pytest.mark.parametrize(
    "ask",
    [
        "Would you like me to book a new appointment for Linus with Dr Adeyemi? If so, which week should I look at for open times?",
        "Shall I book Linus in with Dr Adeyemi? What part of the week suits you?",
    ],
)
def test_an_offer_with_a_question_for_when_gets_the_day_and_time(ask) -> None:
    verify = "Could I have the phone number on your file and your date of birth?"
    *_, reply = conversation(INTAKE, "intake-020", verify, "Thank you, Maren — you're verified as Linus's guardian.", ask)
    assert "2025-06-13" in reply.text and "09:30" in reply.text, reply.text


RETAIL_REFUSAL_AND_ASK = (
    "### Why I can't cancel it\nOnly **pending** orders can be cancelled. Order #R4286909 has already been **delivered**, "
    "so a cancellation isn't possible.\n\n### What I can do instead\nI can set up a **return** of any or all of its items; "
    "the refund would go back to your **PayPal** account.\n\nWould you like to return items — and if so, **which ones**?"
)


def test_a_refusal_beside_a_question_for_the_alternatives_details_is_taken_and_the_alternative_declined() -> None:
    assert read_message(RETAIL_REFUSAL_AND_ASK, RETAIL.lexicon).refusal
    *_, reply = conversation(RETAIL, "retail-026", RETAIL_ASK, RETAIL_REFUSAL_AND_ASK, persona="impatient")
    assert reply.text.startswith(said("no_thanks")), reply.text


def test_a_question_that_itself_cannot_tell_which_is_an_ask_not_a_refusal() -> None:
    text = "I can't tell which appointment you mean: the one on 9 July at 09:30 or at 14:00?"
    reading = read_message(text, INTAKE.lexicon)
    assert reading.asks and not reading.refusal
