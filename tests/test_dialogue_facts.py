"""Whether an agent told the customer a fact, by meaning: each kind with the wordings a correct agent
uses (which must count) and the ones that would fool a substring check (which must not)."""

from __future__ import annotations

import pytest

from passhat.dialogue.facts import Fact, NotTold, answers_kind, contradicts, tell

RETAIL_IDS = r"(?:#R\d{7}|(?<![\w-])(?:C-\d{6}|P-\d{3}|V-\d{5}|(?:card|gift|paypal)_\d{4,6}))(?![\w-])"
ORDER_RESULT = (
    '{"order_id": "#R2103040", "status": "delivered", "items": [{"name": "Desk lamp", "price": 150.1}], '
    '"total": "332.20", "refund": 8.62, "payment_method_id": "card_8069", "tracking": "833698649358", '
    '"delivered_on": "2026-03-04", "item_count": 3, "reason": "no longer needed"}'
)


def told(fact: Fact, *messages: str) -> tuple[bool, NotTold | None]:
    telling = tell(fact, list(enumerate(messages)), seen=[ORDER_RESULT], id_pattern=RETAIL_IDS)
    return telling.told, telling.reason


TOTAL = Fact("money", "332.20")
REFUND = Fact("money", "8.62", direction="refund")
CARD = Fact("card_ending", "8069")
DATE = Fact("date", "2026-03-04")
DELIVERED = Fact(
    "status", "delivered", synonyms=("arrived",), rivals=("pending", "processed", "cancelled", "returned"), about=("#R2103040",)
)
TRACKING = Fact("identifier", "833698649358")
ORDER_ID = Fact("identifier", "#R3042198")
COUNT = Fact("number", "3")
REASON = Fact("phrase", "no longer needed", synonyms=("don't need it anymore",))

LAMP_ID = "#R2103040"

TELLS: list[tuple[Fact, tuple[str, ...]]] = [
    (TOTAL, ("Your total is $332.20.",)),
    (TOTAL, ("Your total is USD332.20.",)),
    (TOTAL, ("Your total is USD 332.20.",)),
    (TOTAL, ("Your total is 332.20 USD.",)),
    (TOTAL, ("Le total est de 332,20 $.",)),
    (TOTAL, ("Your total is 332.20.",)),
    (TOTAL, ("That comes to 332 dollars and 20 cents.",)),
    (TOTAL, ("That comes to three hundred thirty-two dollars and twenty cents.",)),
    (TOTAL, ("Order #R2103040 cost $150.10 and #R7269930 cost $182.10, so together you paid $332.20.",)),
    (TOTAL, ("Let me check.", "The total is $340.00.", "Sorry, I meant $332.20.")),
    (TOTAL, ("The total is $332.20, not $340.00.",)),
    (REFUND, ("You'll get $8.62 back.",)),
    (REFUND, ("Price difference: -8.62",)),
    (REFUND, ("Price difference: −$8.62",)),
    (REFUND, ("We will refund $8.62 to the card you paid with.",)),
    (REFUND, ("Eight dollars and sixty-two cents will be credited to your card.",)),
    (REFUND, ("Shall I go ahead and refund $8.62 to your Visa?",)),
    (REFUND, ("I can't cancel it, but I can refund $8.62 for the late delivery.",)),
    (CARD, ("The refund goes to your card ending in 8069.",)),
    (CARD, ("The refund goes to the card that ends with 8069.",)),
    (CARD, ("The refund goes to x8069.",)),
    (CARD, ("The refund goes to X-8069.",)),
    (CARD, ("The refund goes to your Amex-8069.",)),
    (CARD, ("The refund goes to your Visa 8069.",)),
    (CARD, ("The refund goes to ****8069.",)),
    (CARD, ("The refund goes to •••• 8069.",)),
    (CARD, ("The last four digits are 8069.",)),
    (CARD, ("I refunded it to 8069.",)),
    (DATE, ("It was delivered on 2026-03-04.",)),
    (DATE, ("It was delivered on March 4, 2026.",)),
    (DATE, ("It was delivered on 4 March 2026.",)),
    (DATE, ("It was delivered on Mar 4.",)),
    (DATE, ("It was delivered on March 4th.",)),
    (DATE, ("It was delivered on 03/04/2026.",)),
    (DATE, ("It was delivered on the 4th of March.",)),
    (DATE, ("It was delivered on the fourth of March.",)),
    (DATE, ("It was delivered on Wednesday, March 4th, 2026.",)),
    (DATE, ("It was delivered Mar. 4, 2026 in the afternoon.",)),
    (DELIVERED, ("Your order has been delivered.",)),
    (DELIVERED, ("Your order was delivered.",)),
    (DELIVERED, ("Status: Delivered.",)),
    (DELIVERED, ("I can't cancel it because it was delivered.",)),
    (DELIVERED, ("It cannot be cancelled since it has been delivered.",)),
    (DELIVERED, ("I'm sorry, I can't cancel a delivered order.",)),
    (DELIVERED, ("Order #R2103040 is delivered; #R7269930 is pending.",)),
    (DELIVERED, ("Your order #R2103040 arrived on March 4.",)),
    (DELIVERED, ("Order #R2103040 is the lamp. It shows as delivered.",)),
    (DELIVERED, ("That order was already delivered, and only pending orders can be cancelled.",)),
    (DELIVERED, ("Both #R7269930 and #R2103040 are delivered.",)),
    (DELIVERED, ("It was delivered, so it can't be returned to the warehouse.",)),
    (TRACKING, ("Your tracking number is 833698649358.",)),
    (TRACKING, ("Your tracking number is 8336 9864 9358.",)),
    (TRACKING, ("Your tracking number is 8336-9864-9358.",)),
    (TRACKING, ("Tracking: 833698649358",)),
    (ORDER_ID, ("I found order R3042198.",)),
    (ORDER_ID, ("I found order #R3042198.",)),
    (ORDER_ID, ("I found order number 3042198.",)),
    (ORDER_ID, ("I found order 3042198.",)),
    (ORDER_ID, ("I found order r3042198.",)),
    (ORDER_ID, ("The order you mean is #R3042198, the desk lamp.",)),
    (COUNT, ("You have 3 items in that order.",)),
    (COUNT, ("You have three items in that order.",)),
    (COUNT, ("There are 3.",)),
    (COUNT, ("Three of them shipped.",)),
    (COUNT, ("That order holds three lamps.",)),
    (COUNT, ("Good news: all 3 items shipped!",)),
    (COUNT, ("- Items: 3\n- Shipped: yes",)),
    (COUNT, ("I see three items, shipped on March 4.",)),
    (COUNT, ("It has Three items.",)),
    (COUNT, ("You ordered 3 lamps, and all of them arrived.",)),
    (REASON, ("I recorded the reason 'no longer needed'.",)),
    (REASON, ("Reason: No longer needed.",)),
    (REASON, ("The reason on file is no-longer needed.",)),
    (REASON, ('I used the reason "No Longer Needed".',)),
    (REASON, ("I noted that you don't need it anymore.",)),
    (REASON, ("The return reason is: no longer needed",)),
    (REASON, ("Done, with the reason no longer needed.",)),
    (REASON, ("I set the reason to no longer needed because you asked.",)),
    (REASON, ("Your reason, no longer needed, is saved.",)),
    (REASON, ("The reason \u201cno longer needed\u201d is saved.",)),
    # a phrase fact is often one of the options the customer must hear: "X or Y" lists them
    (REASON, ('I can only cancel with the reason "ordered by mistake" or "no longer needed"; nothing else.',)),
    (Fact("phrase", "ordered by mistake"), ('I can only cancel with the reason "no longer needed" or "ordered by mistake".',)),
    # a refusal's reason in brackets states itself: the negation of the refused action does not reach it
    (TOTAL, ("I can't refund it (your total is $332.20, over the limit).",)),
    (DELIVERED, (f"I can't cancel it (order {LAMP_ID} was delivered on March 4).",)),
    (REASON, ("No change is possible (the reason on file is no longer needed).",)),
    # a bound that names a definite value, or a limit said by its verb, states it exactly
    (TOTAL, ("The refund is more than the $332.20 your plan allows.",)),
    (TOTAL, ("Your plan allows up to $332.20.",)),
    # "about" before an amount it rounds tells the amount within its step
    (Fact("money", "1792.00"), ("The total is about $1,800.",)),
    # a proposal put for a yes states its terms
    (REFUND, ("Refund $8.62 to your Visa? y/n",)),
]


@pytest.mark.parametrize(("fact", "messages"), TELLS)
def test_a_correct_wording_tells(fact: Fact, messages: tuple[str, ...]) -> None:
    assert told(fact, *messages) == (True, None)


NOT_TELLS: list[tuple[Fact, tuple[str, ...], NotTold]] = [
    (TOTAL, ("The refund is not 332.20.",), "negated"),
    (TOTAL, ("332.20 is not correct.",), "negated"),
    (TOTAL, ("It is either $332.20 or $340.00.",), "hedged"),
    (TOTAL, ("It comes to about $332.20.",), "hedged"),
    (TOTAL, ("The total is $332.20.", "Sorry, I meant $340.00."), "contradicted"),
    (TOTAL, ("The total is $332.20. Actually, let me correct that: the total is $340.00.",), "contradicted"),
    (TOTAL, ("The total is 332,20 €.",), "contradicted"),
    (TOTAL, (f"Here is the order: {ORDER_RESULT}",), "data_dump"),
    (TOTAL, ("Numbers I saw: 150.10, 182.10, 332.20, 8.62, 52.40.",), "data_dump"),
    (TOTAL, ("Is your total $332.20?",), "question"),
    (TOTAL, ("Your order number is #R3322000.",), "not_said"),
    (TOTAL, ("You have 332 items and 20 orders.",), "not_said"),
    (REFUND, ("You would have to pay $8.62.",), "contradicted"),
    (REFUND, ("You will be charged an extra $8.62.",), "contradicted"),
    (REFUND, ("There is no refund of $8.62.",), "negated"),
    (REFUND, ("We'll refund $8.62 or $9.00.",), "hedged"),
    (CARD, ("Your payment method card_8069 is on file.",), "not_said"),
    (CARD, ("Your zip is 18069.",), "not_said"),
    (CARD, ("That is $8069.",), "not_said"),
    (CARD, ("It's not the card ending in 8069.",), "negated"),
    (CARD, ("Is it the card ending in 8069?",), "question"),
    (CARD, ("It is the card ending in 8069 or 1234.",), "hedged"),
    (CARD, ("It went to the card ending in 8069.", "My mistake, it went to the card ending in 1234."), "contradicted"),
    (CARD, ("Tracking: 8336 9864 8069",), "not_said"),
    (CARD, (ORDER_RESULT,), "not_said"),  # card_8069 in a dump is an id, and the dump tells nothing anyway
    (CARD, ("I'll use PayPal instead of the Visa ending 8069.",), "negated"),
    (DATE, ("Was it delivered on March 4?",), "question"),
    (DATE, ("It was not delivered on March 4.",), "negated"),
    (DATE, ("It arrives March 4 or March 5.",), "hedged"),
    (DATE, ("It arrives around March 4.",), "hedged"),
    (DATE, ("It arrives March 4.", "Sorry, I meant March 5."), "contradicted"),
    (DATE, ("It arrived on 04/03/2026.",), "not_said"),  # US reading: April 3
    (DATE, ("It arrived on March 14.",), "not_said"),
    (DATE, ("It arrived on March 4, 2025.",), "not_said"),
    (DATE, (f"Raw: {ORDER_RESULT}",), "data_dump"),
    (DATE, ("Order #R2026034 is ready.",), "not_said"),
    (DELIVERED, ("Your order is not delivered.",), "negated"),
    (DELIVERED, ("Your order isn't delivered.",), "negated"),
    (DELIVERED, ("Your order hasn't been delivered yet.",), "negated"),
    (DELIVERED, ("Your order has not yet been delivered.",), "negated"),
    (DELIVERED, ("Your order was never delivered.",), "negated"),
    (DELIVERED, ("It is neither pending nor delivered.",), "negated"),
    (DELIVERED, ("Is your order delivered?",), "question"),
    (DELIVERED, ("It is pending and delivered.",), "contradicted"),
    (DELIVERED, ("Order #R7269930 is delivered; #R2103040 is pending.",), "about_other"),
    (DELIVERED, ("It will be delivered on March 4.",), "hedged"),
    (DELIVERED, ("It is either delivered or pending.",), "hedged"),
    (DELIVERED, ("We deliver in 3 days.",), "not_said"),
    (DELIVERED, ("It's delivered.", "Actually, it is still pending."), "contradicted"),
    (DELIVERED, (ORDER_RESULT,), "data_dump"),
    (DELIVERED, ("Delivered orders cannot be cancelled.",), "about_other"),
    (DELIVERED, ("It is undelivered.",), "not_said"),
    (TRACKING, ("Your tracking number is 1833698649358.",), "not_said"),
    (TRACKING, ("Your tracking number is 833698649359.",), "not_said"),
    (TRACKING, ("Is your tracking number 833698649358?",), "question"),
    (TRACKING, ("The tracking number is not 833698649358.",), "negated"),
    (TRACKING, ("It is 833698649358 or 833698649359.",), "hedged"),
    (TRACKING, ("It is 833698649358.", "Sorry, the correct tracking number is 833698649359."), "contradicted"),
    (TRACKING, (ORDER_RESULT,), "data_dump"),
    (TRACKING, ("833698649358 is not correct.",), "negated"),
    (ORDER_ID, ("I found order #R30421985.",), "not_said"),
    (ORDER_ID, ("I found order #R3042199.",), "not_said"),
    (ORDER_ID, ("Is it order #R3042198?",), "question"),
    (ORDER_ID, ("It isn't order #R3042198.",), "negated"),
    (COUNT, ("That costs $3.00.",), "not_said"),
    (COUNT, ("Order #R3000003 shipped.",), "not_said"),
    (COUNT, ("It shipped March 3.",), "not_said"),
    (COUNT, ("There are not 3 items.",), "negated"),
    (COUNT, ("There are 3 or 4 items.",), "hedged"),
    (COUNT, ("There are about 3 items.",), "hedged"),
    (COUNT, ("Are there 3 items?",), "question"),
    (COUNT, ("You have 13 items.",), "not_said"),
    (COUNT, ("It is the 3rd item.",), "not_said"),
    (COUNT, ("There are 3 items.", "Sorry, I misspoke: there are 4 items."), "contradicted"),
    (REASON, ("The reason is not 'no longer needed'.",), "negated"),
    (REASON, ("I'll use 'damaged' instead of 'no longer needed'.",), "negated"),
    (REASON, ("Is the reason 'no longer needed'?",), "question"),
    (REASON, ("I no longer need the reason.",), "not_said"),
    (REASON, ('{"reason": "no longer needed", "order_id": "#R2103040"}',), "data_dump"),
    (REASON, ("Maybe no longer needed?",), "question"),
    (REASON, ("Perhaps no longer needed.",), "hedged"),
    (REASON, ("I didn't record no longer needed.",), "negated"),
    (REASON, ("The reason isn't no longer needed.",), "negated"),
    (REASON, ("Rather than 'no longer needed', I used 'ordered by mistake'.",), "negated"),
    (
        Fact("phrase", "no longer needed", rivals=("ordered by mistake",)),
        ("I recorded 'no longer needed'.", "Sorry, I meant I recorded 'ordered by mistake'."),
        "contradicted",
    ),
    # a bracket that only glosses the refused thing stays under the negation; a negation inside the aside counts
    (TOTAL, ("I can't refund it (the $332.20).",), "negated"),
    (TOTAL, ("I can't approve it (the total is not $332.20).",), "negated"),
    # a bound of something else, or an estimate written to the cent, stays a hedge
    (TOTAL, ("You could get up to $332.20.",), "hedged"),
    (TOTAL, ("It should be roughly $332.20.",), "hedged"),
    (Fact("money", "1792.00"), ("The total is maybe $1,800.",), "not_said"),
    (Fact("money", "1792.00"), ("The total is about $1,700.",), "not_said"),
    # a question that opens with an asking word asks, y/n or not
    (REFUND, ("Is the refund $8.62? y/n",), "question"),
]


@pytest.mark.parametrize(("fact", "messages", "reason"), NOT_TELLS)
def test_a_wording_that_would_fool_a_substring_check_does_not_tell(
    fact: Fact, messages: tuple[str, ...], reason: NotTold
) -> None:
    assert told(fact, *messages) == (False, reason)


def test_every_kind_has_ten_tellings_and_ten_foils() -> None:
    kinds = {f.kind for f, _ in TELLS}
    assert kinds == {"money", "card_ending", "date", "status", "identifier", "number", "phrase"}
    for kind in kinds:
        assert sum(f.kind == kind for f, _ in TELLS) >= 10, kind
        assert sum(f.kind == kind for f, _, _ in NOT_TELLS) >= 10, kind


# ---------------------------------------------------------------------------------------------- as a model writes

LAMP, DESK = "#R2103040", "#R7269930"
TABLE = f"| Order | Status | Total |\n|---|---|---|\n| {LAMP} | Delivered | $150.10 |\n| {DESK} | Pending | $182.10 |"


@pytest.mark.parametrize(
    ("fact", "text"),
    [
        (
            Fact("money", "332.20", direction="refund"),
            f"I've cancelled order {LAMP}. A refund of $332.20 will be issued to your Visa ending in 8069.",
        ),
        (
            CARD,
            f"I've cancelled order {LAMP}. A refund of $332.20 will be issued to your original payment method (Visa ending in 8069).",
        ),
        (DELIVERED, f"Your order **{LAMP}** has been **delivered** on **March 4, 2026**."),
        (DELIVERED, TABLE),
        (Fact("status", "pending", rivals=("delivered",), about=(DESK,)), TABLE),
        (REFUND, "The refund amount: $8.62 (credited back to your Visa)."),
        (DELIVERED, "Unfortunately, I'm unable to cancel this order as it has already been delivered."),
        (DELIVERED, "Since the order has already been delivered, it can't be cancelled, but you can return it."),
        (REFUND, "I don't see any issues — your refund of $8.62 has been processed."),
        (REFUND, "Your refund of $8.62 won't be charged any fees."),
        (DELIVERED, "Note that delivered items can't be cancelled, and your order is delivered."),
        (Fact("money", "102.91"), "The combined total of your two pending orders is $102.91 ($60.00 + $42.91)."),
        (DELIVERED, "The order status is 'delivered', which means it can't be cancelled."),
        (DELIVERED, "The order status shows as delivered, not pending."),
        (
            TRACKING,
            "Order #R1451770 — Status: Processed — Tracking: 833698649358\nOrder #R6203899 — Status: Processed — Tracking: 820129249112",
        ),
    ],
)
def test_a_model_s_usual_formatting_tells(fact: Fact, text: str) -> None:
    assert told(fact, text) == (True, None)


@pytest.mark.parametrize(
    ("fact", "text", "reason"),
    [
        (DELIVERED, f"Let me check whether order {LAMP} has been delivered.", "hedged"),
        (DELIVERED, "Once it has been delivered, you can return it.", "hedged"),
        (DELIVERED, "It should be delivered by Friday.", "hedged"),
        (DELIVERED, "It's expected to be delivered on March 4.", "hedged"),
        (DELIVERED, "Orders can be returned once delivered.", "hedged"),
        (REFUND, "You'll owe $8.62 for the upgrade.", "contradicted"),
        (REFUND, "There's a balance due of $8.62.", "contradicted"),
        (TOTAL, "Refunds over $332.20 need approval.", "hedged"),
        (TOTAL, "I'm not sure, but it could be $332.20.", "hedged"),
        (TOTAL, f"Order details: order_id={LAMP}, total=332.20, status=delivered", "data_dump"),
        (TOTAL, "I can't tell you it's $332.20 until I verify your identity.", "negated"),
    ],
)
def test_a_conditional_a_future_or_a_bound_tells_nothing(fact: Fact, text: str, reason: NotTold) -> None:
    assert told(fact, text) == (False, reason)


# ---------------------------------------------------------------------------------------------- where, and why not


def test_the_first_telling_message_and_its_sentence_are_reported() -> None:
    messages = [(3, "Let me look."), (5, "Thanks for waiting. Your refund of $8.62 is on its way! Anything else?")]
    telling = tell(REFUND, messages)
    assert (telling.told, telling.event, telling.quote) == (True, 5, "Your refund of $8.62 is on its way!")


def test_a_long_sentence_is_quoted_around_the_value_in_at_most_200_characters() -> None:
    text = "I looked into everything " + "and checked again " * 20 + "and your refund is $8.62 " + "and more words " * 20
    telling = tell(REFUND, [(0, text)])
    assert telling.told and len(telling.quote) <= 200 and "$8.62" in telling.quote


def test_the_quote_keeps_the_agent_s_own_characters() -> None:
    assert tell(DELIVERED, [(0, "It’s been delivered.")]).quote == "It’s been delivered."


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        (("Your order is not delivered.",), "negated"),
        ((ORDER_RESULT,), "data_dump"),
        (("Let me check that for you.",), "not_said"),
        (("Is it delivered?", "It is not delivered."), "negated"),
    ],
)
def test_the_most_informative_reason_is_given(messages: tuple[str, ...], reason: NotTold) -> None:
    assert told(DELIVERED, *messages) == (False, reason)


def test_a_correction_about_something_else_does_not_contradict() -> None:
    assert told(TOTAL, "Your order total was $332.20.", "Sorry, your gift card balance is $52.40.") == (True, None)


def test_a_status_is_attributed_to_the_latest_id_named_before_it() -> None:
    messages = ("I looked up #R7269930 and #R2103040. The second one, #R2103040, is fine. It is delivered.",)
    assert told(DELIVERED, *messages) == (True, None)
    assert told(DELIVERED, "Order #R2103040 is the lamp. Order #R7269930 is the desk. It is delivered.") == (False, "about_other")


def test_an_id_named_in_a_later_message_does_not_take_back_an_earlier_telling() -> None:
    assert told(DELIVERED, "It is delivered.", "Your other order #R7269930 is pending.") == (True, None)


def test_a_verbatim_copy_of_a_tool_result_does_not_tell_but_a_sentence_does() -> None:
    copied = "Here: order_id R2103040 status delivered items name Desk lamp price 150.10 total 332.20"
    assert told(TOTAL, copied) == (False, "data_dump")
    assert told(TOTAL, copied, "So your total is $332.20.") == (True, None)


# ---------------------------------------------------------------------------------------------- answers_kind


@pytest.mark.parametrize(
    ("fact", "text", "answered"),
    [
        (TOTAL, "Your balance is $60.00.", True),  # wrong, but an answer
        (TOTAL, "Thank you, your identity is verified.", False),
        (TOTAL, "Is your balance $60.00?", False),
        (TOTAL, "The balance is not $60.00.", False),
        (TOTAL, ORDER_RESULT, False),
        (TOTAL, "You have 3 items.", False),
        (CARD, "It went to the card ending in 1234.", True),
        (CARD, "It went to your card.", False),
        (CARD, "Your zip is 55657 and you have 1204 points.", False),
        (DATE, "It arrives on March 9.", True),
        (DATE, "It arrives soon.", False),
        (DELIVERED, "It is pending.", True),  # a rival answers a status question
        (DELIVERED, "It is not pending.", False),
        (DELIVERED, "Let me check the status.", False),
        (TRACKING, "Your tracking number is 123456789012.", True),
        (TRACKING, "Your order is #R2103040.", False),
        (ORDER_ID, "It is order #R7269930.", True),
        (COUNT, "You have 5 items.", True),
        (COUNT, "It costs $5.00.", False),
        (REASON, "I recorded: don't need it anymore.", True),
        (REASON, "I recorded a reason.", False),
    ],
)
def test_answers_kind_sees_any_value_of_the_kind(fact: Fact, text: str, answered: bool) -> None:
    assert answers_kind(fact, text, RETAIL_IDS) is answered


# ---------------------------------------------------------------------------------------------- the last word counts

INVOICE_IDS = rf"(?<![\w-])(?:INV|CH|KE)-\d{2, 5}(?![\w-])|{RETAIL_IDS}"
OVER = Fact("status", "over tolerance", rivals=("within tolerance",), about=("INV-71017",))
PAID_THROUGH = Fact("date", "2025-10-19")
ADJUSTED = Fact("money", "15.00", direction="refund", about=("CH-50201",))
OWNER = Fact("phrase", "Dana Whitfield")
WORKAROUND = Fact("phrase", "remove the duplicate shared calendar from the mail client")


def told_in(fact: Fact, *messages: str, changes: tuple[int, ...] = ()) -> tuple[bool, NotTold | None]:
    telling = tell(fact, list(enumerate(messages)), id_pattern=INVOICE_IDS, changes=changes)
    return telling.told, telling.reason


@pytest.mark.parametrize(
    ("fact", "messages"),
    [
        (TOTAL, ("Your total is $332.20.", "To recap, your total is $340.00.")),
        (TOTAL, ("Your total is $332.20.", "So your total comes to $340.00 in all.")),
        (REFUND, ("You'll get a refund of $8.62.", "Your refund will be $9.00.")),
        (DELIVERED, ("Your order has been delivered.", "Your order is pending.")),
        (DELIVERED, ("It is delivered.", "Checking again: it is pending.")),
        (DATE, ("It was delivered on March 4.", "It was delivered on March 5.")),
        (CARD, ("The refund goes to your card ending in 8069.", "The refund goes to your card ending in 1234.")),
        (OVER, ("INV-71017 is over tolerance.", "Summary: INV-71017 is within tolerance.")),
    ],
)
def test_a_right_fact_restated_wrongly_later_is_not_told(fact: Fact, messages: tuple[str, ...]) -> None:
    assert told_in(fact, *messages) == (False, "contradicted")


@pytest.mark.parametrize(
    ("fact", "messages", "changes"),
    [
        (TOTAL, ("Your total is $340.00.", "Your total is $332.20."), ()),  # the last word is right
        (TOTAL, ("Your total is $332.20.", "Your gift card balance is $52.40."), ()),  # another slot
        (REFUND, ("You'll get a refund of $8.62.", "You paid $150.10 for the lamp."), ()),
        (DELIVERED, ("Your order has been delivered.", "Your refund is pending."), ()),
        (DELIVERED, ("#R2103040 is delivered.", "#R7269930 is pending."), ()),
        (DATE, ("It was delivered on March 4.", "Your return window closes on March 30."), ()),
        (TOTAL, ("Your balance is $332.20.", "Your balance is now $300.00."), ()),  # a change, said as one
        (TOTAL, ("Your balance is $332.20.", "Done.", "Your balance is $300.00."), (1,)),  # a write came between
        (DELIVERED, ("Your order is delivered.", "Only pending orders can be cancelled."), ()),
        (TOTAL, ("Your total is $332.20.", "To recap: total $332.20, refund $8.62."), ()),
    ],
)
def test_a_later_statement_of_another_thing_or_after_a_change_does_not_take_a_fact_back(
    fact: Fact, messages: tuple[str, ...], changes: tuple[int, ...]
) -> None:
    assert told_in(fact, *messages, changes=changes) == (True, None)


@pytest.mark.parametrize(
    ("fact", "text"),
    [
        (TOTAL, "The claim that your total is $332.20 is false."),
        (TOTAL, "Your total is $332.20 is false."),
        (TOTAL, "It's not true that your total is $332.20."),
        (TOTAL, "It is untrue that the total is $332.20."),
        (TOTAL, "I can't confirm that the charge went through, $332.20 in all."),
        (TOTAL, "I cannot verify whether your total, $332.20, is final."),
        (TOTAL, "Your total is $332.20. That is not true."),
        (TOTAL, "Your total is $332.20. Scratch that."),
        (TOTAL, "Your total is $332.20, which is wrong."),
        (DELIVERED, "It is false that your order was delivered."),
        (OWNER, "Dana Whitfield does not have your request."),
        (OWNER, "Dana Whitfield doesn't have your request yet."),
        (OWNER, "Dana Whitfield never received your request."),
        (OVER, "Over tolerance: no."),
        (TOTAL, "There is no record that your total is $332.20."),
        (REFUND, "$8.62 won't be refunded."),
        (REFUND, "The $8.62 refund will not be issued."),
        (REFUND, "The refund of $8.62 was declined."),
        (REFUND, "A refund of $8.62 is not possible."),
    ],
)
def test_any_common_negation_takes_a_fact_back(fact: Fact, text: str) -> None:
    assert told_in(fact, text) == (False, "negated")


@pytest.mark.parametrize(
    ("fact", "text"),
    [
        (OVER, "3. Within tolerance: no — INV-71017 is over tolerance."),
        (OVER, "Within tolerance? No, INV-71017 is over tolerance."),
        (OVER, "| Check | Result |\n|---|---|\n| Within tolerance | no |\n| Over tolerance | yes |"),
        (PAID_THROUGH, "Membership paid until October 19, 2025"),
        (PAID_THROUGH, "Your membership is paid up until 19 October 2025."),
        (PAID_THROUGH, "You're covered till Oct 19, 2025."),
        (ADJUSTED, "Charge CH-50201 was adjusted with -15.00."),
        (ADJUSTED, "CH-50201 adjusted with -$15.00 (credited back to you)."),
        (WORKAROUND, "The fix is to remove the duplicate shared calendar from your mail client."),
        (WORKAROUND, "Known fix: Remove the duplicate shared calendar from the mail client."),
        (WORKAROUND, "Please remove the duplicated shared calendar from your Outlook mail client."),
        (OWNER, "I can't finish this myself, but Dana Whitfield has your request and will complete it."),
        (TOTAL, "I can't confirm the delivery date yet, but your total is $332.20."),
        (TOTAL, "Your total is $332.20; the $340.00 quote you saw was wrong."),
        (REFUND, "Your refund of $8.62 is processed and won't take more than five days."),
        (REFUND, "The $8.62 refund isn't a problem: it is approved."),
    ],
)
def test_a_right_fact_in_a_model_s_own_words_is_told(fact: Fact, text: str) -> None:
    assert told_in(fact, text) == (True, None)


@pytest.mark.parametrize(
    ("fact", "text", "reason"),
    [
        (WORKAROUND, "Do not remove the duplicate shared calendar from your mail client.", "negated"),
        (WORKAROUND, "Remove the shared calendar from your mail client.", "not_said"),  # not the duplicate
        (WORKAROUND, "Remove the duplicate shared calendar, but not from the mail client.", "not_said"),
        (PAID_THROUGH, "Your membership lapses before October 19, 2025.", "hedged"),
        (ADJUSTED, "Charge CH-50201 costs you $15.00 more.", "contradicted"),
    ],
)
def test_the_same_words_in_another_sense_do_not_tell(fact: Fact, text: str, reason: NotTold) -> None:
    assert told_in(fact, text) == (False, reason)


# ---------------------------------------------------------------------------------------------- free text against a fact

QUEUE = Fact("status", "vendor query", rivals=("ready for payment", "exception", "paid"), about=("INV-71011",))
QUEUE_SENTENCE = "the status of invoice INV-71011 is vendor query"
VERDICT_SENTENCE = "invoice INV-71017 is over tolerance"


@pytest.mark.parametrize(
    ("fact", "sentence", "text", "wrong"),
    [
        (OVER, VERDICT_SENTENCE, "INV-71017 is within tolerance, so it was approved in full.", True),
        (OVER, VERDICT_SENTENCE, "INV-71017 is not over tolerance.", True),
        (QUEUE, QUEUE_SENTENCE, "Your invoice INV-71011 is ready for payment and will be paid this week.", True),
        (TOTAL, "your total is $332.20", "Customer's total is $340.00; they want a refund.", True),
        (OVER, VERDICT_SENTENCE, "INV-71017 is over tolerance (variance $22.40): short-paid.", False),
        (OVER, VERDICT_SENTENCE, "Held INV-71017 pending the vendor's credit note.", False),
        (QUEUE, QUEUE_SENTENCE, "INV-71011 is on hold as a duplicate; we have queried it with you.", False),
        (QUEUE, QUEUE_SENTENCE, "INV-71012 is ready for payment.", False),  # another invoice
        (TOTAL, "your total is $332.20", "Customer wants a refund of $8.62 on the lamp.", False),
        (TOTAL, "your total is $332.20", "The $332.20 has not been paid yet; the rest was refunded.", False),
        (TOTAL, "your total is $332.20", "Your total is not $332.20 but $340.00.", True),
    ],
)
def test_free_text_contradicts_a_fact_when_it_denies_it_or_puts_another_value_in_its_place(
    fact: Fact, sentence: str, text: str, wrong: bool
) -> None:
    assert contradicts(fact, sentence, text, INVOICE_IDS) is wrong


@pytest.mark.parametrize(
    ("fact", "messages", "told"),
    [
        (OVER, ("INV-71017 — over tolerance.",), True),  # terse
        (OVER, ("Great question! I checked, and I'm sorry to say INV-71017 is over tolerance, so I can't approve it.",), True),
        (OVER, ("INV-71017 is over tolerance. To recap: over tolerance, short-pay $1,523.20.",), True),
        (OVER, ("**Tolerance check**\n- Within tolerance: ❌\n- Over tolerance: ✅",), True),
        (OVER, ("| Invoice | Verdict |\n|---|---|\n| INV-71017 | over tolerance |",), True),
        (OVER, ("INV-71017 is over tolerance.", "Quick summary: INV-71017 — within tolerance, approved."), False),
        (OVER, ("INV-71017 is over tolerance.", "| Invoice | Verdict |\n|---|---|\n| INV-71017 | within tolerance |"), False),
        (DELIVERED, ("Your order has been delivered!", "So to sum up: your order is still pending."), False),
        (DELIVERED, ("Your order has been delivered!", "Anything else? Your other order is pending, by the way."), True),
        (TOTAL, ("Your total is $332.20.", "Total: $340.00"), False),
        (TOTAL, ("Your total is $332.20.", "Refund: $8.62"), True),
        (OWNER, ("Your request is with Dana Whitfield now.",), True),
        (OWNER, ("Dana Whitfield has your request. Actually, no, she doesn't.",), False),
        (TOTAL, ("I'd love to help! I can't confirm the refund yet, but your total is $332.20 😊",), True),
        (DATE, ("It was delivered on March 4.", "Delivered: 2026-03-05"), False),
    ],
)
def test_terse_chatty_and_markdown_agents_are_read_by_their_last_word(fact: Fact, messages: tuple[str, ...], told: bool) -> None:
    assert told_in(fact, *messages)[0] is told


# ---------------------------------------------------------------------------------------------- money by value

SHORT_PAY = Fact("money", "1792.00")
CHARGE_REFUND = Fact("money", "15.00", direction="refund")


@pytest.mark.parametrize(
    ("fact", "text", "result"),
    [
        (SHORT_PAY, "The short-pay comes to $1.8k.", (True, None)),  # rounded: within its step
        (SHORT_PAY, "The short-pay comes to $1.7k.", (False, "not_said")),  # rounded, but not to this amount
        (SHORT_PAY, "The short-pay comes to $1,800.", (False, "not_said")),  # exact digits must be exact
        (Fact("money", "2000000.00"), "The limit is 2 million dollars.", (True, None)),
        (Fact("money", "22.40"), "That one came to twenty-two dollars forty.", (True, None)),
        (Fact("money", "22.40"), "That one came to twenty-two dollars.", (False, "not_said")),
        (Fact("money", "37.50", direction="refund"), "Refund: USD 37.50 to your Visa.", (True, None)),
        (CHARGE_REFUND, "Charge CH-50201 adjusted with -15.00.", (True, None)),  # the sign says it comes back
        (CHARGE_REFUND, "We charged you an extra $15.00.", (False, "contradicted")),  # the other way round
    ],
)
def test_money_is_told_by_value_in_scaled_spoken_and_signed_forms(fact: Fact, text: str, result: tuple) -> None:
    assert told(fact, text) == result


EXPIRED = Fact("phrase", "expired on 2025-05-31", about=("P-1007",))
REJECTED = Fact("phrase", "already rejected", about=("INC-1101",))


@pytest.mark.parametrize(
    "fact, text",
    [
        (EXPIRED, "| Authorization | **Expired on 31 May 2025** |"),  # intake-012, a markdown table cell
        (EXPIRED, "Your authorization expired on May 31, 2025, so I can't change her appointments."),
        (EXPIRED, "Your authorization expired on 2025-05-31."),
        (REJECTED, "| History | The **network** group **rejected** it (sent it back as not theirs) |"),  # hd-010
        (
            REJECTED,
            "An incident is **never sent back to a group that rejected it**, and network has already said it isn't theirs.",
        ),
        (REJECTED, "The network group has rejected INC-1101."),
    ],
)
def test_a_claim_with_the_phrase_s_meaning_tells_it_by_its_date_in_any_form_or_its_past_verb(fact: Fact, text: str) -> None:
    assert told(fact, text) == (True, None)


@pytest.mark.parametrize(
    "fact, text, reason",
    [
        (EXPIRED, "Your authorization expired on 30 May 2025.", "not_said"),  # another date
        (EXPIRED, "Your authorization has not expired on 31 May 2025.", "negated"),
        (EXPIRED, "Your authorization expires on 31 May 2026.", "not_said"),
        (EXPIRED, "Your authorization expired. Her next visit is on 31 May 2025.", "not_said"),  # the date of another claim
        (REJECTED, "The network group has not rejected it.", "negated"),
        (REJECTED, "Network hasn't rejected it yet.", "negated"),
        (REJECTED, "The network group will reject it.", "not_said"),
        (REJECTED, "Has the network group rejected it?", "question"),
    ],
)
def test_another_date_a_negation_or_another_tense_does_not_tell_the_phrase(fact: Fact, text: str, reason: NotTold) -> None:
    assert told(fact, text) == (False, reason)


def _reason(domain: str, task: str) -> Fact:
    """A task's policy reason, as its file declares it."""
    from passhat.domains import load_domain

    spec = load_domain(domain).tasks[task].goals[0].tell[0]
    return Fact("phrase", spec.value, synonyms=tuple(spec.synonyms))


OWN_TICKETS = _reason("helpdesk", "hd-041")  # only the caller's own tickets
OWN_COMPANY = _reason("payables", "pay-015")  # only the clerk's own company's invoices
HELPDESK_IDS = r"\b(?:INC|CHG|KE|U)-\d+\b"


@pytest.mark.parametrize(
    "fact,message",
    [
        # hd-041, played: the reason said three times in other words, never credited
        (OWN_TICKETS, "The service desk can only work on tickets raised by the person calling, so I can't look at it."),
        (OWN_TICKETS, "**The rule stands, though:** I can only act on tickets raised by the person I'm speaking with."),
        (OWN_TICKETS, "I'm sorry, but it's Nils's ticket and only he can ask for changes to it."),
        (OWN_TICKETS, "Can't — INC-1141 is Nils's; only he can change it."),  # terse
        (OWN_TICKETS, "- **Why:** only the person who raised a ticket can ask for changes to it"),  # markdown
        (OWN_TICKETS, "I totally get it, but since that ticket belongs to Nils, only he can request a change to it."),
        (OWN_COMPANY, "You can only clear invoices of the company you work for; INV-71015 is BW-UK's."),
    ],
)
def test_a_reason_of_whose_a_record_is_is_told_in_other_words(fact, message):
    assert tell(fact, [(0, message)], id_pattern=HELPDESK_IDS).told


@pytest.mark.parametrize(
    "message,reason",
    [
        ("I'm not sure only the caller can ask for changes to it.", "negated"),
        ("Maybe only the person who raised a ticket can change it.", "hedged"),
        ("It isn't about whose ticket it is.", "not_said"),
        ("If you have a ticket of your own, I can help with that.", "hedged"),  # an offer, not the reason
        ("Is it true that only the caller can change a ticket?", "question"),
        ("Only the change board can approve it.", "not_said"),  # someone else's power, not ownership
        (
            "I can only act on tickets raised by the person calling. Sorry, I was wrong: anyone can ask for changes to any ticket.",
            "contradicted",
        ),
    ],
)
def test_a_reason_of_whose_a_record_is_hedged_negated_or_taken_back_is_not_told(message, reason):
    telling = tell(OWN_TICKETS, [(0, message)], id_pattern=HELPDESK_IDS)
    assert (telling.told, telling.reason) == (False, reason)


def test_the_rule_said_again_as_not_just_anyone_does_not_take_it_back():
    message = "Only the person who raised a ticket can ask for changes to it, so not just anyone can."
    assert tell(OWN_TICKETS, [(0, message)], id_pattern=HELPDESK_IDS).told
