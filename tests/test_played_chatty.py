"""Wordings a language model used while playing the agent through the bridge (issue 21, chatty, terse and markdown
styles), each once misread by the customer or a grader: read right now, each beside the variant that must still be
read the other way (a question about a fact, a refusal, a negation, another date, an unreal condition).
"""

from __future__ import annotations

import asyncio
import random

import pytest

from passhat.customers import ScriptedUser
from passhat.customers.personas import PERSONAS
from passhat.customers.wording import TEMPLATES
from passhat.dialogue.facts import Fact, tell
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain

PAYABLES, RETAIL, INTAKE = (load_domain(n) for n in ("payables", "retail", "intake"))

FIVE_STEPS = (
    "Here is what I would do:\n1. Short-pay INV-71005 to $2,340.00.\n2. Post it to the ledger.\n3. Mark it ready for "
    "payment.\n4. Add an audit note.\n5. Email the vendor a notice of the short payment.\n"
    "Could you confirm you'd like me to go ahead with all five of these steps."
)


@pytest.mark.parametrize(
    ("text", "proposal"),
    [
        ("I'll short-pay INV-71011 to $1,523.20 and email Northmoor a notice. OK?", True),
        ("Hold INV-71011 for a duplicate, yes?", True),
        ("Hold INV-71011 for a duplicate \u2014 right?", True),
        ("To do that I just need your go-ahead: hold INV-71011 with reason duplicate.", True),
        (FIVE_STEPS, True),
        # a question about a fact, not for a yes to a write
        ("Is INV-71011 the one you mean, yes?", False),
        # a request for a detail is no proposal, however it starts
        ("Please confirm your employee number and work email.", False),
    ],
)
def test_a_yes_is_asked_for_by_a_tag_a_bare_ok_or_a_request_for_the_go_ahead(text, proposal) -> None:
    assert read_message(text, PAYABLES.lexicon).proposal is proposal


def test_a_request_for_the_go_ahead_asks_for_no_detail_it_names() -> None:
    reading = read_message("To do that I just need your go-ahead: hold INV-71011 with reason duplicate.", PAYABLES.lexicon)
    assert reading.asks == frozenset()
    assert read_message("I need the hold reason for INV-71011.", PAYABLES.lexicon).asks == frozenset({"reason"})


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Do you want the price difference paid using the gift card, or the card on file?", {"payment"}),
        ("Would you like to pay with your gift card or your Visa ending 1234?", {"payment"}),
        # a choice between two actions asks for neither a payment method nor a yes
        ("Shall I exchange it and charge the $12.00 difference to your Visa ending 1234, or would you rather cancel?", set()),
        ("Order number and email (e.g. #W1234567).", {"identity", "order"}),
    ],
)
def test_how_to_pay_is_asked_in_any_wording_and_a_bracketed_hint_leaves_a_request_terse(text, asks) -> None:
    assert read_message(text, RETAIL.lexicon).asks == frozenset(asks)


def test_the_customer_says_nothing_else_when_asked_anything_else_before_its_request_is_handled() -> None:
    customer = ScriptedUser(RETAIL, RETAIL.tasks["retail-001"], PERSONAS["impatient"], random.Random(0))
    asyncio.run(customer.respond(None))
    reply = asyncio.run(customer.respond("I've noted that down. Is there anything else I can help you with?"))
    assert reply.stop is None
    assert reply.text.startswith(tuple(w for tone in TEMPLATES["just_that"].values() for w in tone))
    assert "That's all" not in reply.text


EXPIRED = Fact("phrase", "expired on 2025-05-31")


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("Your authorization for Selma ran until the thirty-first of May 2025 and has expired.", True),
        ("It expired May 31st 2025.", True),
        ("Your authorization ended on 31 May 2025 and has expired.", True),
        ("Your authorization expired on 31 May 2025.", True),
        ("It hasn't expired; it runs until 31 May 2025.", False),
        ("Your authorization is valid until 31 May 2025 and hasn't expired.", False),
        ("It expired on 2025-04-30 and the new one runs until 31 May 2025.", False),
        ("Your authorization expired on 30 May 2025.", False),
    ],
)
def test_an_end_date_told_apart_from_its_verb_tells_when_it_expired(text, told) -> None:
    assert tell(EXPIRED, [(0, text)]).told is told


NOTHING_TO_PAY = Fact("money", "0.00")


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("Plus covers 100% of a callout, so it costs you nothing.", True),
        ("The lockout is covered in full.", True),
        ("You'll get a full refund of the $90.00.", True),
        ("You'd pay nothing.", True),
        ("If you agree, I'll apply Plus and you'd pay $0.00.", True),
        ("The lockout is not covered in full.", False),
        ("Classic doesn't cover 100% of a tow.", False),
        ("Is it covered in full?", False),
        ("If you had Plus, it would be covered in full.", False),
        ("Had you renewed, you'd pay nothing.", False),
        ("You'd still pay $20.00.", False),
    ],
)
def test_a_cost_of_nothing_is_told_in_words_and_not_by_a_negation_question_or_unreal_condition(text, told) -> None:
    assert tell(NOTHING_TO_PAY, [(0, text)]).told is told


def test_words_for_nothing_to_pay_tell_no_other_amount() -> None:
    assert not tell(Fact("money", "20.00"), [(0, "It's covered in full.")]).told


HIGHEST_MEDIUM = Fact(
    "phrase", "medium priority", synonyms=("medium is the highest", "no higher than medium", "capped at medium")
)


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("I can't raise it to high: medium is the highest it can go, and it's already at medium.", True),
        ("Medium is the highest priority allowed for one laptop.", True),
        ("Medium isn't the highest; high is allowed.", False),
    ],
)
def test_a_priority_cap_is_told_in_the_words_a_customer_hears(text, told) -> None:
    assert tell(HIGHEST_MEDIUM, [(0, text)]).told is told
