"""How the scripted customer answered a language model playing the agent in the chatty style (issue 21, the bridge's ten
chatty trials), each once wrong: a yes with a filler that reads as taking it back, a report of the write beside a
recapped refusal read as a failure, "which of those?" after two cards answered with the order, an answer in the same
turn as "one moment" ignored, "No, thanks" before a new request, and the backend's id for a card said aloud. Each
wording is answered right now, beside the variant that must still go the other way (a failure, a question alone, a
choice of orders, an agent still at work, an offer of one thing, a value the customer does know).
"""

from __future__ import annotations

import random
import re

from test_played_customer import conversation, said

from passhat.customers.wording import TEMPLATES, Voice
from passhat.dialogue import is_affirmative
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain

RETAIL, HELPDESK, BENEFITS = (load_domain(n) for n in ("retail", "helpdesk", "benefits"))

RETAIL_ASK = "Could you share the email address on your account with me?"
TWO_VISAS = (
    "Order #R8776282 is still pending, and the full $386.99 is on your gift card ending in 201279. I see two Visa cards "
    "on your account: one ending in 4698 and one ending in 9591. Which of those would you like the order moved to?"
)
MOVE = (
    "Here's what I'll do: move the payment of order #R8776282 from your gift card to your Visa ending in 4698. Your gift "
    "card will be refunded $386.99 and your Visa ending in 4698 charged $386.99. Shall I go ahead with that?"
)
REASON = "And could you tell me the reason for the change?"


def test_a_yes_beside_a_question_it_cannot_answer_is_said_alone() -> None:
    _, _, yes = conversation(RETAIL, "retail-050", RETAIL_ASK, TWO_VISAS, f"{MOVE} {REASON}", persona="emotional")
    assert is_affirmative(yes.text), yes.text
    assert not any(filler in yes.text for filler in said("unknown"))


def test_the_same_question_alone_still_gets_the_customer_s_i_m_not_sure() -> None:
    _, _, reply = conversation(RETAIL, "retail-050", RETAIL_ASK, TWO_VISAS, REASON, persona="emotional")
    assert reply.text.strip() in said("unknown")


def test_which_of_those_after_two_card_endings_asks_for_the_card() -> None:
    assert read_message(TWO_VISAS, RETAIL.lexicon).asks == frozenset({"payment"})
    _, card = conversation(RETAIL, "retail-050", RETAIL_ASK, TWO_VISAS)
    assert "ending in 4698" in card.text and "#R8776282" not in card.text


def test_which_of_those_after_two_orders_still_asks_for_the_order() -> None:
    text = "I see two orders on your account, #R8776282 and #R1244351. Which of those would you like to change?"
    assert read_message(text, RETAIL.lexicon).asks == frozenset({"order"})


BENEFITS_ASK = "Could you give me your membership number and your last name?"
NOT_BRUNO = (
    "Thank you, Alma, you're verified. The tow CH-50201 isn't on your account, so I can't look into it or refund it "
    "from here; Bruno will need to contact us himself. In the meantime, is there anything on your own membership you'd "
    "like me to look at?"
)
OFFER_FOR_BRUNO = (
    "Thank you, Alma, you're verified. The tow CH-50201 isn't on your account, so I can't look into it or refund it "
    "from here. Would you like me to email you the steps Bruno should follow for CH-50201?"
)
PROPOSAL = (
    "Here's what I'd do: apply your Plus plan's benefit to charge CH-50102 and refund the full $55.00 to your Visa "
    "ending in 4821. Would you like me to go ahead?"
)
DONE_AND_RECAP = (
    "Lovely, doing that now.\nAll set, Alma! Your Plus plan's benefit is now applied to the fuel delivery, charge "
    "CH-50102, and the full $55.00 has been refunded to your Visa ending in 4821.\n\nJust to recap the other part of "
    "your call: I couldn't do anything about Bruno's tow, CH-50201, because it's on his account.\n\nIs there anything "
    "else I can help you with today?"
)
FAILED = (
    "I'm so sorry, Alma: I tried to apply your Plus plan to CH-50102, but the refund of $55.00 to your Visa ending in "
    "4821 didn't go through. Is there anything else I can help you with today?"
)


def test_an_invitation_to_ask_for_more_is_taken_up_with_the_next_request_not_declined() -> None:
    _, reply = conversation(BENEFITS, "benefits-034", BENEFITS_ASK, NOT_BRUNO)
    assert not reply.text.startswith(said("no_thanks")), reply.text
    assert "CH-50102" in reply.text
    assert not re.search(r"\b(?:Fine|All right)\b", reply.text), reply.text  # the request's own "Fine." is no lead-in


def test_an_offer_of_one_thing_is_still_declined_before_the_next_request() -> None:
    _, reply = conversation(BENEFITS, "benefits-034", BENEFITS_ASK, OFFER_FOR_BRUNO)
    assert reply.text.startswith(said("no_thanks")), reply.text
    assert "CH-50102" in reply.text and not is_affirmative(reply.text)


def test_a_report_of_the_write_beside_a_recapped_refusal_completes_it() -> None:
    *_, yes, end = conversation(BENEFITS, "benefits-034", BENEFITS_ASK, NOT_BRUNO, PROPOSAL, DONE_AND_RECAP)
    assert is_affirmative(yes.text)
    assert end.stop == "satisfied", end.text


def test_a_write_that_did_not_go_through_is_still_pushed_back_on() -> None:
    *_, yes, end = conversation(BENEFITS, "benefits-034", BENEFITS_ASK, NOT_BRUNO, PROPOSAL, FAILED)
    assert is_affirmative(yes.text)
    assert end.stop is None and end.text.startswith(said("pushback")), end.text


HD_ASK = "Could you give me the number on your staff badge and your date of birth?"
ONE_MOMENT_THEN_ANSWER = (
    "Thank you, one moment.\nThanks, Anselm, you're verified, and I've pulled up INC-1271 for you.\n\nHere's where it "
    "stands:\n- It's currently with the endpoint group.\n- Its status is assigned, so it's sitting with them to be "
    "worked on.\n\nIs there anything else I can help you with?"
)
ONE_MOMENT_THEN_COURTESY = "Thank you, one moment.\nLet me pull up INC-1271 for you. Thanks for your patience!"


def test_an_answer_after_one_moment_in_the_same_turn_answers() -> None:
    assert not read_message(ONE_MOMENT_THEN_ANSWER, HELPDESK.lexicon).working
    _, end = conversation(HELPDESK, "hd-027", HD_ASK, ONE_MOMENT_THEN_ANSWER)
    assert end.stop == "satisfied", end.text


def test_one_moment_followed_only_by_courtesy_is_still_work_in_progress() -> None:
    assert read_message(ONE_MOMENT_THEN_COURTESY, HELPDESK.lexicon).working
    answered_first = "INC-1271 is with the endpoint group. Let me check its status too, one moment."
    assert read_message(answered_first, HELPDESK.lexicon).working
    _, wait = conversation(HELPDESK, "hd-027", HD_ASK, ONE_MOMENT_THEN_COURTESY)
    assert wait.stop is None and wait.text in said("ack"), wait.text


def unknown_ids(domain, goal, text: str) -> set[str]:
    """The ids in a customer's words that it cannot know: none of the goal's known values nor its requests name them."""
    known = " ".join([*domain.kit.knows(goal), *goal.request]).lower()
    return {m.group(0) for m in re.finditer(domain.id_pattern, text) if m.group(0).lower() not in known}


def test_no_customer_names_an_id_it_does_not_know_in_any_answer() -> None:
    for name in ("retail", "payables", "helpdesk", "benefits", "intake"):
        domain = load_domain(name)
        for task in domain.tasks.values():
            for goal in task.goals:
                for tone in TEMPLATES["yes"]:
                    voice = Voice(tone, random.Random(0), domain.kit.phrasings)
                    for slot in domain.kit.slots[1:]:
                        text = domain.kit.answer(slot, goal, voice)
                        assert not unknown_ids(domain, goal, text), (task.id, slot, text)


def test_the_backend_s_card_id_is_an_id_the_customer_does_not_know_and_its_card_ending_is_not() -> None:
    goal = RETAIL.tasks["retail-050"].goals[0]
    assert unknown_ids(RETAIL, goal, "I'd like to use my Visa ending in 4698 (card_147674).") == {"card_147674"}
    assert unknown_ids(RETAIL, goal, "I'd like to use my Visa ending in 4698, for order #R8776282.") == set()
