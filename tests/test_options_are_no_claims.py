"""Options put to the customer say nothing of what the records hold (issue 21, fourth bridge round): "Two options: 1)
apply KE-21's workaround …; or 2) classify INC-1361 as hardware and assign it to the endpoint group. Which?" and a
numbered "### Options" list were graded misinformed, as if the incident were already with endpoint. A sentence, list
item or either/or part that opens with an action in the imperative is an option; the same value said as what the
record is ("INC-1361 is assigned to endpoint") or reported done ("Assigned to endpoint") is still a claim."""

from __future__ import annotations

import pytest

from passhat.domains import load_domain
from passhat.grade.truth import misstatements
from passhat.trajectory import Event

HELPDESK = load_domain("helpdesk")


def misstated(text: str) -> list[tuple[str, str]]:
    return [(m.column, m.said) for m in misstatements(HELPDESK, [Event("agent", text)])]


@pytest.mark.parametrize(
    "text",
    [
        "Two options: 1) apply KE-21's workaround to INC-1361 — reload the label roll; or 2) classify INC-1361 as hardware "
        "and assign it to the endpoint group (owns the printer). Which?",
        "### Options\n1. **Apply the workaround of KE-21 to INC-1361**\n2. **Assign INC-1361 to the endpoint group**, which "
        "owns the printer — this first needs the incident **classified as _hardware_**.\n\nWhich would you prefer?",
    ],
)
def test_an_option_in_the_imperative_states_nothing_of_the_record(text):
    assert misstated(text) == []


@pytest.mark.parametrize("text", ["INC-1361 is assigned to the endpoint group.", "- Assigned INC-1361 to the endpoint group ✅"])
def test_the_same_value_said_as_what_the_record_is_is_a_claim(text):
    assert ("assigned_group", "endpoint") in misstated(text)
