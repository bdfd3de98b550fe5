"""The sandbox provider's own books, kept in the backend's database next to the writes they pay for.

Why in the backend and not in memory: a movement is recorded inside the tool call's transaction, so
when the tool fails after the provider said yes, the ledger entry rolls back with the tool's rows and
the two can never drift apart (the same reason idempotency keys live there). The tables are created
after the backend was forked, so they carry no change triggers and never show in a state diff.

Money is booked per *account*, whatever the domain's noun for it (a purchase, an invoice): the
account's id, its owner and its currency. Amounts are integer cents, signed: a charge is positive, a
refund negative. ``opening`` entries mirror what the backend had recorded for an account before the
provider first met it. The whole ledger is bound to one environment (``sandbox``): a provider of
another environment is refused on it.
"""

from __future__ import annotations

import dataclasses
import sqlite3

from passhat.errors import UserError

ENVIRONMENT, ACCOUNTS, METHODS, ENTRIES = (
    "_passhat_payment_environment",
    "_passhat_payment_accounts",
    "_passhat_payment_methods",
    "_passhat_payment_ledger",
)


class EnvironmentMixed(UserError):
    """A provider of one environment met a ledger bound to another (a sandbox run touching live money)."""


@dataclasses.dataclass(frozen=True)
class Account:
    id: str
    owner: str
    currency: str


@dataclasses.dataclass(frozen=True)
class Entry:
    seq: int
    key: str
    account: str
    method_id: str
    cents: int


def bind(db: sqlite3.Connection, environment: str) -> None:
    """Create the books if needed and bind them to ``environment``; refuse if bound to another."""
    db.execute(f"CREATE TABLE IF NOT EXISTS {ENVIRONMENT} (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL)")
    db.execute(f"CREATE TABLE IF NOT EXISTS {ACCOUNTS} (account TEXT PRIMARY KEY, owner TEXT NOT NULL, currency TEXT NOT NULL)")
    db.execute(f"CREATE TABLE IF NOT EXISTS {METHODS} (method_id TEXT PRIMARY KEY, owner TEXT NOT NULL)")
    db.execute(
        f"CREATE TABLE IF NOT EXISTS {ENTRIES} (seq INTEGER PRIMARY KEY, key TEXT UNIQUE, account TEXT NOT NULL,"
        " method_id TEXT NOT NULL, cents INTEGER NOT NULL)"
    )
    db.execute(f"INSERT OR IGNORE INTO {ENVIRONMENT} (id, name) VALUES (1, ?)", (environment,))
    bound = db.execute(f"SELECT name FROM {ENVIRONMENT}").fetchone()[0]
    if bound != environment:
        raise EnvironmentMixed(
            f"this backend's payment ledger belongs to the {bound!r} environment, and a {environment!r} payment "
            f"provider was put on it; a run uses one payment environment: start a fresh backend for {environment!r}."
        )


def account(db: sqlite3.Connection, account: str) -> Account | None:
    row = db.execute(f"SELECT account, owner, currency FROM {ACCOUNTS} WHERE account = ?", (account,)).fetchone()
    return None if row is None else Account(*row)


def open_account(db: sqlite3.Connection, account: str, owner: str, currency: str, prior: tuple[tuple[str, int], ...]) -> Account:
    """A new account, with the movements recorded before the provider met it as opening entries."""
    db.execute(f"INSERT INTO {ACCOUNTS} VALUES (?, ?, ?)", (account, owner, currency))
    db.executemany(
        f"INSERT INTO {ENTRIES} (key, account, method_id, cents) VALUES (NULL, ?, ?, ?)",
        [(account, method, cents) for method, cents in prior],
    )
    return Account(account, owner, currency)


def owner(db: sqlite3.Connection, method_id: str) -> str | None:
    row = db.execute(f"SELECT owner FROM {METHODS} WHERE method_id = ?", (method_id,)).fetchone()
    return None if row is None else row[0]


def attach(db: sqlite3.Connection, method_id: str, owner: str) -> str:
    db.execute(f"INSERT INTO {METHODS} VALUES (?, ?)", (method_id, owner))
    return owner


def entry(db: sqlite3.Connection, key: str) -> Entry | None:
    row = db.execute(f"SELECT seq, key, account, method_id, cents FROM {ENTRIES} WHERE key = ?", (key,)).fetchone()
    return None if row is None else Entry(*row)


def record(db: sqlite3.Connection, key: str, account: str, method_id: str, cents: int) -> Entry:
    cursor = db.execute(
        f"INSERT INTO {ENTRIES} (key, account, method_id, cents) VALUES (?, ?, ?, ?)", (key, account, method_id, cents)
    )
    return Entry(cursor.lastrowid or 0, key, account, method_id, cents)


def totals(db: sqlite3.Connection, account: str | None = None) -> dict[str, tuple[int, int]]:
    """{account: (cents charged, cents refunded)}, opening entries included: what reconciles with the backend."""
    where, params = ("WHERE account = ?", (account,)) if account else ("", ())
    found = db.execute(f"SELECT account, SUM(MAX(cents, 0)), -SUM(MIN(cents, 0)) FROM {ENTRIES} {where} GROUP BY account", params)
    return {booked: (charged, refunded) for booked, charged, refunded in found}
