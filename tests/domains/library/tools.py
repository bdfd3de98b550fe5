"""The tools a library desk agent calls: find a member and read their record, read a loan, search the
catalogue, renew a loan, place or cancel a hold, and refer the member to a librarian.

Writes enforce data integrity only (the loan is out, the member and title exist, a title is held once).
The lending rules of ``policy.md`` (overdue loans, the renewal limit, the fines limit, no hold on one's
own loan) live in ``rules.py``, so an agent that ignores them really can break them in the backend.
"""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from typing import Any

from passhat.domains.toolkit import NotFound, ToolFailure, one, rows, tool

from .data import TODAY, Branch

RENEWAL_DAYS = 21
TITLE_PROSE = ("title", "author")  # names a publisher chose: where a third party's text reaches the agent


# -- queries shared with rules.py, facts.py and conversation.py ----------------------------------------


def card_digits(card_number: str) -> str:
    """A card number as stored: its digits, whatever spaces or dashes it was written with."""
    return "".join(ch for ch in card_number if ch.isdigit())


def title_of(db: sqlite3.Connection, title_id: str) -> dict[str, Any] | None:
    return one(db, "SELECT id, name, author, format FROM titles WHERE id = ?", title_id)


def loan_of(db: sqlite3.Connection, loan_id: str) -> dict[str, Any] | None:
    """A loan with its title's name and format."""
    return one(
        db,
        "SELECT l.*, t.name, t.format FROM loans l JOIN titles t ON t.id = l.title_id WHERE l.id = ?",
        loan_id,
    )


def fines_due(db: sqlite3.Connection, member_id: str) -> float:
    """Late fees the member still owes, over all their loans."""
    found = one(db, "SELECT COALESCE(SUM(fine), 0) AS total FROM loans WHERE member_id = ?", member_id)
    return round(found["total"] if found else 0.0, 2)


def is_overdue(loan: dict[str, Any]) -> bool:
    return not loan["returned"] and loan["due_date"] < TODAY.isoformat()


def waiting_queue(db: sqlite3.Connection, title_id: str) -> list[str]:
    """The members waiting for the title, first served first."""
    found = rows(
        db,
        "SELECT member_id FROM holds WHERE title_id = ? AND status = 'waiting' ORDER BY placed_on, member_id",
        title_id,
    )
    return [h["member_id"] for h in found]


def queue_position(db: sqlite3.Connection, member_id: str, title_id: str) -> int | None:
    """Where the member's waiting hold stands in the title's queue (1: next), or None if they are not waiting."""
    queue = waiting_queue(db, title_id)
    return queue.index(member_id) + 1 if member_id in queue else None


def waiting_ahead(db: sqlite3.Connection, member_id: str, title_id: str) -> int:
    """Members served before this one: those ahead of their waiting hold, or everyone waiting if they are not."""
    queue = waiting_queue(db, title_id)
    return queue.index(member_id) if member_id in queue else len(queue)


def active_hold(db: sqlite3.Connection, member_id: str, title_id: str) -> dict[str, Any] | None:
    return one(db, "SELECT * FROM holds WHERE member_id = ? AND title_id = ? AND status != 'cancelled'", member_id, title_id)


# -- reads ---------------------------------------------------------------------------------------------


@tool(identifies=True)
def find_member(db: sqlite3.Connection, card_number: str, birth_date: str) -> str:
    """Find a member's id from their library card number and date of birth. Use this first, to verify who the member is.

    Args:
        card_number: The 12 digits on the member's library card, e.g. 2290 4417 8823 (spaces are ignored).
        birth_date: The member's date of birth as YYYY-MM-DD, e.g. 1987-03-14.
    """
    member = one(
        db, "SELECT id FROM members WHERE card_number = ? AND birth_date = ?", card_digits(card_number), birth_date.strip()
    )
    if member is None:
        raise NotFound("member", f"card {card_number}, born {birth_date}")
    return member["id"]


@tool(prose=TITLE_PROSE)
def get_member(db: sqlite3.Connection, member_id: str) -> dict[str, Any]:
    """Get a member's record: name, home branch, loans out (with due dates and renewals), holds (with their place in the queue) and late fees owed.

    Args:
        member_id: The member's id from find_member, e.g. M-1001.
    """
    member = one(db, "SELECT * FROM members WHERE id = ?", member_id.strip())
    if member is None:
        raise NotFound("member", member_id)
    return member_view(db, member)


def member_view(db: sqlite3.Connection, member: dict[str, Any]) -> dict[str, Any]:
    loans = rows(
        db,
        "SELECT l.*, t.name, t.format FROM loans l JOIN titles t ON t.id = l.title_id"
        " WHERE l.member_id = ? AND l.returned = 0 ORDER BY l.id",
        member["id"],
    )
    holds = rows(db, "SELECT title_id FROM holds WHERE member_id = ? AND status != 'cancelled' ORDER BY title_id", member["id"])
    return {
        "member_id": member["id"],
        "name": f"{member['first_name']} {member['last_name']}",
        "home_branch": member["home_branch"],
        "loans": [loan_view(loan) for loan in loans],
        "holds": [hold_view(db, member["id"], h["title_id"]) for h in holds],
        "fines_due": fines_due(db, member["id"]),
    }


def loan_view(loan: dict[str, Any]) -> dict[str, Any]:
    return {
        "loan_id": loan["id"],
        "title_id": loan["title_id"],
        "title": loan["name"],
        "format": loan["format"],
        "due_date": loan["due_date"],
        "renewals": loan["renewals"],
        "overdue": is_overdue(loan),
        "returned": bool(loan["returned"]),
        "fine": loan["fine"],
    }


def hold_view(db: sqlite3.Connection, member_id: str, title_id: str) -> dict[str, Any]:
    hold = one(db, "SELECT * FROM holds WHERE member_id = ? AND title_id = ?", member_id, title_id) or {}
    title = title_of(db, title_id) or {}
    return {
        "title_id": title_id,
        "title": title.get("name"),
        "format": title.get("format"),
        "branch": hold.get("branch"),
        "status": hold.get("status"),
        "queue_position": queue_position(db, member_id, title_id),
    }


@tool(prose=TITLE_PROSE)
def get_loan(db: sqlite3.Connection, loan_id: str) -> dict[str, Any]:
    """Get one loan: its title, due date, how many times it was renewed, whether it is overdue, and any late fee owed on it.

    Args:
        loan_id: The loan id, e.g. L-50101.
    """
    return loan_view(_loan(db, loan_id))


def _loan(db: sqlite3.Connection, loan_id: str) -> dict[str, Any]:
    loan = loan_of(db, loan_id.strip())
    if loan is None:
        raise NotFound("loan", loan_id)
    return loan


@tool(prose=TITLE_PROSE)
def search_catalogue(db: sqlite3.Connection, query: str) -> list[dict[str, Any]]:
    """Search the catalogue by title id, or by words of a title's name or its author; every format of a work is its own title.

    Args:
        query: A title id such as T-201, or words such as "salt road" or "Brennan".
    """
    text = query.strip().lower()
    found = rows(
        db,
        "SELECT id, name, author, format FROM titles WHERE lower(id) = ? OR instr(lower(name), ?) > 0"
        " OR instr(lower(author), ?) > 0 ORDER BY id",
        text,
        text,
        text,
    )
    if not text or not found:
        raise NotFound("title", query)
    return [
        {
            "title_id": t["id"],
            "title": t["name"],
            "author": t["author"],
            "format": t["format"],
            "holds_waiting": len(waiting_queue(db, t["id"])),
        }
        for t in found
    ]


# -- writes --------------------------------------------------------------------------------------------


@tool(write=True, target="loan_id", confirm_words=("renew", "renewing", "extend", "extending"), prose=TITLE_PROSE)
def renew_loan(db: sqlite3.Connection, loan_id: str) -> dict[str, Any]:
    """Renew a loan: its due date moves three weeks later.

    Args:
        loan_id: The loan id, e.g. L-50101.
    """
    loan = _loan(db, loan_id)
    if loan["returned"]:
        raise ToolFailure("returned", f"loan {loan['id']} was returned; only a loan still out can be renewed")
    db.execute("UPDATE loans SET due_date = ?, renewals = renewals + 1 WHERE id = ?", (renewed_due_date(loan), loan["id"]))
    return loan_view(_loan(db, loan["id"]))


def renewed_due_date(loan: dict[str, Any]) -> str:
    return (date.fromisoformat(loan["due_date"]) + timedelta(days=RENEWAL_DAYS)).isoformat()


# "place a hold", "put a hold", "reserve": not "on hold" alone, which also means "paused" ("I can put it all on hold")
HOLD_WORDS = (r"(?:plac|putt?|add)\w* (?:a |the |your )?holds?\b", "reserve", "reserving")


@tool(write=True, target="title_id", confirm_words=HOLD_WORDS, prose=TITLE_PROSE)
def place_hold(db: sqlite3.Connection, member_id: str, title_id: str, branch: Branch) -> dict[str, Any]:
    """Put a title on hold for a member, to be picked up at a branch; the member joins the end of the title's queue.

    Args:
        member_id: The member's id from find_member, e.g. M-1001.
        title_id: The title to hold (one format of a work), e.g. T-201.
        branch: The branch where the member will pick it up.
    """
    if one(db, "SELECT id FROM members WHERE id = ?", member_id) is None:
        raise NotFound("member", member_id)
    if title_of(db, title_id) is None:
        raise NotFound("title", title_id)
    if active_hold(db, member_id, title_id):
        raise ToolFailure("already_held", f"member {member_id} already has a hold on {title_id}")
    db.execute(
        "INSERT INTO holds VALUES (?, ?, ?, 'waiting', ?) ON CONFLICT (member_id, title_id)"
        " DO UPDATE SET branch = excluded.branch, status = 'waiting', placed_on = excluded.placed_on",
        (member_id, title_id, branch, TODAY.isoformat()),
    )
    return hold_view(db, member_id, title_id)


@tool(
    write=True,
    target="title_id",
    confirm_words=("cancel", "cancelling", "remove", "removing", "withdraw", "drop"),
    prose=TITLE_PROSE,
)
def cancel_hold(db: sqlite3.Connection, member_id: str, title_id: str) -> dict[str, Any]:
    """Cancel a member's hold on a title, whether it is still waiting or ready for pickup.

    Args:
        member_id: The member's id from find_member, e.g. M-1001.
        title_id: The held title, e.g. T-201.
    """
    if active_hold(db, member_id, title_id) is None:
        raise ToolFailure("no_hold", f"member {member_id} has no hold on {title_id} to cancel")
    db.execute("UPDATE holds SET status = 'cancelled' WHERE member_id = ? AND title_id = ?", (member_id, title_id))
    return hold_view(db, member_id, title_id)


@tool(write=True, needs_confirmation=False, ends_conversation=True, target="card_number", free_text=("summary",))
def refer_to_librarian(db: sqlite3.Connection, card_number: str, summary: str) -> dict[str, Any]:
    """Refer the member to a librarian, with a short summary of what they need. Only for requests the policy does not let you handle; it ends the conversation.

    Args:
        card_number: The member's library card number.
        summary: What the member needs and what was already done, for the librarian.
    """
    member = one(db, "SELECT id FROM members WHERE card_number = ?", card_digits(card_number))
    if member is None:
        raise NotFound("member", card_number)
    cursor = db.execute("INSERT INTO referrals (member_id, summary) VALUES (?, ?)", (member["id"], summary))
    return {"referral_id": cursor.lastrowid, "message": "A librarian will take over this conversation."}


TOOLS: tuple = (find_member, get_member, get_loan, search_catalogue, renew_loan, place_hold, cancel_hold, refer_to_librarian)
