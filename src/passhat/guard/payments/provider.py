"""The payment-provider interface the payments guard puts between a domain's tools and the money.

A provider belongs to one environment and moves money on a backend it has opened (bound) for that
environment. ``KeyedChannel`` is how one gateway call reaches it: the call's movements, in order, get
idempotency keys derived from the call's own name, so a call replayed with its key moves nothing twice.
A call's name must be unique to it whichever gateway instance makes it: its idempotency key (scoped to
its conversation), its ticket, or else its number among its conversation's calls, counted in the
backend (``next_call``) in the call's own transaction, so two gateways on one backend never share one.
"""

from __future__ import annotations

import abc
import sqlite3
from collections.abc import Callable
from typing import ClassVar

from passhat.domains.payments import Movement, Receipt


class PaymentProvider(abc.ABC):
    environment: ClassVar[str]

    @abc.abstractmethod
    def open(self, db: sqlite3.Connection) -> None:
        """Get the backend ready for this provider; raises ``ledger.EnvironmentMixed`` if bound elsewhere."""

    @abc.abstractmethod
    def charge(self, db: sqlite3.Connection, key: str, movement: Movement) -> Receipt:
        """Take ``movement.amount`` from the payment method, or raise ``ToolFailure`` saying why not."""

    @abc.abstractmethod
    def refund(self, db: sqlite3.Connection, key: str, movement: Movement) -> Receipt:
        """Send ``movement.amount`` back to the payment method, or raise ``ToolFailure`` saying why not."""


class KeyedChannel:
    """The channel of one gateway call (``domains.payments.Channel``): movement n gets key ``<call>#n``.

    ``name_call(db)`` names the call; it runs at the call's first movement, inside the call's transaction.
    """

    def __init__(self, provider: PaymentProvider, name_call: Callable[[sqlite3.Connection], str]):
        self.provider, self._name_call = provider, name_call
        self._call: str | None = None
        self._moved = 0

    def move(self, db: sqlite3.Connection, movement: Movement) -> Receipt:
        self._call = self._call or self._name_call(db)
        self._moved += 1
        how = self.provider.charge if movement.kind == "charge" else self.provider.refund
        return how(db, f"{self._call}#{self._moved}", movement)


CALLS = "_passhat_payment_calls"  # per conversation, how many of its keyless calls have moved money


def count_calls(db: sqlite3.Connection) -> None:
    """Create the call counters (after the fork, like the ledger: never in a state diff)."""
    with db:
        db.execute(f"CREATE TABLE IF NOT EXISTS {CALLS} (scope TEXT PRIMARY KEY, calls INTEGER NOT NULL)")


def next_call(db: sqlite3.Connection, scope: str) -> int:
    """The number of a new call in ``scope``, counted in the caller's transaction: a call that rolls back
    gives its number back along with its movements."""
    db.execute(f"INSERT INTO {CALLS} (scope, calls) VALUES (?, 1) ON CONFLICT (scope) DO UPDATE SET calls = calls + 1", (scope,))
    return db.execute(f"SELECT calls FROM {CALLS} WHERE scope = ?", (scope,)).fetchone()[0]
