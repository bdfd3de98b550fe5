"""What a domain author needs to write tools: a marker decorator and the two ways a tool can fail.

Tools are plain functions ``fn(db: sqlite3.Connection, **typed_args) -> JSON-able``. Inside a tool,
failures are exceptions; the environment turns them into the three-shape result the agent sees
(see ``passhat.env.tools``), so a tool author never builds result envelopes by hand.
"""

from __future__ import annotations

import dataclasses
import inspect
import sqlite3
from collections.abc import Callable, Collection, Sequence
from typing import Any

from passhat.dialogue.lexicon import HANDOFF_WORDS
from passhat.dialogue.values import VALUE_KINDS, ValueKind
from passhat.domains.model import Call
from passhat.errors import UserError


class NotFound(Exception):
    """The lookup ran fine and found nothing: the agent sees ``{"found": false, ...}``."""

    def __init__(self, what: str, key: Any):
        super().__init__(f"no {what} matches {key!r}")
        self.what, self.key = what, key


class ToolFailure(Exception):
    """The call cannot be carried out (bad state, policy of the system itself): an error result."""

    def __init__(self, type: str, message: str, retryable: bool = False):
        super().__init__(message)
        self.type, self.message, self.retryable = type, message, retryable


@dataclasses.dataclass(frozen=True)
class ToolMeta:
    """MCP-style annotations of a tool, read by the environment and the graders.

    ``target``: the argument naming the entity the call acts on (an invoice id, a customer id); graders
    pair actual writes with expected ones by it. ``confirm_keys``: arguments whose values a proposal
    must mention for a customer's "yes" to count as confirming this call, when the domain does not say
    more (``Domain.proposal_terms``). ``confirm_words``: the action's words (case-insensitive regex
    fragments, matched at a word start, e.g. ``r"call(?:ing)? off"``), one of which that proposal must
    offer, so a yes to "cancel X" never confirms a refund of X.
    ``identifies``: an identity lookup, whose arguments must come from the customer's own words — an
    agent that authenticates someone with an email it read from a record has verified no one.
    ``free_text``: arguments that carry prose (a summary for a human) and are not compared between calls.
    ``kinds``: what an argument holds, when the backend stores it in a canonical form ("phone", "id", "money",
    "date", ...: :data:`passhat.dialogue.values.ValueKind`), so that two calls the backend would store alike are
    the same write ("413-555-0108" and "4135550108"); an argument not named is compared as it is.
    ``prose``: fields of the tool's *result* holding text a third party wrote (a review, a name a
    seller chose, an address line a customer typed): where an instruction aimed at the agent can hide,
    so the ``injected_instruction`` fault puts its text there. A name covers that field wherever it
    sits in the result (rows nest: the lines of an invoice, the products of a category).
    """

    write: bool = False
    idempotent: bool = False
    needs_confirmation: bool = False
    ends_conversation: bool = False
    target: str | None = None
    confirm_keys: tuple[str, ...] = ()
    confirm_words: tuple[str, ...] = ()
    identifies: bool = False
    free_text: tuple[str, ...] = ()
    kinds: dict[str, ValueKind] = dataclasses.field(default_factory=dict)
    prose: tuple[str, ...] = ()


def tool(
    *,
    write: bool = False,
    idempotent: bool = False,
    needs_confirmation: bool | None = None,
    ends_conversation: bool = False,
    target: str | None = None,
    confirm_keys: tuple[str, ...] | None = None,
    confirm_words: tuple[str, ...] = (),
    identifies: bool = False,
    free_text: tuple[str, ...] = (),
    kinds: dict[str, ValueKind] | None = None,
    prose: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a function as a tool. Writes need a confirmed proposal unless told otherwise.

    A ``prose`` field that a result lacks is fine, not an error: a declaration says where a third
    party's text *may* appear, and results vary per call (an optional field left out, a list that is
    empty, a lookup that found nothing); the decorator never sees a result to check it against, and a
    name that matches nothing only means no text is hidden there. A declaration that is not a tuple
    of field names is an error, though: ``prose="review"`` would silently name the letters r, e, v...
    """

    meta = ToolMeta(
        write=write,
        idempotent=idempotent,
        needs_confirmation=write if needs_confirmation is None else needs_confirmation,
        ends_conversation=ends_conversation,
        target=target,
        confirm_keys=confirm_keys if confirm_keys is not None else ((target,) if target else ()),
        # a hand-off that declares no words is said as hand-offs are: else any proposal or report would name it
        confirm_words=confirm_words or (HANDOFF_WORDS if ends_conversation else ()),
        identifies=identifies,
        free_text=free_text,
        kinds=dict(kinds or {}),
        prose=prose,
    )

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in ("free_text", "prose"):
            _check_field_names(fn, option, getattr(meta, option))
        _check_kinds(fn, meta.kinds)
        fn.__passhat_tool__ = meta  # type: ignore[attr-defined]
        return fn

    return mark


def _check_field_names(fn: Callable[..., Any], option: str, names: Any) -> None:
    """Refuse a declaration of fields that is not a tuple of names (a bare string is the usual slip)."""
    if not isinstance(names, tuple) or not all(isinstance(n, str) and n for n in names):
        raise UserError(
            f"tool {fn.__qualname__} ({fn.__module__}) declares {option}={names!r}; {option} is a tuple of field names, "
            f'e.g. {option}=("summary",) for one field.'
        )


def _check_kinds(fn: Callable[..., Any], kinds: dict[str, Any]) -> None:
    """Refuse a kind for an argument the tool does not take, or a kind the engine does not know: either would
    leave two calls the backend stores alike unequal, silently."""
    params = list(inspect.signature(fn).parameters)[1:]
    for name, kind in kinds.items():
        if name not in params or kind not in VALUE_KINDS:
            raise UserError(
                f"tool {fn.__qualname__} ({fn.__module__}) declares kinds={{{name!r}: {kind!r}}}; name one of its "
                f"arguments ({', '.join(params)}) and one of the kinds {', '.join(VALUE_KINDS)}."
            )


# -- queries: what a domain's tools, rules and conversation helpers read the backend with ---------------------


def rows(db: sqlite3.Connection, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Query results as dicts, whatever row factory the connection uses."""
    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=False)) for r in cursor.fetchall()]


def one(db: sqlite3.Connection, sql: str, *params: Any) -> dict[str, Any] | None:
    """The first row of a query as a dict, or None."""
    found = rows(db, sql, *params)
    return found[0] if found else None


class Review(str):
    """What a gate rule returns when the policy says how a ticket is to be handled: still the reason a person must
    approve the call (``Rule.check`` returns a str), with the ticket's ``priority`` (by amount, by tier) and an
    internal ``note`` for the person who takes it. A plain reason files a ticket of the default priority."""

    priority: str
    note: str

    def __new__(cls, reason: str, priority: str, note: str = "") -> Review:
        made = super().__new__(cls, reason)
        made.priority, made.note = priority, note
        return made


def identified(history: Sequence[Call], tools: Collection[str]) -> list[str]:
    """Who the successful identity lookups (calls of ``tools``) in ``history`` found, first one first: the one meaning
    of "verified" that a domain's rules and the graders share (a lookup's result data is the id it found)."""
    found: list[str] = []
    for call in history:
        result = call.result or {}
        data = result.get("data")
        if call.name in tools and result.get("status") == "ok" and isinstance(data, str) and data not in found:
            found.append(data)
    return found


def checked_first(checks: dict[str, str], key: str) -> Callable[[sqlite3.Connection, Call, list[Call]], str | None]:
    """A rule's check for a policy that names the reads to make before a write ("read the duplicate check before
    you decide"): the write breaks it unless each tool of ``checks`` (tool -> what it checks, as the reason says it)
    ran successfully earlier in the conversation on the same record, the value of the ``key`` argument in any case
    and spacing; in any order, and any time before the write. A write without the key is left to the tool."""

    def check(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
        record = _record_key(call.args.get(key))
        if not record:
            return None
        done = {c.name for c in history if (c.result or {}).get("status") == "ok" and _record_key(c.args.get(key)) == record}
        missing = [what for tool_name, what in checks.items() if tool_name not in done]
        if not missing:
            return None
        return (
            f"{call.name} was called for {call.args[key]} before {' and '.join(missing)} for it, which the policy requires first"
        )

    return check


def _record_key(value: Any) -> str:
    return "".join(str(value).split()).upper() if value is not None else ""
