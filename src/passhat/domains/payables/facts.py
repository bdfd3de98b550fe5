"""The facts a payables task may ask the agent to tell, each derived from the backend, never recited.

Each returns a typed ``Fact`` so the graders match it by meaning: amounts as money (the variance, what
matched, what the tolerance allows, what is payable), the tolerance verdict and the queue status against
their rival values, and the earlier invoice a duplicate copies as an id.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from passhat.dialogue.facts import Fact
from passhat.domains.model import FactSource

from . import tools

VERDICTS = ("within tolerance", "over tolerance")
STATUSES: dict[str, tuple[str, ...]] = {  # a queue status and other words a clerk hears as the same
    "exception": ("in the exception queue",),
    "ready for payment": ("ready to pay",),
    "vendor query": ("queried with the vendor",),
    "with controller": ("with the controller",),
    "paid": (),
}


def _invoice(db: sqlite3.Connection, invoice_id: str) -> dict[str, Any]:
    invoice = tools.invoice_of(db, invoice_id)
    if invoice is None:
        raise LookupError(f"no invoice {invoice_id}")
    return invoice


def _amount(value: float, invoice_id: str) -> Fact:
    return Fact("money", f"{abs(value):.2f}", about=(invoice_id,))


def variance(db: sqlite3.Connection, invoice_id: str) -> Fact:
    return _amount(tools.match(db, _invoice(db, invoice_id))["variance"], invoice_id)


def matched_amount(db: sqlite3.Connection, invoice_id: str) -> Fact:
    return _amount(tools.match(db, _invoice(db, invoice_id))["matched_amount"], invoice_id)


def allowed_variance(db: sqlite3.Connection, invoice_id: str) -> Fact:
    return _amount(tools.allowed_variance(db, _invoice(db, invoice_id)), invoice_id)


def tolerance_verdict(db: sqlite3.Connection, invoice_id: str) -> Fact:
    verdict = VERDICTS[0] if tools.within_tolerance(db, _invoice(db, invoice_id)) else VERDICTS[1]
    return Fact("status", verdict, rivals=tuple(v for v in VERDICTS if v != verdict), about=(invoice_id,))


def duplicate_of(db: sqlite3.Connection, invoice_id: str) -> Fact:
    found = tools.duplicates_of(db, _invoice(db, invoice_id))
    if not found:
        raise LookupError(f"invoice {invoice_id} duplicates no other invoice")
    return Fact("identifier", found[0]["id"])


def queue_status(db: sqlite3.Connection, invoice_id: str) -> Fact:
    status = _invoice(db, invoice_id)["status"]
    rivals = tuple(s for s in STATUSES if s != status)
    return Fact("status", status, synonyms=STATUSES[status], rivals=rivals, about=(invoice_id,))


def payable_amount(db: sqlite3.Connection, invoice_id: str) -> Fact:
    payable = _invoice(db, invoice_id)["payable"]
    if payable is None:
        raise LookupError(f"invoice {invoice_id} has no payable amount: it is not approved or adjusted")
    return _amount(payable, invoice_id)


FACTS: dict[str, FactSource] = {
    "variance": FactSource("the variance on invoice {invoice_id} is {value}", variance),
    "matched_amount": FactSource("the matched amount of invoice {invoice_id} is {value}", matched_amount),
    "allowed_variance": FactSource("the allowed variance on invoice {invoice_id} is {value}", allowed_variance),
    "tolerance_verdict": FactSource("invoice {invoice_id} is {value}", tolerance_verdict),
    "duplicate_of": FactSource("invoice {invoice_id} duplicates invoice {value}", duplicate_of),
    "queue_status": FactSource("the status of invoice {invoice_id} is {value}", queue_status),
    "payable_amount": FactSource("the amount payable on invoice {invoice_id} is {value}", payable_amount),
}
