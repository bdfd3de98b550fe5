"""The hook through which a domain's tools move money: a payment channel, when a guard put one on the path.

Without a channel (the default) a tool records its charges and refunds in its own tables only, as the
backend always has. With the payments guard on, the gateway opens a channel around each call, and a
tool asks it for every movement before recording it. The channel's provider may refuse (a
``ToolFailure``, so the whole call rolls back and the agent gets an error result) or answer that this
movement already happened under its idempotency key (a replay: the tool records nothing new). The
domain stays free of the guard: it only knows this protocol.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import sqlite3
from collections.abc import Iterator
from typing import Literal, Protocol

MovementKind = Literal["charge", "refund"]


@dataclasses.dataclass(frozen=True)
class Movement:
    """One charge or refund as a tool asks for it; ``amount`` is positive, in ``currency``.

    What the money is for is an *account* the domain names (a purchase, an invoice, a membership):
    ``account`` is its id, unique among the domain's accounts of every kind, and ``owner`` whose it is.
    ``account_kind`` is the domain's noun for it, which the provider's refusals use ("invoice INV-7 is
    paid in USD"), since the agent reads them. ``method_owner`` and ``prior`` are the backend's own record
    (whose payment method it is, and the account's movements before this one as (method, signed
    amount)): a provider that meets the account or the method for the first time mirrors them, and
    from then on trusts only its own ledger.
    """

    kind: MovementKind
    account: str
    owner: str
    method_id: str
    method_owner: str
    amount: float
    currency: str
    prior: tuple[tuple[str, float], ...] = ()
    account_kind: str = "account"


@dataclasses.dataclass(frozen=True)
class Receipt:
    movement_id: str
    replayed: bool = False  # the same key moved this money before: nothing moved now


class Channel(Protocol):
    def move(self, db: sqlite3.Connection, movement: Movement) -> Receipt: ...


_current: contextvars.ContextVar[Channel | None] = contextvars.ContextVar("passhat_payment_channel", default=None)


def current_channel() -> Channel | None:
    """The channel of the call being executed, or None when money moves in the backend alone."""
    return _current.get()


@contextlib.contextmanager
def paying_through(channel: Channel) -> Iterator[None]:
    """Route the movements of the tool calls made inside this block through ``channel``."""
    token = _current.set(channel)
    try:
        yield
    finally:
        _current.reset(token)
