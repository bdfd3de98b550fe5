"""What the graders made of two trials a language model played tersely through the bridge (issue 21, t7 and t8):
a reason told with the figure inside it is told, and a value word after a colon that names another thing (the group
that rejected a ticket) is no statement of the ticket's field. Beside each, the wordings that must still fail."""

from __future__ import annotations

import pytest

from passhat.dialogue.facts import Fact, tell
from passhat.domains import load_domain
from passhat.env import Environment
from passhat.grade.truth import misstatements
from passhat.trajectory import Event

HELPDESK = load_domain("helpdesk")
INVOICE_IDS = r"INV-\d{5}"
OVER_LIMIT = Fact("phrase", "over your approval limit")
OVER_TOLERANCE = Fact("phrase", "over tolerance")
RECALIBRATE = Fact("phrase", "hold the feed button for five seconds to recalibrate the sensor")  # hd-005


def told(fact: Fact, text: str) -> tuple[bool, str | None]:
    telling = tell(fact, [(0, text)], id_pattern=INVOICE_IDS)
    return telling.told, telling.reason


@pytest.mark.parametrize(
    ("fact", "text"),
    [
        (OVER_LIMIT, "But the amount is over your $2,500.00 approval limit, so I can't approve it for you."),  # t7
        (OVER_LIMIT, "$3,870.00 is over your current $2,500.00 approval limit."),
        (OVER_LIMIT, "That's over your 2,500 approval limit."),
        (OVER_LIMIT, "It is over the USD 2,500.00 approval limit."),
        (OVER_LIMIT, "It is over your approval limit."),
        (OVER_TOLERANCE, "INV-71017 is over its 3% tolerance."),
        (OVER_TOLERANCE, "INV-71017 is over the $150.00 tolerance."),
        (RECALIBRATE, "Workaround: hold the feed button for 5 seconds to recalibrate the sensor."),
    ],
)
def test_a_phrase_with_a_figure_inside_it_is_told(fact: Fact, text: str) -> None:
    assert told(fact, text) == (True, None)


@pytest.mark.parametrize(
    ("fact", "text", "reason"),
    [
        (OVER_LIMIT, "It is not over your $2,500.00 approval limit.", "negated"),
        (OVER_LIMIT, "It is under your $2,500.00 approval limit.", "not_said"),
        (OVER_LIMIT, "It is over your limit.", "not_said"),  # another phrase: which limit is not said
        (OVER_LIMIT, "Is it over your $2,500.00 approval limit?", "question"),
        (OVER_LIMIT, "It is over $3,000.00 and $2,500.00 and more, your approval limit.", "not_said"),
        (OVER_TOLERANCE, "INV-71017 is not over its 3% tolerance.", "negated"),
        (OVER_TOLERANCE, "INV-71017 is over 3% and within tolerance.", "not_said"),
        (RECALIBRATE, "Workaround: hold the feed button for 3 seconds to recalibrate the sensor.", "not_said"),
        (RECALIBRATE, "Workaround: hold the feed button for fifteen seconds to recalibrate the sensor.", "not_said"),
    ],
)
def test_a_figure_does_not_carry_a_phrase_it_does_not_say(fact: Fact, text: str, reason: str) -> None:
    assert told(fact, text) == (False, reason)


def misstated(message: str) -> list[tuple[str, str]]:
    """What the agent's message says falsely of INC-1081 (a hardware incident that network rejected), once read."""
    env = Environment(HELPDESK)
    read = env.execute("get_incident", {"incident_id": "INC-1081"})
    events = [
        Event("user", "INC-1081 got rejected by network. Who should have it?"),
        Event("tool", name=read.name, args=read.args, result=read.result),
        Event("agent", message),
    ]
    env.close()
    return [(m.column, m.said) for m in misstatements(HELPDESK, events) if m.column == "category"]


@pytest.mark.parametrize(
    "message",
    [
        "Verified, Hugo. INC-1081, sticking keys on your laptop: network rejected it.",  # t8
        "INC-1081: network sent it back.",
        "INC-1081 — network won't take it, endpoint owns the laptop.",
        "INC-1081, laptop keys: network's queue rejected it.",
        "INC-1081: rejected by network.",
        "INC-1081: hardware, medium priority.",
    ],
)
def test_a_group_named_after_a_colon_as_who_acted_says_nothing_of_the_category(message: str) -> None:
    assert misstated(message) == []


@pytest.mark.parametrize(
    "message",
    [
        "INC-1081: category network",
        "INC-1081 — network",
        "INC-1081: network, medium priority.",
        "INC-1081 category: network.",
        "INC-1081 (category: network) was rejected.",
        "INC-1081 is network.",
    ],
)
def test_a_wrong_category_given_as_a_label_gives_it_is_still_misinformed(message: str) -> None:
    assert misstated(message) == [("category", "network")]


PAYABLES = load_domain("payables")


def misstated_status(message: str) -> list[tuple[str, str]]:
    """What the agent's message says falsely of INV-71011's status (an exception that duplicates paid INV-60311)."""
    env = Environment(PAYABLES)
    events = [Event("user", "Please approve INV-71011.")]
    for tool in ("get_invoice", "check_duplicates"):
        read = env.execute(tool, {"invoice_id": "INV-71011"})
        events.append(Event("tool", name=read.name, args=read.args, result=read.result))
    events.append(Event("agent", message))
    env.close()
    return [(m.column, m.said) for m in misstatements(PAYABLES, events) if m.column == "status"]


@pytest.mark.parametrize(
    ("message", "false"),
    [
        ("INV-71011 — paid invoice INV-60311 has the same vendor number.", []),  # said of the other invoice
        ("INV-71011: paid invoice INV-60311 is its duplicate, so I'll hold it.", []),
        ("INV-71011: paid.", [("status", "paid")]),
        ("INV-71011 — paid", [("status", "paid")]),
    ],
)
def test_a_status_word_after_a_separator_is_the_records_unless_it_names_another(message: str, false: list) -> None:
    assert misstated_status(message) == false
