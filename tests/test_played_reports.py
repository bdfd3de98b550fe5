"""Proposals and reports as a markdown-heavy and a terse model laid them out while playing the agent through the bridge
(issue 21): each once misread, read right now, and beside each a variant that changes what it means and is still refused.

A threshold the write is compared with ("under $5,000, so no second approver is needed") and the charge a refund puts
right ("| Charged | $55.00 to Visa ending 7591 |") are findings, not terms. "Shall I apply it?" after a bullet that says
"Apply ..." points back at the bullet; a verb the message has not said ("Shall I email it?") does not. A heading that
ends on what was done, a checked table cell, and a terse "INV-71012 held (price variance), status vendor query" report
the writes; a cross, a "not", another invoice or another value reports nothing. "2) set status vendor query" proposes
the status change.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from test_played_bridge import BENEFITS, HELPDESK, INTAKE, PAYABLES, agreed, writes

from passhat.customers import ScriptedUser
from passhat.customers.personas import PERSONAS
from passhat.dialogue.proposals import bound_writes
from passhat.dialogue.reading import read_message

PAY_ASK = "## 👋 Hi there!\n\nHappy to help with the **Calder Electric** invoice.\n\n### 🔐 Verification first\nBefore I open anything in the queue, please give me:\n\n- **Your employee number** (from your badge, e.g. E-12345)\n- **Your work email**\n\nIt would also help to have the **INV number** of the Calder Electric invoice. 📄"
PAY_PLAN = "## ✅ Verified — thanks, Devika (BW-US, limit $25,000)\n\n### 🔎 Recap of **INV-71002** — Calder Electric Supply (CES-118204, PO-4102, electrical)\n\n| Line | Item | Ordered | Received | Billed | PO price | Billed price | Variance |\n|---|---|---|---|---|---|---|---|\n| 1 | 16 A circuit breaker | 40 | 40 | 40 | $23.50 | $23.55 | $2.00 |\n| 2 | DIN rail, 1 m | 25 | 25 | 25 | $6.80 | $6.80 | $0.00 |\n\n- **Invoice total:** $1,112.00\n- **Matched amount:** $1,110.00\n- **Variance:** **$2.00 (0.18%)**\n- **Tolerance (electrical default):** 1% of matched, capped at $25.00 → ✅ **within tolerance**\n- **Duplicate check:** ✅ none found\n- **Approval limit:** ✅ $1,112.00 is within your $25,000 limit; under $5,000, so no second approver is needed\n\n### 📝 Proposal\n1. **Approve** INV-71002 (Calder Electric Supply) for payment **in full at $1,112.00**.\n2. **Post** it to the ledger.\n\nNothing else (no status change, note or notice) unless you ask.\n\n**Shall I go ahead with both steps? (yes / no)**"
PAY_DONE = "## ✅ Done\n\n| Step | Result |\n|---|---|\n| Approve INV-71002 | ✅ approved, payable **$1,112.00** |\n| Post to ledger | ✅ posted — $1,112.00 to the electrical expense account and to accounts payable |\n\n- ℹ️ The invoice is still in the exception queue; I have **not** marked it ready for payment — just say so if you want that.\n\nAnything else on your queue? 📋"
KE_PLAN = "## ✅ Verified — thanks, Vera\n\n### 🔎 What I found\n\n| | |\n|---|---|\n| Incident | **INC-1221** — Cannot sign in to the VPN from home |\n| System | Staff VPN |\n| Status | new, priority medium |\n| Matching known error | **KE-32** — *vpn rejects the one-time code* (current, not retired) |\n| Workaround | **Resync the clock of the authenticator app** |\n\n### 📝 Proposal\n- **Apply the workaround of known error KE-32 to INC-1221.** The incident's status will become *workaround*.\n- Then the fix on your side: **resync the clock of your authenticator app** and try the one-time code again.\n\n**Shall I apply it? (yes / no)**"
KE_REPLY_YES = "## 👍 Yes — that's exactly what I'm proposing\n\nThe known workaround for *vpn rejects the one-time code* is known error **KE-32**.\n\n### 📝 What I will do\n- **Apply the KE-32 workaround to INC-1221** (resync the clock of the authenticator app); INC-1221's status becomes *workaround*.\n\n**Please reply \"yes\" and I'll apply it now.**"
FUEL_PLAN = "## 🔎 Fuel delivery CH-52802\n\n| Item | Details |\n|---|---|\n| Service | Fuel delivery, **2025-05-21** |\n| Charged | **$55.00** to Visa ending 7591, nothing refunded yet |\n| Plan on that day | ✅ **Plus** (your Plus year runs 2024-08-18 to 2025-08-17) |\n| Plus pays | **100%** of the fee → you pay **$0.00** |\n\n### 📝 Proposal\n- **Apply the Plus plan benefit to CH-52802** — refund **$55.00 to your Visa ending in 7591**.\n\n**Shall I go ahead? (yes / no)**"
MOVED = "## ✅ Appointment moved\n\n| Reference | Clinician | New date & time | Status |\n|---|---|---|---|\n| **AP-5232** | Dr Mirela Sousa | **2025-07-03 at 10:00** | booked |\n\nAnything else I can help with? 🙂"
ALL_DONE = "## ✅ All done on INV-71008 — you're set for the payment run\n\n### 🔎 What I found\n\n| Line | Item | Qty (ordered / received / billed) | PO price | Billed price | Variance |\n|---|---|---|---|---|---|\n| 1 | Terminal block 4 mm², box of 10 | 50 / 50 / 50 | $19.90 | $20.90 | **$50.00** |\n| 2 | 16 A circuit breaker | 20 / 20 / 20 | $23.50 | $23.50 | $0.00 |\n\n- **Invoice total:** $1,515.00 · **Matched amount:** $1,465.00\n- **Variance:** $50.00 (3.41%) — ❌ over the electrical tolerance (1%, cap $25)\n- ✅ No duplicates · ✅ within your $25,000 limit · under $5,000, so no second approver\n\n### 🛠️ What I did\n| Step | Status |\n|---|---|\n| Adjust (short-pay) to **$1,465.00** | ✅ |\n| Post to ledger | ✅ |\n| Mark **ready for payment** | ✅ |\n| Audit note (short-paid to matched amount, $50 price variance) | ✅ |\n| Email Calder Electric Supply (ap@calder.example) about the short-payment | ✅ |\n\nAnything else I can help with? 💙"
TERSE_PLAN = "INV-71012, Calder Electric Supply: billed $2,772.00, matched $2,640.00, variance $132.00 (5%) — over tolerance; price variance confirmed. 1) Hold INV-71012, reason price variance, 2) set status vendor query. Both? y/n"
TERSE_DONE = "Done. INV-71012 held (price variance), status vendor query. Anything else?"
TERSE_ALREADY = "Already done: INV-71012 is held (price variance) and in vendor query."


def reported(domain, text: str, batch) -> set[int]:
    """The writes a customer who agreed to none of them reads as done: a report must name what it says was done."""
    reading = read_message(text, domain.lexicon)
    return bound_writes(text, batch, (), domain.id_pattern, reported=True) if reading.report else set()


def test_a_threshold_in_the_recap_leaves_the_approval_agreed():
    assert agreed(PAYABLES, PAY_PLAN, writes(PAYABLES, "pay-002")) == {0, 1}


@pytest.mark.parametrize(
    "changed",
    [
        ("in full at $1,112.00", "in full at $5,000.00"),  # the threshold said as the amount to pay
        ("**in full at $1,112.00**", "**under $5,000**"),  # a threshold in the approval's own clause
        ("**Approve** INV-71002", "**Approve** INV-71003"),  # another invoice
    ],
)
def test_a_threshold_or_another_term_in_the_step_itself_voids_it(changed):
    assert 0 not in agreed(PAYABLES, PAY_PLAN.replace(*changed), writes(PAYABLES, "pay-002"))


def test_the_charge_recapped_in_a_table_leaves_the_refund_agreed():
    assert agreed(BENEFITS, FUEL_PLAN, writes(BENEFITS, "benefits-028", goal=1)) == {0}


@pytest.mark.parametrize(
    "changed",
    [
        ("refund **$55.00 to your Visa", "charge **$55.00 to your Visa"),  # the refund said as a charge
        ("refund **$55.00 to your Visa", "refund **$50.00 to your Visa"),  # another amount
        ("| Charged | **$55.00**", "| Charge | **$55.00**"),  # a charge to come, not one made
    ],
)
def test_a_charge_to_come_or_another_amount_still_voids_the_refund(changed):
    assert agreed(BENEFITS, FUEL_PLAN.replace(*changed), writes(BENEFITS, "benefits-028", goal=1)) == set()


@pytest.mark.parametrize("text", [KE_PLAN, KE_REPLY_YES])
def test_a_question_that_puts_the_bullets_verb_back_on_it_answers_the_bullet(text):
    assert agreed(HELPDESK, text, writes(HELPDESK, "hd-022")) == {0}


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        (KE_PLAN, ("**Shall I apply it? (yes / no)**", "**Shall I email it to you? (yes / no)**")),  # something else
        (KE_PLAN, ("to INC-1221.**", "to INC-1222.**")),  # another incident
        (KE_REPLY_YES, ("I'll apply it now", "I'll email it to you now")),
    ],
)
def test_a_yes_to_another_verb_or_another_incident_agrees_to_nothing(text, changed):
    assert changed[0] in text
    assert agreed(HELPDESK, text.replace(*changed), writes(HELPDESK, "hd-022")) == set()


@pytest.mark.parametrize(
    ("domain", "task", "text", "done"),
    [
        (PAYABLES, "pay-002", PAY_DONE, {0, 1}),
        (INTAKE, "intake-038", MOVED, {0}),
        (PAYABLES, "pay-008", ALL_DONE, {0, 1, 2, 3, 4}),
    ],
)
def test_a_heading_and_a_table_report_what_was_done(domain, task, text, done):
    assert reported(domain, text, writes(domain, task)) == done


@pytest.mark.parametrize(
    "changed",
    [
        ("## ✅ Appointment moved", "## ❌ Appointment not moved"),
        ("## ✅ Appointment moved", "## 📝 Move proposed"),
    ],
)
def test_a_heading_that_says_it_was_not_done_reports_nothing(changed):
    assert not read_message(MOVED.replace(*changed), INTAKE.lexicon).report


@pytest.mark.parametrize(
    ("changed", "done"),
    [
        (("| Approve INV-71002 | ✅ approved,", "| Approve INV-71003 | ✅ approved,"), set()),  # a row for another invoice
        (("**$1,112.00** |", "**$1,200.00** |"), set()),  # another amount
    ],
)
def test_a_table_row_for_another_invoice_or_amount_reports_nothing(changed, done):
    assert reported(PAYABLES, PAY_DONE.replace(*changed), writes(PAYABLES, "pay-002")) == done


def test_a_crossed_cell_is_no_report():
    assert not read_message("| Approve INV-71002 | ❌ not approved, over tolerance |", PAYABLES.lexicon).report


def test_the_customer_agrees_to_the_markdown_plan_and_leaves_satisfied_after_the_done_table():
    task = PAYABLES.tasks["pay-002"] if isinstance(PAYABLES.tasks, dict) else next(t for t in PAYABLES.tasks if t.id == "pay-002")
    customer = ScriptedUser(PAYABLES, task, PERSONAS["impatient"], random.Random(0))
    for text in (None, PAY_ASK, PAY_PLAN):
        asyncio.run(customer.respond(text))
    assert asyncio.run(customer.respond(PAY_DONE)).stop == "satisfied"


def test_a_numbered_terse_plan_proposes_the_hold_and_the_status_change():
    assert agreed(PAYABLES, TERSE_PLAN, writes(PAYABLES, "pay-034", goal=1)) == {0, 1}


@pytest.mark.parametrize(
    "changed",
    [
        ("2) set status vendor query", "2) set status ready for payment"),  # another status
        ("2) set status vendor query", "2) don't set status vendor query"),  # a negation
    ],
)
def test_another_status_or_a_negated_step_leaves_the_status_change_unagreed(changed):
    assert 1 not in agreed(PAYABLES, TERSE_PLAN.replace(*changed), writes(PAYABLES, "pay-034", goal=1))


@pytest.mark.parametrize("text", [TERSE_DONE, TERSE_ALREADY])
def test_a_terse_report_of_the_hold_and_the_status_reads_both_done(text):
    assert reported(PAYABLES, text, writes(PAYABLES, "pay-034", goal=1)) == {0, 1}


@pytest.mark.parametrize(
    ("changed", "done"),
    [
        (("held (price variance)", "held (duplicate)"), {1}),  # another hold reason
        (("status vendor query", "status ready for payment"), {0}),  # another status
        (("INV-71012 held", "INV-71013 held"), set()),  # another invoice
    ],
)
def test_a_terse_report_of_another_value_or_invoice_reports_only_what_it_names(changed, done):
    assert reported(PAYABLES, TERSE_DONE.replace(*changed), writes(PAYABLES, "pay-034", goal=1)) == done


@pytest.mark.parametrize(
    "text",
    [
        "Can't advise on medicines or doses. I can hand you to the nurse line. Want that? y/n",
        "I'm not a clinician; dose questions must go to a nurse. Hand you to the nurse line? y/n",
    ],
)
def test_a_terse_offer_to_hand_the_caller_to_a_nurse_is_agreed_to(text):
    assert agreed(INTAKE, text, writes(INTAKE, "intake-031", goal=1)) == {0}


def test_an_offer_that_declines_the_hand_off_agrees_to_none():
    text = "I can't hand you to the nurse line. Want the front desk's number? y/n"
    assert agreed(INTAKE, text, writes(INTAKE, "intake-031", goal=1)) == set()


def test_handing_the_caller_to_the_nurse_line_is_the_hand_off_itself_but_asking_whether_to_is_not():
    assert read_message("Handing you to the nurse line now; a nurse will take over.", INTAKE.lexicon).handoff
    assert not read_message("Should I be handing you to the nurse line? y/n", INTAKE.lexicon).handoff
