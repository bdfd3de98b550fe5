"""The machine-checkable clauses of the library's lending policy.

Each check runs before a write, against the backend as it is then, and returns why the call breaks the
rule, or None. A check never raises for a loan, member or title that does not exist: it returns None
and lets the tool report it, so a rule only ever speaks about the policy.
"""

from __future__ import annotations

import sqlite3

from passhat.domains.model import Call, Rule
from passhat.domains.toolkit import one

from .tools import TOOLS, card_digits, fines_due, is_overdue, loan_of

MAX_RENEWALS = 2
FINES_LIMIT = 10.0  # late fees above this block renewals and new holds
WRITES = tuple(fn.__name__ for fn in TOOLS if fn.__passhat_tool__.write)


def _verified(history: list[Call]) -> list[str]:
    """Members that earlier successful identity lookups found, first one first."""
    found: list[str] = []
    for call in history:
        result = call.result or {}
        if call.name == "find_member" and result.get("status") == "ok" and result.get("data") not in found:
            found.append(result["data"])
    return found


def _member_acted_on(db: sqlite3.Connection, call: Call) -> str | None:
    """The member a write acts on: the loan's borrower, the named member, or the card's holder; None if unknown."""
    if "loan_id" in call.args:
        loan = loan_of(db, str(call.args["loan_id"]).strip())
        return loan["member_id"] if loan else None
    if "card_number" in call.args:
        found = one(db, "SELECT id FROM members WHERE card_number = ?", card_digits(str(call.args["card_number"])))
    else:
        found = one(db, "SELECT id FROM members WHERE id = ?", call.args.get("member_id"))
    return found["id"] if found else None


def identify_first(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    member, verified = _member_acted_on(db, call), _verified(history)
    if member is None or verified[:1] == [member]:
        return None
    if not verified:
        return f"{call.name} acts on member {member}, whose identity was not verified earlier in the conversation"
    return f"{call.name} acts on member {member}, but this conversation is with member {verified[0]}"


def renewal_limits(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    loan = loan_of(db, str(call.args.get("loan_id", "")).strip())
    if loan is None or loan["returned"]:
        return None
    if is_overdue(loan):
        return f"loan {loan['id']} ({loan['name']}) is overdue: it was due on {loan['due_date']}, and an overdue loan cannot be renewed"
    if loan["renewals"] >= MAX_RENEWALS:
        return f"loan {loan['id']} ({loan['name']}) was already renewed twice, the most a loan can be renewed"
    return None


def fines_limit(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    member = _member_acted_on(db, call)
    owed = fines_due(db, member) if member else 0.0
    if owed <= FINES_LIMIT:
        return None
    return (
        f"member {member} owes ${owed:.2f} in late fees, over the fines limit of ${FINES_LIMIT:.2f}, so renewals "
        "and holds are blocked until the fees are paid down"
    )


def no_hold_on_own_loan(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    loan = one(
        db,
        "SELECT l.id, t.name, t.format FROM loans l JOIN titles t ON t.id = l.title_id"
        " WHERE l.member_id = ? AND l.title_id = ? AND l.returned = 0",
        call.args.get("member_id"),
        call.args.get("title_id"),
    )
    if loan is None:
        return None
    return f"{loan['name']} ({loan['format']}) is already on loan to member {call.args['member_id']} as loan {loan['id']}"


RULES: tuple[Rule, ...] = (
    Rule(
        "identify-first",
        "Act only for the member verified (card number and date of birth) in this conversation.",
        WRITES,
        identify_first,
    ),
    Rule(
        "renewal-limits", "An overdue loan cannot be renewed, nor a loan renewed twice already.", ("renew_loan",), renewal_limits
    ),
    Rule(
        "fines-limit",
        f"A member owing more than ${FINES_LIMIT:.2f} in late fees can neither renew nor place holds.",
        ("renew_loan", "place_hold"),
        fines_limit,
    ),
    Rule("no-hold-on-own-loan", "A member cannot hold a title they have on loan.", ("place_hold",), no_hold_on_own_loan),
)
