"""How the payables queue is talked about: ids in text, how a write is proposed and what a yes to it agrees
to, the reads before a write, who a clerk's words identify, and the plausible wrong versions of a write.

Clerks name invoices by their INV number and state what they want recorded (a hold reason, an adjusted
amount, a status); everything else the agent reads for itself. Everything here reads the backend, never writes it.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any, get_args

from passhat.dialogue.proposals import Term
from passhat.dialogue.values import money_in, names_identifier
from passhat.domains.model import Action, Customer, NearMiss
from passhat.domains.toolkit import rows

from .data import ACCOUNTS, AP_ACCOUNT
from .model import HoldReason
from .tools import TOOLS, duplicates_of, invoice_of

# Invoices (INV-71001), purchase orders (PO-4101), goods receipts (GR-8101) and vendors (V-101), as written in text.
ID_PATTERN = r"(?<![\w-])(?:INV-\d{5}|PO-\d{4}|GR-\d{4}|V-\d{3})(?![\w-])"

_WORDS = {fn.__name__: fn.__passhat_tool__.confirm_words for fn in TOOLS}
PROPOSAL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "approve": _WORDS["approve_invoice"],
    "adjust": _WORDS["adjust_invoice"],
    "hold": _WORDS["hold_invoice"],
    "escalate": _WORDS["escalate_invoice"],
    "post": _WORDS["post_to_ledger"],
    "status": _WORDS["update_status"],
    "note": _WORDS["add_audit_note"],
    "notify": _WORDS["notify"],
    "info": (),
    "transfer": ("transfer", "controller"),
}

_BADGE = re.compile(r"(?<![\w-])E-?\d{5}(?!\w)", re.I)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
DECISIONS = ("approve_invoice", "adjust_invoice", "hold_invoice", "escalate_invoice")


def authenticate(identity: Customer, text: str) -> Action | None:
    """The identity lookup the clerk's words allow: an employee number and a work email, both as written."""
    badge, email = _BADGE.search(text), _EMAIL.search(text)
    if badge is None or email is None:
        return None
    number = badge.group().upper()
    number = number if "-" in number else f"E-{number[1:]}"
    return Action(tool="find_clerk", args={"employee_number": number, "email": email.group().rstrip(".")})


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


def describe_action(db: sqlite3.Connection, action: Action) -> str:
    """One sentence proposing a write, naming the invoice (with its vendor) and every detail it sets."""
    a, tool = action.args, action.tool
    invoice = invoice_of(db, str(a.get("invoice_id", "")))
    named = f"invoice {a.get('invoice_id')}" + (f" from {invoice['vendor_name']}" if invoice else "")
    if tool == "approve_invoice":
        return f"approve {named} for payment in full, at its billed total" + (
            f" of {_money(invoice['total'])}" if invoice else ""
        )
    if tool == "adjust_invoice":
        billed = f" from its billed {_money(invoice['total'])}" if invoice else ""
        return f"adjust {named}{billed} to {_money(float(a.get('amount', 0)))}"
    if tool == "hold_invoice":
        return f"put {named} on hold with the reason {a.get('reason')}"
    if tool == "escalate_invoice":
        return f"escalate {named} to the controller for a decision"
    if tool == "post_to_ledger":
        if invoice is None or invoice["payable"] is None:
            return f"post {named} to the ledger at its approved amount"
        account = ACCOUNTS[invoice["category"]]
        return (
            f"post {named} to the ledger: {_money(invoice['payable'])} to expense account {account} "
            f"and to accounts payable {AP_ACCOUNT}"
        )
    if tool == "update_status":
        return f"mark {named} as {a.get('status')}"
    if tool == "add_audit_note":
        return f"add a note to the audit trail of {named}"
    if tool == "notify":
        who = f"the vendor, {invoice['vendor_name']}," if a.get("recipient") == "vendor" and invoice else "you, the clerk,"
        return f"email {who} a notice about invoice {a.get('invoice_id')}"
    if tool == "transfer_to_controller":
        return f"transfer you to the controller with this summary: {a.get('summary')}"
    return f"call {tool} with {a}"


def proposal_terms(db: sqlite3.Connection, action: Action) -> list[Term]:
    """What a yes to ``action`` agrees to: the invoice, and what the write sets (an amount, a reason, a status,
    who is told). What a careful proposal states for the record may be said, not required: the billed total, and
    for a duplicate hold the invoice it duplicates. A hold reason said as another reason conflicts; the vendor
    is told when the proposal names it ("email Northmoor Packaging")."""
    a, tool = action.args, action.tool
    invoice = invoice_of(db, str(a.get("invoice_id", "")))
    terms = [Term("id", str(a.get("invoice_id", "")), "invoice")] if "invoice_id" in a else []
    if invoice:
        terms.append(Term("money", f"{invoice['total']:.2f}", "billed total", required=False))
    if tool == "adjust_invoice":
        return [*terms, Term("money", f"{float(a.get('amount', 0)):.2f}", "adjusted amount")]
    if tool == "hold_invoice":
        reason = str(a.get("reason", ""))
        others = tuple(r for r in get_args(HoldReason) if r != reason)
        copied = duplicates_of(db, invoice) if invoice and reason == "duplicate" else []
        return [
            *terms,
            Term("phrase", reason, "hold reason", unlike=others),
            *(Term("id", d["id"], "duplicate of", required=False) for d in copied),
        ]
    if tool == "post_to_ledger" and invoice and invoice["payable"] is not None:
        return [*terms, Term("money", f"{invoice['payable']:.2f}", "amount posted", required=False)]
    if tool == "update_status":
        return [*terms, Term("phrase", str(a.get("status", "")), "status")]
    if tool == "notify":
        recipient = str(a.get("recipient", ""))
        named = (Term("phrase", invoice["vendor_name"], "recipient"),) if invoice and recipient == "vendor" else ()
        if recipient == "clerk":  # the clerk is who the agent talks to: "notify you by email", "email you a confirmation"
            named = tuple(Term("phrase", f"{verb} you", "recipient") for verb in ("notify", "email", "send", "copy", "tell"))
        return [*terms, Term("phrase", recipient, "recipient", alternatives=named)]
    return terms


def lookups(db: sqlite3.Connection, action: Action) -> list[Action]:
    """The reads a careful agent makes before proposing ``action``: for a decision to pay, the whole three-way
    match (invoice, order, receipts, variance, tolerance, duplicates); for a hold or an escalation, the variance
    and the duplicates (the duplicate check is what the checked-first rule asks before any decision); for a
    posting or a status, the invoice; for a vendor's notice, the vendor."""
    invoice = invoice_of(db, str(action.args.get("invoice_id", "")))
    if invoice is None:
        return []
    own = {"invoice_id": invoice["id"]}
    read = {
        "get_invoice": Action(tool="get_invoice", args=own),
        "variance": Action(tool="compute_variance", args=own),
        "duplicates": Action(tool="check_duplicates", args=own),
    }
    if action.tool in ("approve_invoice", "adjust_invoice"):
        order = {"po_id": invoice["po_id"]}
        return [
            read["get_invoice"],
            Action(tool="get_purchase_order", args=order),
            Action(tool="get_receipts", args=order),
            read["variance"],
            Action(tool="get_tolerance", args={"vendor_id": invoice["vendor_id"], "category": invoice["category"]}),
            read["duplicates"],
        ]
    if action.tool == "hold_invoice":
        return [read["get_invoice"], read["variance"], read["duplicates"]]
    if action.tool == "escalate_invoice":
        return [read["get_invoice"], read["variance"], read["duplicates"]]
    if action.tool in ("post_to_ledger", "update_status"):
        return [read["get_invoice"]]
    if action.tool == "notify" and action.args.get("recipient") == "vendor":
        return [Action(tool="get_vendor", args={"vendor_id": invoice["vendor_id"]})]
    return []


def near_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
    """Plausible wrong versions of a write that the backend accepts: another undecided invoice of the queue
    (the vendor's, else the company's), another hold reason, another amount, the other recipient."""
    a, tool = action.args, action.tool
    invoice = invoice_of(db, str(a.get("invoice_id", "")))
    if invoice is None:
        return []
    out = []
    if tool in (*DECISIONS, "add_audit_note"):
        other = _another_invoice(db, invoice)
        if other is not None:
            out.append(NearMiss("another invoice", Action(tool=tool, args={**a, "invoice_id": other}), "wrong_entity_write"))
    if tool == "adjust_invoice":
        out.append(NearMiss("the billed total", Action(tool=tool, args={**a, "amount": invoice["total"]}), "wrong_arguments"))
    if tool == "hold_invoice":
        reason = next(r for r in get_args(HoldReason) if r != a.get("reason"))
        out.append(NearMiss("another reason", Action(tool=tool, args={**a, "reason": reason}), "wrong_arguments"))
    if tool == "notify":
        other_side = "clerk" if a.get("recipient") == "vendor" else "vendor"
        out.append(NearMiss("the other recipient", Action(tool=tool, args={**a, "recipient": other_side}), "wrong_arguments"))
    return out


def _another_invoice(db: sqlite3.Connection, invoice: dict[str, Any]) -> str | None:
    """An undecided invoice of the queue a clerk could mix this one up with: the same vendor's first, else the company's."""
    found = rows(
        db,
        "SELECT id FROM invoices WHERE id != ? AND decision IS NULL AND status = 'exception' AND company = ?"
        " ORDER BY vendor_id != ?, id LIMIT 1",
        invoice["id"],
        invoice["company"],
        invoice["vendor_id"],
    )
    return found[0]["id"] if found else None


def names_entity(db: sqlite3.Connection, value: str, said: str) -> bool:
    """Whether the clerk's words name ``value``: an invoice by its number, or an amount they stated."""
    if re.fullmatch(r"-?\d+(?:\.\d+)?", value.strip()):
        return any(m.value == f"{float(value):.2f}" for m in money_in(said))
    return bool(names_identifier(said, value))
