"""What a domain author needs to write tools: a marker decorator and the two ways a tool can fail.

Tools are plain functions ``fn(db: sqlite3.Connection, **typed_args) -> JSON-able``. Inside a tool,
failures are exceptions; the environment turns them into the three-shape result the agent sees
(see ``passhat.env.tools``), so a tool author never builds result envelopes by hand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


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

    ``target``: the argument naming the entity the call acts on (an order id, a customer id); graders
    pair actual writes with expected ones by it. ``confirm_keys``: arguments whose values a proposal
    must mention for a customer's "yes" to count as confirming this call, when the domain does not say
    more (``Domain.proposal_terms``). ``confirm_words``: the action's words (case-insensitive regex
    fragments, matched at a word start, e.g. ``r"call(?:ing)? off"``), one of which that proposal must
    offer, so a yes to "cancel order X" never confirms a return on order X.
    ``identifies``: an identity lookup, whose arguments must come from the customer's own words — an
    agent that authenticates someone with an email it read from an order has verified no one.
    ``free_text``: arguments that
    carry prose (a summary for a human) and are not compared between calls.
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
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a function as a tool. Writes need a confirmed proposal unless told otherwise."""

    meta = ToolMeta(
        write=write,
        idempotent=idempotent,
        needs_confirmation=write if needs_confirmation is None else needs_confirmation,
        ends_conversation=ends_conversation,
        target=target,
        confirm_keys=confirm_keys if confirm_keys is not None else ((target,) if target else ()),
        confirm_words=confirm_words,
        identifies=identifies,
        free_text=free_text,
    )

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__passhat_tool__ = meta  # type: ignore[attr-defined]
        return fn

    return mark
