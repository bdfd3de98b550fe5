"""Proposals as a chatty model wrote them while playing the agent (pay-005): findings recapped, then a numbered plan
in bold with a note's and an email's wording quoted, then "Does that all look good? If you'd like me to go ahead
with all five steps, just say yes". A yes to it agrees to every step; a wrong amount in a step voids it; the
figures quoted inside the note's wording are the note's text, not terms of the writes. (The graders once failed
this trial as unconfirmed_write.)"""

from __future__ import annotations

import pytest

from passhat.dialogue.proposals import binding
from passhat.domains import load_domain
from passhat.env import Environment, tool_registry
from passhat.guard.confirmation import commitment_for

PAYABLES = load_domain("payables")
NOTE = (
    "Approved in full at $556.00: variance of $6.00 (1.09%) on copy paper pricing is within the office tolerance of 5% "
    "capped at $20.00; goods fully received; no duplicates found."
)
WRITES = [
    ("approve_invoice", {"invoice_id": "INV-71005"}),
    ("post_to_ledger", {"invoice_id": "INV-71005"}),
    ("update_status", {"invoice_id": "INV-71005", "status": "ready for payment"}),
    ("add_audit_note", {"invoice_id": "INV-71005", "note": NOTE}),
]
PLAN = "Thanks, Tobias — you're verified, and I've gone through INV-71005 carefully. Here's what I found:\n\n- **Invoice:** INV-71005 from Pellham Office Goods (their number POG-3391), against PO-4105, company BW-US, total **$556.00**.\n- **Receipts:** everything ordered was received — 40 reams of A4 copy paper and 6 black toner cartridges.\n- **The match:** the matched amount is $550.00, so the variance is **$6.00 (1.09%)**. It all comes from the copy paper, billed at $4.75 a ream instead of the order's $4.60. The toner matches exactly.\n- **Tolerance:** for office supplies it's 5% of the matched amount, capped at $20.00 — so a $6.00 variance is comfortably within tolerance.\n- **Duplicates:** none found.\n- **Your limit:** $556.00 is well within your $2,500.00 approval limit, and it's under $5,000, so no second reviewer is needed.\n\nSo it can be approved in full! Here's exactly what I'd do, in this order:\n1. **Approve** INV-71005 (Pellham Office Goods) for payment in full at **$556.00**.\n2. **Post** it to the ledger.\n3. **Mark its status \"ready for payment\".**\n4. **Add an audit note:** \"Approved in full at $556.00: variance of $6.00 (1.09%) on copy paper pricing is within the office tolerance of 5% capped at $20.00; goods fully received; no duplicates found.\"\n5. **Email you (the clerk) a confirmation:** \"INV-71005 from Pellham Office Goods has been approved in full at $556.00, posted to the ledger and marked ready for payment.\"\n\nDoes that all look good? If you'd like me to go ahead with all five steps, just say yes — or let me know if you'd like any wording changed!"


def bound(text: str) -> list[bool]:
    env, tools = Environment(PAYABLES), tool_registry(PAYABLES)
    try:
        batch = [commitment_for(tools[tool], args, env.db, PAYABLES) for tool, args in WRITES]
    finally:
        env.close()
    return [binding(text, c, batch, PAYABLES.id_pattern).ok for c in batch]


def test_a_yes_to_the_whole_plan_agrees_to_every_step():
    assert bound(PLAN) == [True, True, True, True]


@pytest.mark.parametrize(
    "changed",
    [
        ("in full at **$556.00**.", "in full at **$600.00**."),  # a wrong amount in the step itself
        ("**Approve** INV-71005", "**Approve** INV-71006"),  # another invoice
    ],
)
def test_a_wrong_term_in_a_step_voids_the_plan(changed):
    assert not bound(PLAN.replace(*changed))[0]


def test_figures_inside_the_quoted_wording_of_a_note_are_its_text_not_terms():
    assert bound(PLAN.replace("Approved in full at $556.00:", "Approved in full at $600.00:"))[0]
