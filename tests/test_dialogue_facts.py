"""Whether an agent told the customer a fact, by meaning: each kind with the wordings a correct agent
uses (which must count) and the ones that would fool a substring check (which must not)."""

from __future__ import annotations

import pytest

from passhat.dialogue.facts import Fact, NotTold, answers_kind, tell

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
