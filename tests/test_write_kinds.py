"""Write arguments are equal when the backend would store the same thing: domains declare each argument's kind
(``@tool(kinds=...)``) and the graders compare calls by the canonical value of that kind, never by the raw string."""

from __future__ import annotations

import importlib
import sqlite3

import pytest

from passhat.dialogue.values import VALUE_KINDS, canonical
from passhat.domains.model import Action, Domain
from passhat.domains.toolkit import tool
from passhat.env import tool_registry
from passhat.env.tools import spec_for
from passhat.errors import UserError
from passhat.grade.writes import WriteCall, pair_writes
from passhat.guard.confirmation import commitment_for, unconfirmed

DOMAINS = ("retail", "payables", "helpdesk", "benefits", "intake")


def domain(name: str) -> Domain:
    return importlib.import_module(f"passhat.domains.{name}").DOMAIN


@pytest.mark.parametrize(
    ("kind", "said", "stored"),
    [
        ("phone", "413-555-0108", "4135550108"),
        ("phone", "(413) 555 0108", "4135550108"),
        ("phone", "413.555.0108", "4135550108"),
        ("phone", "+1 413 555 0108", "4135550108"),
        ("id", "inv-71014", "INV-71014"),
        ("id", " INV-71014 ", "INV-71014"),
        ("code", "nw 5102-231", "NW5102231"),
        ("email", " Dana@Example.com", "dana@example.com"),
        ("money", 1523.2, "1523.20"),
        ("money", "$1,523.20", "1523.20"),
        ("money", 15, "15.00"),
        ("date", "June 18, 2025", "2025-06-18"),
        ("date", "18 June 2025", "2025-06-18"),
        ("date", "2025-06-18", "2025-06-18"),
        ("time", "9:30", "09:30"),
        ("time", "2:00 pm", "14:00"),
        ("time", "14:00", "14:00"),
    ],
)
def test_every_usual_form_is_stored_alike(kind, said, stored):
    assert canonical(kind, said) == canonical(kind, stored)


@pytest.mark.parametrize(
    ("kind", "said", "stored"),
    [
        ("phone", "413-555-0180", "4135550108"),  # two digits swapped
        ("phone", "413-555-010", "4135550108"),
        ("id", "INV-71041", "INV-71014"),
        ("id", "INV-710140", "INV-71014"),
        ("code", "NW5102232", "NW5102231"),
        ("money", 1523.21, "1523.20"),
        ("money", "$152.32", "1523.20"),
        ("date", "June 19, 2025", "2025-06-18"),
        ("date", "June 18, 2024", "2025-06-18"),
        ("date", "June 18", "2025-06-18"),  # no year: not what the backend stores
        ("time", "2:30 pm", "14:00"),
        ("time", "2:00 am", "14:00"),
        ("time", "12:00", "00:00"),
    ],
)
def test_a_respelled_but_different_value_stays_different(kind, said, stored):
    assert canonical(kind, said) != canonical(kind, stored)


def test_values_that_are_not_of_the_kind_and_lists_keep_their_shape():
    assert canonical("money", "a lot") == "a lot" and canonical("date", True) is True
    assert canonical("id", ["v-1", "V-2"]) == ["V-1", "V-2"]  # item by item, in order
    assert canonical("id", ["V-2", "V-1"]) != canonical("id", ["V-1", "V-2"])


def test_a_phone_number_in_any_grouping_is_the_transfer_the_task_expects():
    """intake-007: the caller said 413-555-0108, the ground truth holds 4135550108; the backend stores both alike."""
    intake = domain("intake")
    expected = intake.tasks["intake-007"].acceptable[0].actions
    tools = tool_registry(intake)
    for said in ("413-555-0108", "(413) 555-0108", "+1 413 555 0108"):
        call = WriteCall("hand_off_to_staff", {"phone": said, "summary": "ibuprofen dose question for the nurse line"})
        pairing = pair_writes([call], expected, tools)
        assert (len(pairing.matched), pairing.extra, pairing.missing) == (1, [], [])
    other = WriteCall("hand_off_to_staff", {"phone": "413-555-0180", "summary": "x"})
    assert pair_writes([other], expected, tools).extra == [other]


def test_a_lower_case_id_and_an_amount_without_its_last_zero_are_the_write_the_backend_took():
    payables = domain("payables")
    tools = tool_registry(payables)
    expected = [Action(tool="adjust_invoice", args={"invoice_id": "INV-71014", "amount": 1523.2})]
    same = WriteCall("adjust_invoice", {"invoice_id": "inv-71014", "amount": 1523.20})
    assert pair_writes([same], expected, tools).matched == [same]
    short = WriteCall("adjust_invoice", {"invoice_id": "inv-71014", "amount": 1532.20})
    assert pair_writes([short], expected, tools).wrong_arguments == [(short, WriteCall("adjust_invoice", expected[0].args))]


def test_a_booking_at_the_same_time_written_otherwise_is_the_same_booking():
    intake = domain("intake")
    tools = tool_registry(intake)
    args = {"patient_id": "P-1001", "clinician_id": "D-11", "date": "2025-06-18", "time": "09:30"}
    expected = [Action(tool="book_appointment", args=args)]
    same = WriteCall("book_appointment", args | {"patient_id": "p-1001", "time": "9:30"})
    assert pair_writes([same], expected, tools).matched == [same]
    later = WriteCall("book_appointment", args | {"time": "21:30"})
    assert pair_writes([later], expected, tools).wrong_arguments


def test_an_undeclared_argument_is_compared_as_it_is():
    """A reason is a word the backend stores as sent: another case is another reason."""
    retail = domain("retail")
    tools = tool_registry(retail)
    expected = [Action(tool="cancel_order", args={"order_id": "#W0000001", "reason": "no longer needed"})]
    other = WriteCall("cancel_order", {"order_id": "#w0000001", "reason": "No longer needed"})
    assert pair_writes([other], expected, tools).wrong_arguments


@pytest.mark.parametrize("name", DOMAINS)
def test_every_built_in_domain_declares_the_kind_of_every_id_its_writes_take(name):
    """An argument named like an id, a phone, an amount, a date or a time has a kind, so no domain compares it raw."""
    for spec in tool_registry(domain(name)).values():
        if not spec.meta.write:
            continue
        for arg in spec.schema["parameters"]["properties"]:
            shaped = arg.endswith(("_id", "_ids", "_number")) or arg in ("phone", "amount", "date", "time")
            assert not shaped or arg in spec.meta.kinds, f"{name}.{spec.name}({arg}) declares no kind"
    assert set(k for spec in tool_registry(domain(name)).values() for k in spec.meta.kinds.values()) <= set(VALUE_KINDS)


@pytest.mark.parametrize("kinds", [{"phon": "phone"}, {"phone": "telephone"}])
def test_a_kind_for_no_argument_or_an_unknown_kind_is_refused(kinds):
    with pytest.raises(UserError, match="kinds="):

        @tool(write=True, kinds=kinds)
        def call_back(db: sqlite3.Connection, phone: str) -> dict:
            return {}


@tool(
    write=True, target="member", confirm_keys=("member", "day", "at", "fee"), kinds={"day": "date", "at": "time", "fee": "money"}
)
def book_class(db: sqlite3.Connection, member: str, day: str, at: str, fee: str) -> dict:
    """Book a class for a member, charging its fee.

    Args:
        member: The member, e.g. M-1.
        day: The day, YYYY-MM-DD.
        at: The time, HH:MM.
        fee: The fee, e.g. 12.50.
    """
    return {}


BOOK = {"member": "M-1", "day": "2025-06-18", "at": "14:00", "fee": "12.50"}


@pytest.mark.parametrize(
    ("proposal", "confirmed"),
    [
        ("Shall I book M-1 on 2025-06-18 at 14:00 for $12.50?", True),
        ("Shall I book M-1 on Wednesday 18 June at 2pm for 12.50 dollars?", True),
        ("Shall I book M-1 on June 18, 2025 at 2:00 p.m. for USD 12.50?", True),
        ("Shall I book M-1 on June 18, 2025 at 2:30 p.m. for $12.50?", False),
        ("Shall I book M-1 on Thursday 18 June at 2pm for $12.50?", False),
        ("Shall I book M-1 on June 18, 2025 at 2pm for $15.00?", False),
    ],
)
def test_without_domain_terms_the_guard_reads_each_confirm_key_by_its_declared_kind(proposal, confirmed):
    """A team's own tools behind the Gateway get dates, times and amounts read in every usual form, from kinds alone."""
    spec = spec_for(book_class)
    unbound = unconfirmed(commitment_for(spec, BOOK), [("agent", proposal), ("user", "Yes, please.")])
    assert (unbound is None) is confirmed
