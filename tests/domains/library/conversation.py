"""How the library is talked about: ids in text, how a write is proposed and what a yes to it agrees to,
the reads before a write, who a member's words identify, and the plausible wrong versions of a write.

Members know their loans and holds by the title's name (and its format, when the work comes in several),
never by id, so every id here has a spoken alternative. Everything here reads the backend, never writes it.
"""

from __future__ import annotations

import re
import sqlite3

from passhat.dialogue.proposals import Term
from passhat.dialogue.values import names_phrase
from passhat.domains.model import Action, Customer, NearMiss
from passhat.domains.toolkit import one, rows

from .data import BRANCHES
from .tools import TOOLS, card_digits, loan_of, renewed_due_date, title_of

# Members (M-1001), titles (T-201) and loans (L-50101), as written in free text.
ID_PATTERN = r"(?<![\w-])(?:M-\d{4}|T-\d{3}|L-\d{5})(?![\w-])"

_WORDS = {fn.__name__: fn.__passhat_tool__.confirm_words for fn in TOOLS}
PROPOSAL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "renew": _WORDS["renew_loan"],
    "hold": _WORDS["place_hold"],
    "cancel_hold": _WORDS["cancel_hold"],
    "info": (),
    "transfer": ("refer", "librarian", "transfer"),
}

_CARD = re.compile(r"(?<![\d-])\d{4}[ -]?\d{4}[ -]?\d{4}(?![\d-])")
_ISO_DATE = re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])")


def authenticate(identity: Customer, text: str) -> Action | None:
    """The identity lookup the member's words allow: a card number and a date of birth, both as written."""
    card, born = _CARD.search(text), _ISO_DATE.search(text)
    if card is None or born is None:
        return None
    return Action(tool="find_member", args={"card_number": card_digits(card.group()), "birth_date": born.group()})


def describe_action(db: sqlite3.Connection, action: Action) -> str:
    """One sentence proposing a write, naming the loan or title (with its format) and every detail it sets."""
    a, tool = action.args, action.tool
    if tool == "renew_loan":
        loan = loan_of(db, a.get("loan_id", ""))
        if loan is None:
            return f"renew loan {a.get('loan_id')}"
        return (
            f"renew loan {loan['id']} ({loan['name']}, {loan['format']}), moving its due date from "
            f"{loan['due_date']} to {renewed_due_date(loan)}"
        )
    if tool == "place_hold":
        return f"place a hold on {_title_words(db, a.get('title_id', ''))} for pickup at the {a.get('branch')} branch"
    if tool == "cancel_hold":
        return f"cancel your hold on {_title_words(db, a.get('title_id', ''))}"
    if tool == "refer_to_librarian":
        return f"refer you to a librarian with this summary: {a.get('summary')}"
    return f"call {tool} with {a}"


def _title_words(db: sqlite3.Connection, title_id: str) -> str:
    """``The Salt Road (audiobook, T-202)``: the name members know, the format, and the id."""
    title = title_of(db, title_id)
    return f"{title['name']} ({title['format']}, {title_id})" if title else f"title {title_id}"


def proposal_terms(db: sqlite3.Connection, action: Action) -> list[Term]:
    """What a yes to ``action`` agrees to: the loan or the title (by id, or by name and format) and, for a
    hold, the pickup branch."""
    a, tool = action.args, action.tool
    if tool == "renew_loan":
        loan = loan_of(db, a.get("loan_id", ""))
        spoken = (Term("phrase", loan["name"], "loan"),) if loan else ()
        return [Term("id", a.get("loan_id", ""), "loan", alternatives=spoken)]
    if tool == "place_hold":
        return [_title_term(db, a.get("title_id", "")), Term("phrase", str(a.get("branch", "")), "pickup branch")]
    if tool == "cancel_hold":
        return [_title_term(db, a.get("title_id", ""))]
    return []


def _title_term(db: sqlite3.Connection, title_id: str) -> Term:
    """A title by its id, or by its name; with its format said in the same sentence (and no other format's
    word) when the work comes in several."""
    title = title_of(db, title_id)
    if title is None:
        return Term("id", title_id, "title")
    others = _other_formats(db, title)
    spoken = (
        Term("description", title["name"], "title", words=(title["format"],), unlike=tuple(o["format"] for o in others))
        if others
        else Term("phrase", title["name"], "title")
    )
    return Term("id", title_id, "title", alternatives=(spoken,))


def _other_formats(db: sqlite3.Connection, title: dict) -> list[dict]:
    return rows(db, "SELECT id, format FROM titles WHERE name = ? AND id != ? ORDER BY id", title["name"], title["id"])


def lookups(db: sqlite3.Connection, action: Action) -> list[Action]:
    """The reads a careful agent makes before proposing ``action``: the loan, or the title in the catalogue."""
    a = action.args
    if action.tool == "renew_loan":
        return [Action(tool="get_loan", args={"loan_id": a["loan_id"]})]
    if action.tool in ("place_hold", "cancel_hold"):
        return [Action(tool="search_catalogue", args={"query": a["title_id"]})]
    return []


def near_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
    """Plausible wrong versions of a write that the backend accepts: another of the member's loans or holds,
    another format of the wanted work, another pickup branch."""
    a = action.args
    if action.tool == "renew_loan":
        loan = loan_of(db, a.get("loan_id", ""))
        others = rows(
            db,
            "SELECT id FROM loans WHERE member_id = ? AND id != ? AND returned = 0 ORDER BY id",
            loan["member_id"] if loan else None,
            a.get("loan_id"),
        )
        return [
            NearMiss("another loan", Action(tool="renew_loan", args={"loan_id": o["id"]}), "wrong_entity_write")
            for o in others[:1]
        ]
    if action.tool == "cancel_hold":
        others = rows(
            db,
            "SELECT title_id FROM holds WHERE member_id = ? AND title_id != ? AND status != 'cancelled' ORDER BY title_id",
            a.get("member_id"),
            a.get("title_id"),
        )
        return [
            NearMiss("another hold", Action(tool="cancel_hold", args={**a, "title_id": o["title_id"]}), "wrong_entity_write")
            for o in others[:1]
        ]
    if action.tool == "place_hold":
        return _hold_misses(db, action)
    return []


def _hold_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
    a = action.args
    title = title_of(db, a.get("title_id", ""))
    formats = [
        o
        for o in (_other_formats(db, title) if title else [])
        if not one(
            db,
            "SELECT 1 AS held FROM holds WHERE member_id = ? AND title_id = ? AND status != 'cancelled'",
            a.get("member_id"),
            o["id"],
        )
    ]
    out = [
        NearMiss("another format", Action(tool="place_hold", args={**a, "title_id": o["id"]}), "wrong_entity_write")
        for o in formats[:1]
    ]
    branch = next(b for b in BRANCHES if b != a.get("branch"))
    out.append(NearMiss("another branch", Action(tool="place_hold", args={**a, "branch": branch}), "wrong_arguments"))
    return out


def names_entity(db: sqlite3.Connection, value: str, said: str) -> bool:
    """Whether the member's words name ``value``: a loan by its title's name, a title by its name (and its
    format, when the work comes in several)."""
    loan = loan_of(db, value)
    if loan is not None:
        return bool(names_phrase(said, loan["name"]))
    title = title_of(db, value)
    if title is None or not names_phrase(said, title["name"]):
        return False
    return not _other_formats(db, title) or bool(names_phrase(said, title["format"]))
