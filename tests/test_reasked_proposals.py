"""A full proposal, the customer's "why?", the agent's explanation and a short re-ask without the invoice id, then
"Yes" (bridge trial pay-004 t03, markdown style): the full proposal still stands, so the yes agrees to it. A re-ask
after another invoice came up, one that changes a term, or one after the customer turned the proposal down binds
nothing it does not name itself. The graders and the scripted customer read it by one rule (``dialogue.reasks``)."""

from __future__ import annotations

import asyncio
import random

import pytest

from passhat.customers.personas import PERSONAS
from passhat.customers.scripted import ScriptedUser
from passhat.dialogue import is_affirmative
from passhat.dialogue.reasks import standing_proposal
from passhat.domains import load_domain
from passhat.env import Environment, tool_registry
from passhat.grade.confirmation import unconfirmed_writes
from passhat.guard.confirmation import commitment_for
from passhat.trajectory import Event

PAYABLES = load_domain("payables")
NOTE = "Approved in full at $864.60: price variance of $12.60 (1.48%) is within the lab supplies tolerance ($17.04 allowed)."
WRITES = [
    ("approve_invoice", {"invoice_id": "INV-71004"}),
    ("post_to_ledger", {"invoice_id": "INV-71004"}),
    ("update_status", {"invoice_id": "INV-71004", "status": "ready for payment"}),
    ("add_audit_note", {"invoice_id": "INV-71004", "note": NOTE}),
]
PROPOSAL = (
    "Here's what I found on **INV-71004**.\n\n| **Variance** | **$12.60** (1.48%) |\n| **Allowed variance** | **$17.04** |\n\n"
    "### Proposed actions (in this order)\n1. **Approve** INV-71004 (Ardent Lab Supply) for payment in full at **$864.60**\n"
    "2. **Post** it to the ledger (**$864.60**)\n3. **Mark it ready for payment**\n"
    f'4. **Add an audit note:** *"{NOTE}"*\n\n**Shall I go ahead with all four?** Please reply **yes** to confirm.'
)
WHY = "Before I agree: why does it have to be done this way?"
EXPLANATION = (
    "Good question.\n\n### Why approve in full\n- The variance is **$12.60**, under the **$17.04** allowed.\n\n"
    "### Why this order of steps\n- Only an **approved** invoice can be **posted** to the ledger.\n\n"
)
REASK = "**Shall I go ahead** with the four steps: approve at $864.60, post, mark ready for payment, and add the audit note?"
YES = "Yes, that's right. Please proceed."


def unconfirmed(*messages: tuple[str, str]) -> list[str]:
    """The tools of the t03 writes the confirmation grader finds without a binding yes, after ``messages``."""
    env, tools = Environment(PAYABLES), tool_registry(PAYABLES)
    try:
        events = [Event(role, text) for role, text in messages]
        for tool, args in WRITES:
            commitment = commitment_for(tools[tool], args, env.db, PAYABLES)
            events.append(Event("tool", name=tool, args=args, result={"status": "ok"}, commitment=commitment.to_dict()))
        return [w["tool"] for w in unconfirmed_writes(events, env)]
    finally:
        env.close()


def test_a_yes_to_a_short_re_ask_after_why_agrees_to_the_full_proposal_still_standing():
    assert unconfirmed(("agent", PROPOSAL), ("user", WHY), ("agent", EXPLANATION + REASK), ("user", YES)) == []


@pytest.mark.parametrize(
    "explanation, reask",
    [
        (EXPLANATION + "INV-71005 from the same vendor was held last week.\n\n", REASK),  # another invoice came up
        (EXPLANATION, REASK.replace("$864.60", "$852.00")),  # the re-ask changes the amount
    ],
)
def test_a_re_ask_after_another_record_or_with_another_term_does_not_bind_the_earlier_proposal(explanation, reask):
    said = [("agent", PROPOSAL), ("user", WHY), ("agent", explanation + reask), ("user", YES)]
    assert unconfirmed(*said) == [tool for tool, _ in WRITES]


@pytest.mark.parametrize("no", ["No, that's not it. Again: please approve INV-71004.", "No. Again: INV-71004, in full."])
def test_a_re_ask_after_the_customer_turned_the_proposal_down_does_not_bind_it(no):
    said = [("agent", PROPOSAL), ("user", no), ("agent", EXPLANATION + REASK), ("user", YES)]
    assert unconfirmed(*said) == [tool for tool, _ in WRITES]


def test_without_the_earlier_proposal_the_re_ask_alone_binds_nothing():
    assert unconfirmed(("agent", EXPLANATION + REASK), ("user", YES)) == [tool for tool, _ in WRITES]


def test_the_standing_proposal_is_the_one_before_the_re_ask_while_no_other_record_came_up():
    said = [("agent", PROPOSAL), ("user", WHY), ("agent", EXPLANATION + REASK)]
    assert standing_proposal(said, len(said), PAYABLES.id_pattern) == PROPOSAL
    other = [*said[:2], ("agent", "INV-71005 is on hold too. " + REASK)]
    assert standing_proposal(other, len(other), PAYABLES.id_pattern) is None


def skeptical_reply(*agent: str) -> str:
    """What pay-004's skeptical customer (who asks "why?" before any yes) answers the last of ``agent``."""
    user = ScriptedUser(PAYABLES, PAYABLES.tasks["pay-004"], PERSONAS["skeptical"], random.Random(0))
    replies = [asyncio.run(user.respond(text)).text for text in (None, *agent)]
    return replies[-1]


@pytest.mark.parametrize(
    "reask",
    [
        EXPLANATION + REASK,
        EXPLANATION + "**Shall I go ahead** with the four steps: approve, post, mark it, and add the note?",
        EXPLANATION + "INV-71005 from the same vendor was held last week.\n\n" + REASK,
        EXPLANATION + REASK.replace("$864.60", "$852.00"),
    ],
)
def test_the_customer_says_yes_to_a_re_ask_exactly_when_the_graders_bind_its_yes(reask):
    agreed = is_affirmative(skeptical_reply(PROPOSAL, reask))
    assert agreed == (unconfirmed(("agent", PROPOSAL), ("user", WHY), ("agent", reask), ("user", YES)) == [])
