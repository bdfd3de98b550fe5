"""Which parts of an agent's message are data rather than words to the customer: a row recited in any
format (JSON, key: value lines, a markdown table, prose naming every column) is a dump; the agent's own
findings, and a detailed report of the writes it just made, are not."""

from __future__ import annotations

import json

import pytest

from passhat.dialogue.dumps import dump_spans
from passhat.dialogue.facts import Fact, tell

IDS = r"(?<![\w-])(?:INV-\d{5}|PO-\d{4}|V-\d{3})(?![\w-])"
INVOICE = {
    "id": "INV-71017",
    "vendor": "Northmoor Packaging",
    "po_id": "PO-4417",
    "amount": 1792.0,
    "currency": "USD",
    "invoice_date": "2025-06-02",
    "due_date": "2025-07-02",
    "status": "exception",
    "category": "packaging",
}
READ = (json.dumps({"invoice": INVOICE}),)
POSTED = json.dumps({"invoice_id": "INV-71017", "debit": {"5100": 1523.2}, "credit": {"2000": 1523.2}})
PAYABLE = Fact("money", "1523.20", about=("INV-71017",))
AMOUNT = Fact("money", "1792.00", about=("INV-71017",))

RECITALS = [
    json.dumps(INVOICE),
    "id: INV-71017\nvendor: Northmoor Packaging\npo: PO-4417\namount: 1792.00\ncurrency: USD\n"
    "invoice date: 2025-06-02\ndue date: 2025-07-02\nstatus: exception\ncategory: packaging",
    "| Id | Vendor | PO | Amount | Currency | Date | Due | Status | Category |\n|---|---|---|---|---|---|---|---|---|\n"
    "| INV-71017 | Northmoor Packaging | PO-4417 | $1,792.00 | USD | 2025-06-02 | 2025-07-02 | exception | packaging |",
    "Invoice INV-71017 is from Northmoor Packaging against PO-4417 for $1,792.00 in USD, dated June 2, 2025 and due "
    "July 2, 2025; it is in exception status under the packaging category.",
    "Id INV-71017. Vendor Northmoor Packaging. PO PO-4417. Amount 1,792.00 USD. Dated 2 June 2025, due 2 July 2025. "
    "Status exception. Category packaging.",
]


@pytest.mark.parametrize("text", RECITALS, ids=["json", "key-value", "table", "prose", "terse"])
def test_a_row_recited_in_any_format_is_a_dump_and_tells_nothing(text: str) -> None:
    assert dump_spans(text, READ, IDS)
    telling = tell(AMOUNT, [(0, text)], READ, IDS)
    assert not telling.told and telling.reason in ("data_dump", "not_said")  # not_said: JSON's 1792.0 is no amount


@pytest.mark.parametrize(
    "text",
    [
        "INV-71017 from Northmoor Packaging is for $1,792.00 against PO-4417, and it sits in the exception queue.",
        "| Invoice | Vendor | Amount |\n|---|---|---|\n| INV-71017 | Northmoor Packaging | $1,792.00 |",
        "Found it: INV-71017, Northmoor Packaging, $1,792.00, due 2025-07-02.",
    ],
    ids=["prose", "table", "terse"],
)
def test_the_agent_s_own_findings_from_a_row_are_no_dump(text: str) -> None:
    assert tell(AMOUNT, [(0, text)], READ, IDS).told


@pytest.mark.parametrize(
    "text",
    [
        "Done. Posted INV-71017: debit 5100 1523.20, credit 2000 1523.20. The amount payable is $1,523.20.",
        "All done:\n- INV-71017 adjusted to $1,523.20\n- posted: invoice_id INV-71017 debit 5100 1523.20 credit 2000 1523.20",
    ],
    ids=["sentences", "bullets"],
)
def test_a_detailed_report_of_the_agent_s_own_writes_is_no_dump(text: str) -> None:
    telling = tell(PAYABLE, [(0, text)], READ, IDS, own=(POSTED,))
    assert (telling.told, telling.reason) == (True, None)


def test_a_copy_of_what_the_agent_only_read_is_still_a_dump() -> None:
    copied = "Here: invoice id INV-71017 vendor Northmoor Packaging po_id PO-4417 amount 1792.00"
    assert tell(AMOUNT, [(0, copied)], READ, IDS, own=(POSTED,)).reason == "data_dump"


def test_a_report_that_restates_every_value_of_a_write_s_result_is_the_agent_s_own() -> None:
    wrote = json.dumps(
        {
            "charge_id": "CH-50201",
            "kind": "tow",
            "day": "2025-05-28",
            "plan": "classic",
            "covers": 25,
            "member_pays": 138.75,
            "refund": 46.25,
        }
    )
    text = "Done: the tow on 2025-05-28 (CH-50201) is covered by your Classic plan (25%): you pay $138.75 and get $46.25 back."
    refund = Fact("money", "46.25", direction="refund")
    assert tell(refund, [(0, text)], (), IDS, own=(wrote,)).told
    assert tell(refund, [(0, text)], (wrote,), IDS).reason == "data_dump"  # the same row, only read, recited whole
