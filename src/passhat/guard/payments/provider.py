"""The payment-provider interface the payments guard puts between a domain's tools and the money.

A provider belongs to one environment and moves money on a backend it has opened (bound) for that
environment. ``KeyedChannel`` is how one gateway call reaches it: the call's movements, in order, get
idempotency keys derived from the call's own key, so a call replayed with its key moves nothing twice.
"""

from __future__ import annotations

import abc
import sqlite3
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
    """The channel of one gateway call (``domains.payments.Channel``): movement n gets key ``prefix#n``."""

    def __init__(self, provider: PaymentProvider, prefix: str):
        self.provider, self.prefix, self._moved = provider, prefix, 0

    def move(self, db: sqlite3.Connection, movement: Movement) -> Receipt:
        self._moved += 1
        how = self.provider.charge if movement.kind == "charge" else self.provider.refund
        return how(db, f"{self.prefix}#{self._moved}", movement)
