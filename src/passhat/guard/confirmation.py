"""Bound confirmation: a write goes through only on the customer's yes to a proposal naming it.

The same test the trajectory grader applies after the fact (``dialogue.confirms``), applied before
the write: the customer's last message is an explicit yes, and the agent's message just before it
names every confirm key's value of this very call. A loose "yes" three turns back does not count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passhat.dialogue import confirms
from passhat.domains.toolkit import ToolMeta
from passhat.env.tools import error

Message = tuple[str, str]  # (role: "user" | "agent", text)


def unconfirmed(name: str, meta: ToolMeta, args: dict[str, Any], messages: Sequence[Message]) -> dict[str, Any] | None:
    """The error result telling the agent to ask first, or None when the write is confirmed."""
    if not meta.needs_confirmation:
        return None
    reply_at = _last(messages, "user", len(messages))
    proposal_at = _last(messages, "agent", reply_at) if reply_at is not None else None
    proposal = messages[proposal_at][1] if proposal_at is not None else None
    reply = messages[reply_at][1] if reply_at is not None else None
    if confirms(proposal, reply, [args.get(k) for k in meta.confirm_keys], meta.confirm_words):
        return None
    named = ", ".join(f"{k}={args.get(k)!r}" for k in meta.confirm_keys) or "its details"
    return error(
        "confirmation_required",
        f"{name} was not carried out: the customer has not confirmed it. Describe this exact action to the "
        f"customer ({named}), ask them to confirm, and call it again only after their explicit yes.",
    )


def _last(messages: Sequence[Message], role: str, before: int) -> int | None:
    return next((i for i in range(before - 1, -1, -1) if messages[i][0] == role), None)
