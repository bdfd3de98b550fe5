"""Facts a language model told while playing the agent through the bridge (issue 21), once read wrongly by the
graders: each is read right now, beside the variants that must still be refused (another value, a negation, a
question about the fact, a yes to something else, the opposite said plainly).
"""

from __future__ import annotations

import pytest

from passhat.dialogue.facts import Fact, tell
from passhat.domains import load_domain
from passhat.env import Environment
from passhat.grade.truth import misstatements
from passhat.trajectory import Event

RETAIL = load_domain("retail")
# retail-013: V-22765 ($186.96) swapped for V-18451 ($271.43), the $84.47 difference charged to card_510854
EXCHANGE = (
    "exchange_items",
    {"order_id": "#R9168918", "item_ids": ["V-22765"], "new_item_ids": ["V-18451"], "payment_method_id": "card_510854"},
)
DONE = (
    "It's all done, Zeke! Your exchange on order #R9168918 has been requested: the white Bluetooth Bookshelf Speakers "
    "(item V-22765) will be exchanged for the walnut Bluetooth ones (item V-18451), and the $84.47 price difference "
    "has been charged to your Discover card ending in 2691."
)


def false_after_exchange(message: str) -> list[tuple[str, str]]:
    """The misstatements of one agent message said after the retail-013 exchange took effect."""
    env = Environment(RETAIL)
    done = env.execute(*EXCHANGE)
    events = [Event("user", "Hello"), Event("tool", name=done.name, args=done.args, result=done.result)]
    env.close()
    return [(m.column, m.said) for m in misstatements(RETAIL, [*events, Event("agent", message)])]


@pytest.mark.parametrize(
    "message",
    [
        DONE,
        "For V-18451 the difference in price is $84.47.",
        "V-18451 costs $84.47 more than V-22765.",
        "Swapping V-22765 for V-18451 costs $84.47.",  # what the swap costs, not the item
        "V-18451, which costs $271.43, replaces the white pair.",
    ],
)
def test_an_amount_said_as_a_difference_or_what_a_swap_costs_is_no_price(message) -> None:
    assert false_after_exchange(message) == []


@pytest.mark.parametrize(
    "message",
    [
        "V-18451, which costs $84.47, replaces the white pair.",
        "The walnut ones (item V-18451) cost $84.47.",
        "The price of V-18451 is $84.47.",
        "V-18451 has a $84.47 price.",
    ],
)
def test_a_wrong_price_said_of_the_item_is_still_misinformed(message) -> None:
    assert false_after_exchange(message) == [("price", "84.47")]


# intake-010: an emergency contact has no authorization for his wife's records
NO_AUTHORIZATION = Fact(
    "phrase", "no recorded authorization", synonyms=("no authorization", "not authorized", "not authorised", "no authority")
)


@pytest.mark.parametrize(
    "message",
    [
        "I've checked your file, and I'm afraid it doesn't record any authorization for you to act for Thea "
        "Brandvold: you're listed as her emergency contact only.",
        "There's no authorization on file for you.",
        "You aren't authorized to act for her.",
        "Your file doesn't show a recorded authorization for her.",
        "We have no record of any authorization for you.",
    ],
)
def test_no_authorization_is_told_by_authorization_said_not_there(message) -> None:
    assert tell(NO_AUTHORIZATION, [(0, message)]).told


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("I can't say whether there's no authorization on file.", "negated"),
        ("I can't say whether there's a recorded authorization.", "not_said"),
        ("Is there no authorization on file?", "question"),
        ("Does your file record any authorization?", "question"),
        ("There is a recorded authorization for you.", "not_said"),
        ("I can't share anything without authorization.", "not_said"),  # another act refused, nothing said absent
        ("I can't accept a verbal authorization.", "not_said"),
        ("If you aren't authorized, I can't help.", "hedged"),
        ("You are not not authorized.", "negated"),  # a negation negated
        ("Your file does not have no authorization.", "negated"),
    ],
)
def test_an_authorization_said_there_asked_about_or_doubted_tells_no_absence(message, reason) -> None:
    telling = tell(NO_AUTHORIZATION, [(0, message)])
    assert (telling.told, telling.reason) == (False, reason)


# benefits-015: Basic is the free plan; waivers need a paid plan today
NO_PAID_PLAN = Fact("phrase", "no paid plan today")
MARKDOWN_REFUSAL = (
    "- A late fee can only be waived for a member who **holds a paid plan today**.\n- Your current membership is "
    "**Basic**, which isn't a paid plan, so I'm **not able to waive CH-51501** or refund it to your Visa."
)


@pytest.mark.parametrize(
    ("message", "told"),
    [
        (MARKDOWN_REFUSAL, True),
        ("You don't hold a paid plan right now.", True),
        ("You have no paid plan.", True),
        # the rule restated, another time, the opposite, a doubt, a question
        ("Only a member who holds a paid plan today can have it waived.", False),
        ("You didn't have a paid plan in March.", False),
        ("Basic was not a paid plan until 2024.", False),
        ("You hold a paid plan today.", False),
        ("I can't say whether you have a paid plan.", False),
        ("Do you not have a paid plan?", False),
    ],
)
def test_no_paid_plan_today_is_told_in_the_present_tense_without_its_today(message, told) -> None:
    assert tell(NO_PAID_PLAN, [(0, message)]).told is told


# benefits-024: the member held Plus, not Premier, on the tow date
HELD_PLUS = Fact("phrase", "held the Plus plan")


@pytest.mark.parametrize(
    ("message", "told"),
    [
        ("Your plan on the tow date (2025-06-04) was Plus, not Premier — Premier can't be applied. Proceed? y/n", True),
        ("On the tow date you were on Plus.", True),
        ("You had the Plus plan on June 4.", True),
        ("You were a **Plus** member on the tow date.", True),
        # another plan, a negation, a question, a doubt, a condition, the plan named but not as the member's
        ("Your plan on the tow date was Premier.", False),
        ("Your plan on the tow date was not Plus.", False),
        ("Was your plan on the tow date Plus?", False),
        ("Your plan on the tow date was Plus?", False),
        ("I can't confirm that your plan was Plus.", False),
        ("If you were on Plus, half of it is covered.", False),
        ("Your plan is Basic now, and the Plus plan covers tows.", False),
    ],
)
def test_holding_a_plan_is_told_by_the_plan_said_as_the_members(message, told) -> None:
    assert tell(HELD_PLUS, [(0, message)]).told is told


def test_the_clinics_today_is_in_the_callers_file() -> None:
    """intake-033 grades "less than a day away": the agent must be able to read what today is."""
    intake = load_domain("intake")
    env = Environment(intake)
    result = env.execute("get_caller", {"caller_id": "P-1004"}).result
    env.close()
    assert result["data"]["today"] == "2025-06-09"


def test_having_no_thing_is_no_plan_held() -> None:
    """ "had no membership" is no plan called "no": "You had no idea." tells nothing of it."""
    had_none = Fact("phrase", "had no membership")
    assert tell(had_none, [(0, "You had no membership on June 1.")]).told
    assert not tell(had_none, [(0, "You had no idea.")]).told
