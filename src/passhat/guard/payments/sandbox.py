"""The sandbox payment provider: validates every charge and refund against its own ledger; no real money.

Money is for an account the domain names (``Movement.account``, its kind in ``account_kind``). It
refuses, as a tool error the agent can read, in the domain's words: an amount that is not a positive
number of cents; a currency other than the account's; a payment method that is not the account
owner's (by the provider's own record of who owns it); a refund beyond what remains refundable on
the account (all charges minus all refunds so far, whichever methods they went to); and a key reused
for another movement. The same key for the same movement answers the first receipt again and moves nothing.
Its ledger entries are written in the caller's transaction (the tool call's), never committed here.
"""

from __future__ import annotations

import math
import sqlite3
from typing import ClassVar

from passhat.domains.payments import Movement, Receipt
from passhat.domains.toolkit import ToolFailure
from passhat.guard.payments import ledger
from passhat.guard.payments.provider import PaymentProvider


class SandboxProvider(PaymentProvider):
    environment: ClassVar[str] = "sandbox"

    def open(self, db: sqlite3.Connection) -> None:
        with db:
            ledger.bind(db, self.environment)

    def charge(self, db: sqlite3.Connection, key: str, movement: Movement) -> Receipt:
        return self._move(db, key, movement, cents(movement.amount))

    def refund(self, db: sqlite3.Connection, key: str, movement: Movement) -> Receipt:
        return self._move(db, key, movement, -cents(movement.amount))

    def _move(self, db: sqlite3.Connection, key: str, movement: Movement, signed: int) -> Receipt:
        ledger.bind(db, self.environment)
        earlier = ledger.entry(db, key)
        if earlier is not None:
            return _replayed(earlier, key, movement, signed)
        account = ledger.account(db, movement.account) or ledger.open_account(
            db,
            movement.account,
            movement.owner,
            movement.currency,
            tuple((method, cents(amount, signed=True)) for method, amount in movement.prior),
        )
        _check_currency(account, movement)
        _check_owner(db, account, movement)
        if signed < 0:
            _check_refundable(db, movement, -signed)
        entry = ledger.record(db, key, movement.account, movement.method_id, signed)
        return Receipt(f"{self.environment}_{entry.seq}")


def cents(amount: float, signed: bool = False) -> int:
    """Dollars as integer cents; anything but a positive (or, for opening entries, any) whole number of cents is refused."""
    if not math.isfinite(amount) or (amount <= 0 and not signed) or abs(round(amount * 100) - amount * 100) > 1e-6:
        raise ToolFailure("invalid_amount", f"{amount!r} is not a positive amount in whole cents")
    return round(amount * 100)


def _replayed(earlier: ledger.Entry, key: str, movement: Movement, signed: int) -> Receipt:
    if (earlier.account, earlier.method_id, earlier.cents) != (movement.account, movement.method_id, signed):
        raise ToolFailure(
            "payment_idempotency_conflict",
            f"payment key {key} already moved {earlier.cents / 100:+.2f} on {earlier.method_id} for {earlier.account}; "
            "a different movement needs a new key",
        )
    return Receipt(f"{SandboxProvider.environment}_{earlier.seq}", replayed=True)


def _check_currency(account: ledger.Account, movement: Movement) -> None:
    if movement.currency != account.currency:
        raise ToolFailure(
            "currency_mismatch",
            f"{movement.account_kind} {account.id} is paid in {account.currency}, not {movement.currency}",
        )


def _check_owner(db: sqlite3.Connection, account: ledger.Account, movement: Movement) -> None:
    owner = ledger.owner(db, movement.method_id) or ledger.attach(db, movement.method_id, movement.method_owner)
    if owner != account.owner or movement.owner != account.owner:
        raise ToolFailure(
            "payment_method_not_owned",
            f"payment method {movement.method_id} belongs to {owner}, and {movement.account_kind} {account.id} to {account.owner}"
            + ("" if movement.owner == account.owner else f", not {movement.owner}"),
        )


def _check_refundable(db: sqlite3.Connection, movement: Movement, asked: int) -> None:
    charged, refunded = ledger.totals(db, movement.account).get(movement.account, (0, 0))
    if refunded + asked > charged:
        raise ToolFailure(
            "refund_exceeds_refundable",
            f"a refund of ${asked / 100:.2f} on {movement.account_kind} {movement.account} is more than the ${(charged - refunded) / 100:.2f} "
            "that remains refundable",
        )
