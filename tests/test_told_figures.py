"""A figure a tool worked out is told back as the tool returned it (issue 21, "nothing false told"): a chatty model told
a clerk "the variance of fifty-four dollars" where compute_variance had returned 45.00, and no grader saw it. The
amount the words before it name as a figure of the tool's answer must be one of the values returned under that
field; the working of the figure, a hedge, a question, an option and an amount no field names are not judged."""

from __future__ import annotations

import pytest

from passhat.domains import load_domain
from passhat.grade.figures import misstated_figures
from passhat.trajectory import Event

PAYABLES = load_domain("payables")
VARIANCE = Event(
    "tool",
    name="compute_variance",
    args={"invoice_id": "INV-71021"},
    result={
        "status": "ok",
        "data": {
            "invoice_id": "INV-71021",
            "invoice_total": 765.0,
            "matched_amount": 720.0,
            "variance": 45.0,
            "variance_percent": 6.25,
        },
    },
)


def misstated(text: str, *tools: Event) -> list[str]:
    return [m.said for m in misstated_figures(PAYABLES, [*(tools or (VARIANCE,)), Event("agent", text)])]


@pytest.mark.parametrize(
    "text",
    [
        "INV-71021: billed $765.00 against a matched amount of $720.00, a variance of forty-five dollars (6.25%).",
        "| **Matched amount** | **$720.00** |\n| **Variance** | **$45.00** (6.25%) |",
        "- **Variance** = $765.00 − $720.00 = **$45.00**",  # the working, then the figure
        "The variance is forty-five dollars ($45.00), over the $14.40 tolerance.",
        "If Kestrel had billed the order's price, the variance would be $0.00.",  # a hedge
        "Kestrel billed $51.00 a box instead of $48.00.",  # amounts no field of the answer names
    ],
)
def test_a_figure_told_as_the_tool_returned_it_or_not_told_as_one_is_no_misstatement(text):
    assert misstated(text) == []


@pytest.mark.parametrize(
    "text, said",
    [
        ("I've left them a summary: the variance of fifty-four dollars over the $14.40 tolerance.", "54.00"),
        ("- **Variance:** $54.00 (6.25%)", "54.00"),
        ("So the matched amount is $702.00 and the invoice is over tolerance.", "702.00"),
        ("The variance is twelve dollars fifty ($12.50, about 1.7%).", "12.50"),  # both spellings wrong
    ],
)
def test_a_figure_told_otherwise_than_any_call_returned_it_is_misinformed(text, said):
    assert said in misstated(text)


def test_a_figure_is_judged_against_every_call_that_returned_it_as_seen_and_as_it_was():
    faulted = Event(
        "tool",
        name="compute_variance",
        args={"invoice_id": "INV-71021"},
        result={"status": "ok", "data": {"variance": 54.0}},  # what an injected fault showed the agent
        fault={"class": "stale_read", "actual": {"status": "ok", "data": {"variance": 45.0}}},
    )
    assert misstated("The variance is $54.00.", faulted) == []
    assert misstated("The variance is $45.00.", faulted) == []
    assert misstated("The variance is $50.00.", faulted) == ["50.00"]


CHARGE = Event("tool", name="get_charge", args={"charge_id": "CH-50101"}, result={"status": "ok", "data": {"charged": 90.0}})


def test_a_field_word_said_as_the_records_name_is_no_label_of_the_amount():
    assert misstated("For your records: under the plus plan, charge CH-50101 costs you $0.00.", CHARGE) == []
    assert misstated("Charged: $80.00 to your Visa.", CHARGE) == ["80.00"]


def test_only_the_answers_the_agent_had_before_it_spoke_are_its_figures():
    later = [
        Event("agent", "The refund is $15.00."),
        Event("tool", name="quote_adjustment", result={"status": "ok", "data": {"refund": 55.0}}),
    ]
    assert misstated_figures(PAYABLES, later) == []


@pytest.mark.parametrize("text", ["Tolerance 2% of matched = $14.40.", "Half of the variance, $22.50, is the freight."])
def test_a_figure_worked_out_of_a_field_is_no_statement_of_that_field(text):
    assert misstated(text) == []
