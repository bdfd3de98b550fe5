"""The language layer under fact grading: values read by meaning, and the words around them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.dialogue import mentions
from passhat.dialogue.dumps import dump_spans
from passhat.dialogue.facts import Fact, tell
from passhat.dialogue.text import (
    clause_at,
    contrasted_at,
    hedged_at,
    is_offer,
    is_question,
    negated_at,
    sentences,
)
from passhat.dialogue.values import (
    card_endings_in,
    dates_in,
    money_in,
    names_date,
    names_identifier,
    names_phrase,
    names_street,
    names_time,
    numbers_in,
    same_amount,
    same_time,
    times_in,
)


def span_of(text: str, words: str) -> tuple[int, int]:
    start = text.index(words)
    return start, start + len(words)


# ---------------------------------------------------------------------------------------------- money


@pytest.mark.parametrize(
    ("text", "value", "currency"),
    [
        ("The total is $332.20.", "332.20", "USD"),
        ("The total is 332.20.", "332.20", None),
        ("The total is USD332.20.", "332.20", "USD"),
        ("The total is USD 332.20.", "332.20", "USD"),
        ("The total is 332.20 USD.", "332.20", "USD"),
        ("The total is US$332.20.", "332.20", "USD"),
        ("Le total est 332,20 $.", "332.20", "USD"),
        ("Le total est 332,20 €.", "332.20", "EUR"),
        ("The total is 1,204.50.", "1204.50", None),
        ("Der Betrag ist 1.204,50 €.", "1204.50", "EUR"),
        ("The total is $1204.5.", "1204.50", "USD"),
        ("The total is 332.20 dollars.", "332.20", "USD"),
        ("The total is 332 dollars and 20 cents.", "332.20", "USD"),
        ("The total is three hundred thirty-two dollars and twenty cents.", "332.20", "USD"),
        ("You get eight dollars and sixty-two cents back.", "8.62", "USD"),
        ("Your balance is fifty-two dollars and forty cents.", "52.40", "USD"),
        ("Difference: −$8.62", "8.62", "USD"),
        ("Difference: -8.62", "8.62", None),
        ("Difference: ($8.62)", "8.62", "USD"),
        ("It costs $50.", "50.00", "USD"),
        ("It costs a hundred dollars.", "100.00", "USD"),
        ("That is 60 cents.", "0.60", "USD"),
    ],
)
def test_money_is_read_in_every_usual_format(text: str, value: str, currency: str | None) -> None:
    [mention] = money_in(text)
    assert (mention.value, mention.currency) == (value, currency)
    assert text[mention.start : mention.end].strip(" .") != ""


@pytest.mark.parametrize(
    "text",
    [
        "You have 3 items in 2 orders.",  # bare integers are counts
        "Your card is card_1234.",
        "Order #R3042198 is on its way.",
        "Variant V-10233 is in stock.",
        "The zip code on file is 55657.",
        "Tracking number 833698649358.",
        "It arrives on 2026-03-04.",
        "It arrived on 03/04/2026.",
        "The courier comes at 10:30.",
        "The courier comes at 3.30 pm.",
        "It is rated 4.50 stars.",
        "Your discount is 12.50%.",
        "Version v1.20 fixed it.",
        "Your appointment is now on July 3, 2025, 10.00.",  # a clock after a date and a comma: no amount
    ],
)
def test_ids_counts_dates_and_times_are_no_money(text: str) -> None:
    assert money_in(text) == []


@pytest.mark.parametrize(
    ("text", "value", "step"),
    [
        ("The total is $1.8k.", "1800.00", "100"),
        ("That is 2 million dollars.", "2000000.00", "1000000"),
        ("That is two million dollars.", "2000000.00", None),  # in words, whole: exact
        ("The budget is $1.25M.", "1250000.00", "10000"),
        ("It is €3m.", "3000000.00", "1000000"),
        ("It came to twenty-two dollars forty.", "22.40", None),
        ("It came to twenty-two dollars forty, all told.", "22.40", None),
        ("Refund of USD 37.50.", "37.50", None),
        ("The total is about $1,800.", "1800.00", "100"),
        ("The total is roughly $1,792.40.", "1792.40", "0.1"),
        ("The total is $1,800.", "1800.00", None),  # plain digits are exact
    ],
)
def test_scaled_and_spoken_amounts_are_read_with_their_rounding(text: str, value: str, step: str | None) -> None:
    [mention] = money_in(text)
    assert (mention.value, mention.step) == (value, step)


@pytest.mark.parametrize(
    ("text", "amounts"),
    [
        ("We sold 2 million units.", []),  # a scaled count with no currency is no amount
        ("It weighs 1.8k grams.", []),
        ("It is twenty dollars, forty of them in fees.", ["20.00"]),  # a count after the dollars is no cents
        ("It is 5 dollars 3 items.", ["5.00"]),
    ],
)
def test_scaled_counts_and_numbers_after_dollars_are_no_amounts(text: str, amounts: list[str]) -> None:
    assert [m.value for m in money_in(text)] == amounts


@pytest.mark.parametrize(
    ("text", "stored", "same"),
    [
        ("$1.8k", "1792.00", True),  # within half a step of 100
        ("$1.8k", "1850.00", True),
        ("$1.8k", "1700.00", False),
        ("about $1,800", "1750.00", True),
        ("about $1,800", "1920.00", False),
        ("$1,800", "1792.00", False),  # exact when not rounded
        ("2 million dollars", "2000000.00", True),
        ("2 million dollars", "1000000.00", False),
        ("twenty-two dollars forty", "22.40", True),
        ("twenty-two dollars forty", "22.00", False),
    ],
)
def test_a_rounded_amount_is_any_amount_within_half_its_step(text: str, stored: str, same: bool) -> None:
    [mention] = money_in(text)
    assert same_amount(mention, stored) is same


@pytest.mark.parametrize(
    ("text", "direction"),
    [
        ("We will refund $50 to the card you paid with.", "refund"),  # the nearest cue decides
        ("You would have to pay $8.62.", "charge"),
        ("You'll get $8.62 back.", "refund"),
        ("$8.62 will be credited to your gift card.", "refund"),
        ("The new item is $8.62 cheaper.", "refund"),
        ("The new item costs $8.62 more.", "charge"),
        ("You will be charged an additional $8.62.", "charge"),
        ("Refund: $8.62", "refund"),
        ("Difference: −$8.62", "refund"),  # a minus with no cue is money back
        ("An extra −$8.62 will be charged.", "charge"),  # a cue outweighs the sign
        ("Charge CH-50201 adjusted with -15.00.", "refund"),  # beside a sign, "charge" is what is adjusted
        ("Your charge: −$15.00", "refund"),
        ("Charge CH-50201: $15.00", "charge"),  # without a sign, still a charge
        ("Your balance is $52.40.", None),
        ("I'll refund the $8.62 to your debit card.", "refund"),  # "debit card" is no charge cue
        ("The refund is more than $8.62.", "refund"),  # "more than" is no charge cue
        ("Refund $8.62 charge", None),  # as near as each other: no direction
        ("Refund due: **240.00 USD**", "refund"),  # "due" after a refund word says it is owed, not which way
        ("Credit owed: $8.62", "refund"),
        ("Waive the $15.00 late fee on charge CH-51301.", "refund"),  # a charge let go is money not taken
        ("The $15.00 late fee on charge CH-51301 stands.", "charge"),
        ("Amount due: $8.62", "charge"),  # after any other noun, "due" is still money the customer pays
        ("Balance due $8.62 on the refund form", "charge"),  # a refund word that "due" does not follow decides nothing
        ("Renew it for $79.00 from your club credit.", None),  # a credit paid from is a source, not money back
        ("We'll pay the $79.00 out of your store credit.", "charge"),
    ],
)
def test_direction_comes_from_the_nearest_cue_in_the_clause(text: str, direction: str | None) -> None:
    [mention] = money_in(text)
    assert mention.direction == direction


def test_a_cue_in_another_clause_does_not_give_direction() -> None:
    [first, second] = money_in("You paid $20.00, and your balance is $8.62.")
    assert (first.direction, second.direction) == ("charge", None)


def _us(amount: Decimal) -> str:
    return f"{amount:,.2f}"


def _eu(amount: Decimal) -> str:
    return f"{amount:,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".")


_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _words(n: int) -> str:
    """English words for 0 <= n < 1,000,000 (a test oracle, independent of the parser under test)."""
    if n < 20:
        return _UNITS[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _UNITS[n % 10] if n % 10 else "")
    if n < 1000:
        return _UNITS[n // 100] + " hundred" + (" " + _words(n % 100) if n % 100 else "")
    return _words(n // 1000) + " thousand" + (" " + _words(n % 1000) if n % 1000 else "")


_FORMATS = [
    lambda a: f"${_us(a)}",
    lambda a: f"USD{_us(a)}",
    lambda a: f"USD {_us(a)}",
    lambda a: f"{_us(a)} USD",
    lambda a: f"US${_us(a)}",
    lambda a: f"{_eu(a)} $",
    lambda a: f"{_us(a)}",
    lambda a: f"{_us(a)} dollars",
    lambda a: f"{int(a)} dollars and {int(a * 100) % 100} cents" if a % 1 else f"{int(a)} dollars",
    lambda a: f"{_words(int(a))} dollars and {_words(int(a * 100) % 100)} cents" if a % 1 else f"{_words(int(a))} dollars",
    lambda a: f"−${_us(a)}",
    lambda a: f"(${_us(a)})",
]
_CONTEXTS = ["Your refund of {} has been issued.", "{}", "Total: {}", "The order cost {}, shipped today.", "- {}\n- done"]


@settings(max_examples=150, deadline=None)
@given(
    cents=st.integers(min_value=1, max_value=99_999_999),
    render=st.sampled_from(_FORMATS),
    context=st.sampled_from(_CONTEXTS),
)
def test_any_amount_in_any_supported_format_round_trips(cents: int, render, context: str) -> None:
    amount = Decimal(cents) / 100
    text = context.format(render(amount))
    assert [Decimal(m.value) for m in money_in(text)] == [amount], text


_ID_LIKE = st.one_of(
    st.from_regex(r"\A#R\d{7}\Z"),
    st.from_regex(r"\Acard_\d{4}\Z"),
    st.from_regex(r"\AV-\d{5}\Z"),
    st.from_regex(r"\AC-\d{6}\Z"),
    st.from_regex(r"\A\d{12}\Z"),
    st.from_regex(r"\A\d{5}\Z"),
    st.from_regex(r"\A20\d\d-[01]\d-[0-2]\d\Z"),
    st.from_regex(r"\A[0-2]\d:[0-5]\d\Z"),
)
_WORDS = st.lists(st.sampled_from(["your", "order", "is", "the", "zip", "number", "on", "at", "and", "item"]), max_size=5)


@settings(max_examples=150, deadline=None)
@given(ident=_ID_LIKE, before=_WORDS, after=_WORDS, end=st.sampled_from(["", ".", "!", ",", "?"]))
def test_ids_embedded_in_any_words_are_never_money(ident: str, before: list[str], after: list[str], end: str) -> None:
    text = " ".join([*before, ident + end, *after])
    assert money_in(text) == [], text


# ---------------------------------------------------------------------------------------------- card endings, dates, numbers


@pytest.mark.parametrize(
    "text",
    [
        "Refunded to 8069.",
        "the card ending in 8069",
        "the card that ends with 8069",
        "your card x8069",
        "your card X-8069",
        "your Amex-8069",
        "your Visa 8069",
        "card ****8069",
        "card •••• 8069",
        "last four 8069",
        "the last 4 digits are 8069",
        "XXXX-XXXX-XXXX-8069",
    ],
)
def test_card_endings_are_read_in_every_usual_form(text: str) -> None:
    assert [m.value for m in card_endings_in(text)] == ["8069"]


@pytest.mark.parametrize(
    "text",
    [
        "Your payment method card_8069 is on file.",  # an id, not an ending
        "Your zip is 18069.",
        "That costs $8069.",
        "It arrived on March 4, 2026.",
        "Tracking: 8336 9864 8069",
        "That was in 2024.",
    ],
)
def test_ids_amounts_years_and_digit_groups_are_no_card_ending(text: str) -> None:
    assert card_endings_in(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("It arrives 2026-03-04.", "2026-03-04"),
        ("It arrives March 4, 2026.", "2026-03-04"),
        ("It arrives 4 March 2026.", "2026-03-04"),
        ("It arrives Mar 4.", "--03-04"),
        ("It arrives Mar. 4, 2026.", "2026-03-04"),
        ("It arrives March 4th.", "--03-04"),
        ("It arrives 03/04/2026.", "2026-03-04"),  # US month/day
        ("It arrives on the 4th of March.", "--03-04"),
        ("It arrives on the fourth of March.", "--03-04"),
        ("It arrives Wednesday, March 4th, 2026.", "2026-03-04"),
    ],
)
def test_dates_are_read_to_iso(text: str, value: str) -> None:
    assert [m.value for m in dates_in(text)] == [value]


@pytest.mark.parametrize("text", ["Feb 30 is no day.", "You may 3 times retry.", "In May 2026 we opened.", "Order #R2026034."])
def test_impossible_or_partial_dates_are_no_dates(text: str) -> None:
    assert dates_in(text) == []


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("You have 3 items.", ["3"]),
        ("You have three items.", ["3"]),
        ("You have twenty-one items in 2 orders.", ["21", "2"]),
        ("It holds 1,204 units.", ["1204"]),
        ("Order #R3042198 via card_1234 and V-10233.", []),
        ("It cost $3.00 on March 3.", []),
        ("Pick the one ending in 8069.", ["8069"]),  # "the one" is no number
    ],
)
def test_plain_numbers_exclude_ids_money_and_dates(text: str, values: list[str]) -> None:
    assert [m.value for m in numbers_in(text)] == values


# ---------------------------------------------------------------------------------------------- ids, streets, phrases


@pytest.mark.parametrize(
    ("text", "value", "named"),
    [
        ("Tracking 833698649358.", "833698649358", "833698649358"),
        ("Tracking 8336 9864 9358.", "833698649358", "8336 9864 9358"),
        ("Tracking 8336-9864-9358.", "833698649358", "8336-9864-9358"),
        ("Order R3042198 shipped.", "#R3042198", "R3042198"),
        ("Order #R3042198 shipped.", "#R3042198", "#R3042198"),
        ("Your order number 3042198 shipped.", "#R3042198", "3042198"),
        ("order r3042198 shipped", "#R3042198", "r3042198"),
        ("Customer 167498 is verified.", "C-167498", "167498"),
        ("Customer C-167498 is verified.", "C-167498", "C-167498"),
        ("Invoice INV\u201171014 is held.", "INV-71014", "INV\u201171014"),  # a non-breaking hyphen
        ("Invoice inv 71014 is held.", "INV-71014", "inv 71014"),
        ("Call (413) 555-0108.", "4135550108", "(413) 555-0108"),
        ("Call 413.555.0108.", "4135550108", "413.555.0108"),
        ("Call +1 413 555 0108.", "4135550108", "413 555 0108"),
    ],
)
def test_ids_are_named_in_any_usual_form(text: str, value: str, named: str) -> None:
    assert [text[s:e] for s, e in names_identifier(text, value)] == [named]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Tracking 1833698649358.", "833698649358"),
        ("Tracking 833698649359.", "833698649358"),
        ("Order #R30421985 shipped.", "#R3042198"),
        ("Order #R3042199 shipped.", "#R3042198"),
        ("Product P-001 is in stock.", "P-0012"),
        ("Order 042198 shipped.", "#R3042198"),
    ],
)
def test_an_id_is_never_named_inside_a_longer_token_or_by_a_neighbour(text: str, value: str) -> None:
    assert names_identifier(text, value) == []


@settings(max_examples=100, deadline=None)
@given(digits=st.from_regex(r"\A[1-9]\d{6}\Z"), before=_WORDS, after=_WORDS, end=st.sampled_from(["", ".", ",", "?"]))
def test_an_order_id_is_found_alone_and_never_inside_a_longer_one(
    digits: str, before: list[str], after: list[str], end: str
) -> None:
    value = f"#R{digits}"
    named = " ".join([*before, value + end, *after])
    longer = " ".join([*before, f"#R{digits}7" + end, *after])
    assert len(names_identifier(named, value)) == 1 and names_identifier(longer, value) == []


@pytest.mark.parametrize(
    "text",
    [
        "Ship to 2210 Saltmarsh Ln.",
        "Ship to 2210 Saltmarsh Ln",
        "ship to 2210 saltmarsh lane",
        "Ship to 2210 SALTMARSH LANE, please",
    ],
)
def test_streets_are_named_with_abbreviations(text: str) -> None:
    assert len(names_street(text, "2210 Saltmarsh Lane")) == 1


@pytest.mark.parametrize("text", ["Ship to 2211 Saltmarsh Lane.", "Ship to 2210 Saltmarsh Road.", "Ship to 2210 Saltmarsh."])
def test_another_number_or_street_type_is_another_street(text: str) -> None:
    assert names_street(text, "2210 Saltmarsh Lane") == []


@pytest.mark.parametrize("unit", ["Apt 9", "Apartment 9", "#9", "Unit 9", "Apt. #9"])
def test_unit_designators_are_interchangeable(unit: str) -> None:
    assert names_street(f"It goes to 12 N Main St {unit} today.", "12 North Main Street, Apt 9")


def test_another_unit_is_another_street_line() -> None:
    assert names_street("It goes to 12 N Main St Apt 19.", "12 North Main Street, Apt 9") == []


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("It has been delivered.", "delivered"),
        ("Delivered.", "delivered"),
        ("It was canceled yesterday.", "cancelled"),
        ("Reason: 'No-longer needed'", "no longer needed"),
        ("The items are packed.", "items"),
        ("The item is packed.", "items"),
        ("Two refunds were issued.", "refund"),
        ("The visit is at 11:00 on Monday.", "11:00"),
    ],
)
def test_phrases_match_with_case_punctuation_and_light_inflection(text: str, phrase: str) -> None:
    assert names_phrase(text, phrase)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("We will deliver it.", "delivered"),
        ("It is undelivered.", "delivered"),
        ("Delivery is late.", "delivered"),
        ("I no longer need it.", "no longer needed"),
        ("The visit is at 11:30.", "11:00"),
    ],
)
def test_another_word_form_is_another_phrase(text: str, phrase: str) -> None:
    assert names_phrase(text, phrase) == []


# ---------------------------------------------------------------------------------------------- sentences and clauses


def test_sentences_end_at_stops_newlines_bullets_and_numbered_items() -> None:
    text = "Hi Ana. Order #R1 was delivered on Mar. 4, 2026! Anything else?\n- Total: $332.20\n1. First\n2. Second 1) a 2) b"
    said = [text[s:e] for s, e in sentences(text)]
    assert said == [
        "Hi Ana.",
        "Order #R1 was delivered on Mar. 4, 2026!",
        "Anything else?",
        "Total: $332.20",
        "First",
        "Second",
        "a",
        "b",
    ]


def test_a_decimal_or_an_address_abbreviation_does_not_end_a_sentence() -> None:
    text = "Refund $8.62 to 2210 Saltmarsh Ln. Apt 9 today. Thanks"
    assert [text[s:e] for s, e in sentences(text)] == ["Refund $8.62 to 2210 Saltmarsh Ln. Apt 9 today.", "Thanks"]


@pytest.mark.parametrize(
    ("text", "word", "clause"),
    [
        ("I can't cancel it because it was delivered.", "delivered", "because it was delivered."),
        ("It was delivered, so it cannot be cancelled.", "cancelled", "so it cannot be cancelled."),
        ("Total: $332.20", "$332.20", "$332.20"),
        ("It costs $1,204.50 in all", "in all", "It costs $1,204.50 in all"),
    ],
)
def test_clauses_split_at_punctuation_and_subordinating_words(text: str, word: str, clause: str) -> None:
    start, end = clause_at(text, text.index(word))
    assert text[start:end].strip() == clause


# ---------------------------------------------------------------------------------------------- negation, contrast, hedges, questions


@pytest.mark.parametrize(
    ("text", "mention"),
    [
        ("Your order is not delivered.", "delivered"),
        ("It isn't delivered.", "delivered"),
        ("It hasn’t been delivered yet.", "delivered"),
        ("It has not yet been delivered.", "delivered"),
        ("The order is not pending.", "pending"),
        ("It was never delivered.", "delivered"),
        ("That is not $332.20.", "$332.20"),
        ("The refund is not 332.20.", "332.20"),
        ("332.20 is not correct.", "332.20"),
        ("332.20 isn't the amount.", "332.20"),
        ("It is neither pending nor delivered.", "pending"),
        ("It is neither pending nor delivered.", "delivered"),
        ("There is no refund of $8.62.", "$8.62"),
        ("I can't refund the $8.62.", "$8.62"),
        ("It's not a delivered order.", "delivered"),
        ("I cannot confirm that it's delivered.", "delivered"),
        ("Your order is delivered, not pending.", "pending"),
        ("It isnt delivered.", "delivered"),
    ],
)
def test_a_governing_negation_negates(text: str, mention: str) -> None:
    assert negated_at(text, *span_of(text, mention))


@pytest.mark.parametrize(
    ("text", "mention"),
    [
        ("I can't cancel it because it was delivered.", "delivered"),
        ("It cannot be cancelled since it has been delivered.", "delivered"),
        ("That order was already delivered, and only pending orders can be cancelled.", "pending"),
        ("I'm sorry, I can't cancel a delivered order.", "delivered"),
        ("I can't cancel an order that's been delivered.", "delivered"),
        ("The reason 'no longer needed' is on file.", "no longer needed"),
        ("It is not only delivered but also signed for.", "delivered"),
        ("No, it was delivered.", "delivered"),
        ("No problem, it was delivered.", "delivered"),
        ("I couldn't find a problem: your refund is $8.62.", "$8.62"),
        ('Only the reasons "no longer needed" or "ordered by mistake" work.', "ordered by mistake"),  # a quoted "no"
    ],
)
def test_a_negation_elsewhere_does_not_negate(text: str, mention: str) -> None:
    assert not negated_at(text, *span_of(text, mention))


@pytest.mark.parametrize(
    ("text", "mention", "contrasted"),
    [
        ("I can exchange it instead of cancelling it.", "cancelling", True),
        ("We can offer an exchange rather than a return.", "return", True),
        ("A refund as opposed to store credit.", "store credit", True),
        ("Store credit in place of a refund.", "refund", True),
        ("Any method other than PayPal.", "PayPal", True),
        ("It's not a refund but an exchange.", "refund", True),
        ("It's not a refund but an exchange.", "exchange", False),
        ("We can do it without cancelling.", "cancelling", True),
        ("I have cancelled the order.", "cancelled", False),
        ("Other than that, your refund is $8.62.", "$8.62", False),
    ],
)
def test_what_is_set_aside_is_contrasted(text: str, mention: str, contrasted: bool) -> None:
    assert contrasted_at(text, *span_of(text, mention)) is contrasted


@pytest.mark.parametrize(
    ("text", "mention", "hedged"),
    [
        ("It is either $332.20 or $340.00.", "$332.20", True),
        ("It is either $332.20 or $340.00.", "$340.00", True),
        ("It is pending or delivered.", "pending", True),
        ("It comes to about $332.20.", "$332.20", True),
        ("It comes to around $332.20.", "$332.20", True),
        ("It is roughly $332.20.", "$332.20", True),
        ("It is maybe delivered.", "delivered", True),
        ("I think it was delivered.", "delivered", True),
        ("I'm writing about order #R1244351, which is delivered.", "#R1244351", False),
        ("Your refund is $8.62, or you can pick store credit.", "$8.62", False),
        ("It comes to $332.20.", "$332.20", False),
        ("It arrives in about 5 days. The refund is $8.62.", "$8.62", False),
        ("Refunds over $332.20 need approval.", "$332.20", True),
        ("Let me check whether it has been delivered.", "delivered", True),
        ("Once it is delivered, you can return it.", "delivered", True),
        ("I can cancel it unless it's delivered.", "delivered", True),
        ("When I checked, it was delivered.", "delivered", False),
        ("If you like, I can refund $8.62 today.", "$8.62", False),
    ],
)
def test_alternatives_and_estimates_are_hedged(text: str, mention: str, hedged: bool) -> None:
    assert hedged_at(text, *span_of(text, mention)) is hedged


@pytest.mark.parametrize(
    ("text", "mention", "asked"),
    [
        ("Is your order delivered?", "delivered", True),
        ("Your order was delivered, right?", "delivered", True),
        ("Could you confirm the refund of $8.62?", "$8.62", True),
        ("Your refund is $8.62, is there anything else?", "$8.62", False),
        ("Your refund is $8.62. Anything else?", "$8.62", False),
        ("Your order was delivered on March 4 — can I help with anything else?", "delivered", False),
        ("Your order was delivered.", "delivered", False),
    ],
)
def test_a_question_asks_only_in_its_own_clauses(text: str, mention: str, asked: bool) -> None:
    assert is_question(text, *span_of(text, mention)) is asked


@pytest.mark.parametrize(
    ("text", "mention", "offered"),
    [
        ("Shall I refund $8.62 to your Visa?", "$8.62", True),
        ("Would you like me to refund $8.62?", "$8.62", True),
        ("Shall I check whether it was delivered?", "delivered", False),
        ("Is the refund $8.62?", "$8.62", False),
    ],
)
def test_an_offer_states_its_terms(text: str, mention: str, offered: bool) -> None:
    assert is_offer(text, *span_of(text, mention)) is offered


# ---------------------------------------------------------------------------------------------- dumps

_TOOL_RESULT = '{"order_id": "#R2103040", "status": "delivered", "items": [{"name": "Desk lamp", "price": 150.1}], "total": 332.2, "payment_method_id": "card_8069"}'
_RETAIL_IDS = r"(?:#R\d{7}|(?<![\w-])(?:C-\d{6}|P-\d{3}|V-\d{5}|(?:card|gift|paypal)_\d{4,6}))(?![\w-])"


@pytest.mark.parametrize(
    ("text", "dumped"),
    [
        (f"Here you go: {_TOOL_RESULT}", f"Here you go: {_TOOL_RESULT}"),  # mostly data: the whole message
        ("Result: {'order_id': '#R2103040', 'total': 332.2", "{'order_id': '#R2103040', 'total': 332.2"),  # unclosed
        (
            "Details: order_id: #R2103040, payment_method_id: card_8069. Thanks!",
            "order_id: #R2103040, payment_method_id: card_8069",
        ),
        ("Raw: status=delivered total=332.2 done", "status=delivered total=332.2"),
        ("Here is the tool output, verbatim, as it was returned to me earlier: " + _TOOL_RESULT[:60], _TOOL_RESULT[:60]),
        ("Amounts: 150.10, 182.10, 332.20 and 8.62. That's all.", "150.10, 182.10, 332.20 and 8.62"),
        (
            "Copied: order_id R2103040 status delivered items name Desk lamp price 150.10 total 332.20 ok",
            "order_id R2103040 status delivered items name Desk lamp price 150.10 total 332.20",
        ),
    ],
)
def test_dumps_are_found(text: str, dumped: str) -> None:
    spans = dump_spans(text, seen=[_TOOL_RESULT], id_pattern=_RETAIL_IDS)
    assert [text[s:e] for s, e in spans] == [dumped]


def test_a_message_mostly_of_data_is_a_dump_as_a_whole() -> None:
    text = "#R2103040 delivered 332.2 150.1 card_8069 2026-03-04 3"
    assert dump_spans(text, id_pattern=_RETAIL_IDS) == [(0, len(text))]


@pytest.mark.parametrize(
    "text",
    [
        "Your gift card balance is $52.40.",
        "Order #R2103040 cost $150.10 and #R7269930 cost $182.10, so together you paid $332.20.",
        "Order #R1: $1.00\nOrder #R2: $2.00\nOrder #R3: $3.00\nTotal: $6.00",
        "Status: Delivered\nTotal: $332.20",
        "I'm sorry [I checked] but your order has been delivered.",
        "The order has been delivered and can no longer be cancelled, as the tool told me.",
    ],
)
def test_answers_in_sentences_are_no_dump(text: str) -> None:
    seen = ['{"message": "The order has been delivered and can no longer be cancelled"}', _TOOL_RESULT]
    assert dump_spans(text, seen=seen, id_pattern=_RETAIL_IDS) == []


@pytest.mark.parametrize(
    "said, named",
    [
        ("I was born on 14 March 1987.", True),
        ("born March 14th, 1987", True),
        ("DOB 03/14/1987", True),
        ("1987-03-14", True),
        ("born 14 March 1988", False),  # another year
        ("born on March 14", False),  # no year: not the date of birth the lookup used
    ],
)
def test_a_date_in_any_usual_form_names_the_same_iso_date(said: str, named: bool) -> None:
    """An identity lookup by date of birth uses what the customer said, however the customer wrote it."""
    assert mentions(said, "1987-03-14") is named


# ---------------------------------------------------------------------------------------------- dates with a weekday, times


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("Monday 16 June", True),  # no year: the conversation's year, on the weekday it falls on
        ("Mon, June 16th", True),
        ("on Monday the 16th of June", True),
        ("Monday, 16 June 2025", True),
        ("Monday 16 July", False),
        ("Friday 16 June", False),  # 16 June 2025 is a Monday: which day is meant is unknown
        ("Tuesday 16 June 2025", False),
        ("Monday 16 June 2026", False),
        ("Monday 23 June", False),
    ],
)
def test_a_date_with_its_weekday_names_the_date_the_weekday_agrees_with(said: str, named: bool) -> None:
    assert bool(names_date(f"Your appointment is {said}.", "2025-06-16")) is named


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("See you at 14:00.", "14:00"),
        ("See you at 09:30.", "09:30"),
        ("See you at 2pm.", "14:00"),
        ("See you at 2 PM.", "14:00"),
        ("See you at 2:00 pm.", "14:00"),
        ("See you at 2:00p.m. sharp.", "14:00"),
        ("See you at 10.30 am.", "10:30"),
        ("See you at 12 pm.", "12:00"),
        ("See you at 12:15 a.m.", "00:15"),
        ("See you at noon.", "12:00"),
        ("See you at midnight.", "00:00"),
        ("See you at half past two in the afternoon.", "14:30"),
        ("See you at quarter to eleven in the morning.", "10:45"),
        ("See you at 3 in the afternoon.", "15:00"),
        ("See you at 10:30.", "~10:30"),  # either half of the day
        ("See you at half past ten.", "~10:30"),
        ("See you at ten o'clock.", "~10:00"),
        ("See you on 2025-06-18T10:30.", "~10:30"),
        ("See you on Monday 16 June at 10.", "~10:00"),  # a bare hour, right after a date
    ],
)
def test_times_are_read_in_every_usual_form(text: str, value: str) -> None:
    assert [m.value for m in times_in(text)] == [value]


@pytest.mark.parametrize(
    "text",
    [
        "It costs $10.30.",
        "You have ten items.",
        "The score was 3:1.",
        "Between 9 and 11 people called.",
        "Call 413-555-0108.",
        "Order #R1030 shipped.",
        "It is 10.30 kg.",
        "We received 2 this morning.",
        "I have 2 apples and 3 mangoes.",
    ],
)
def test_amounts_counts_and_ids_are_no_times(text: str) -> None:
    assert times_in(text) == []


@pytest.mark.parametrize(
    ("said", "fact", "same"),
    [
        ("~02:00", "14:00", True),
        ("~02:00", "02:00", True),
        ("~12:00", "12:00", True),
        ("14:00", "14:00", True),
        ("14:00", "2:00 pm", True),  # a fact written another way
        ("14:00", "02:00", False),
        ("~02:30", "14:00", False),
        ("10:30", "11:30", False),
    ],
)
def test_a_time_is_the_same_on_either_half_of_the_day_only_when_its_half_is_unsaid(said: str, fact: str, same: bool) -> None:
    assert same_time(said, fact) is same


def test_a_booking_told_at_another_time_does_not_name_the_booked_time() -> None:
    """The deliberate mistake of issue 21: booked at 11:00, told as 11:30."""
    assert names_time("You're booked for 18 June 2025 at 11:30.", "11:00") == []
    assert names_time("You're booked for 18 June 2025 at 11am.", "11:00") != []


def test_times_are_no_plain_numbers() -> None:
    assert [m.value for m in numbers_in("Come at 2 pm or 14:30 with 3 forms.")] == ["3"]


BOOKED_AT_ELEVEN = Fact("time", "11:00")


@pytest.mark.parametrize(
    ("messages", "told"),
    [
        (("You're booked for Wednesday 18 June at 11am.",), True),
        (("You're booked for Wednesday 18 June at 11:00.",), True),
        (("You're booked for 18 June 2025, eleven o'clock in the morning.",), True),
        (("You're booked for 18 June 2025 at 11:30.",), False),  # the deliberate mistake of issue 21
        (("You're booked for 18 June 2025 at 11 pm.",), False),
        (("You're not booked at 11:00.",), False),
    ],
)
def test_a_time_is_told_in_any_usual_form_and_only_at_that_time(messages: tuple[str, ...], told: bool) -> None:
    assert tell(BOOKED_AT_ELEVEN, list(enumerate(messages))).told is told


@pytest.mark.parametrize(
    "message",
    [
        "Membership paid until October 19, 2025.",
        "Your Plus cover runs till 2025-10-19.",
        "You're covered up until 19 October 2025.",
    ],
)
def test_a_date_a_period_runs_until_is_told_not_hedged(message: str) -> None:
    assert tell(Fact("date", "2025-10-19"), [(0, message)]).told


@pytest.mark.parametrize(
    "message", ["If it is still unpaid after October 19, 2025, we cancel it.", "I'll renew it once it's October 19, 2025."]
)
def test_a_date_under_a_condition_is_hedged(message: str) -> None:
    assert tell(Fact("date", "2025-10-19"), [(0, message)]).reason == "hedged"


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("My number is (413) 555-0108.", True),
        ("My number is 413.555.0108.", True),
        ("My number is 413-555-0108.", True),
        ("My number is (413) 555-0180.", False),  # two digits swapped
        ("My number is 413-555-010.", False),
    ],
)
def test_a_phone_number_the_customer_gave_in_any_grouping_is_the_one_a_lookup_used(said: str, named: bool) -> None:
    """An identity lookup by phone number uses what the customer said, however the customer grouped it."""
    assert mentions(said, "4135550108") is named


@pytest.mark.parametrize(
    ("message", "told"),
    [
        ("Your appointment is on Monday 16 June.", True),
        ("Your appointment is on 16 June.", True),
        ("Your appointment is on Friday 16 June.", False),  # 16 June 2025 is a Monday: a wrong date in words
        ("Your appointment is on Monday 23 June.", False),
    ],
)
def test_a_date_without_its_year_tells_the_fact_only_on_its_weekday(message: str, told: bool) -> None:
    assert tell(Fact("date", "2025-06-16"), [(0, message)]).told is told
