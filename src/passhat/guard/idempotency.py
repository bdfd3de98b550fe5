"""Idempotent writes: a key per write, its first result kept in the backend next to the write itself.

Stripe's model: same key and same arguments give the first result again and no second write; same
key and other arguments is a conflict. A key belongs to its conversation (as Stripe's belong to an
account): two conversations on one backend that pick the same key make two writes, while two gateways
serving one conversation share it. The key row is inserted in the write's own transaction (for a
human-gated write, the ticket's), so a crash can never keep one without the other, and the table's
primary key makes a concurrent second write with the same key fail and roll back instead of taking
effect twice. The table is created after the backend was forked, so it carries no change triggers and
never shows in a state diff.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from typing import Any
from urllib.parse import quote

from passhat.env.tools import Within, error

TABLE = "_passhat_idempotency"


@dataclasses.dataclass(frozen=True)
class Stored:
    fingerprint: str
    result: dict[str, Any]


def ensure_table(db: sqlite3.Connection) -> None:
    with db:
        db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, result TEXT NOT NULL)")


def fingerprint(name: str, args: dict[str, Any]) -> str:
    """The action a key was first used for: the tool and its arguments, canonically."""
    return hashlib.sha256(json.dumps([name, args], sort_keys=True, default=str).encode()).hexdigest()


def derive_key(run_id: str, conversation_id: str, name: str, args: dict[str, Any]) -> str:
    """The key of a write whose caller gave none: one per run, conversation and action."""
    return hashlib.sha256(f"{run_id}|{conversation_id}|{fingerprint(name, args)}".encode()).hexdigest()[:32]


def scoped(run_id: str, conversation_id: str, *parts: object) -> str:
    """A name that belongs to one conversation of one run: the parts joined by '/', each escaped, so no
    two different part lists make the same name (a conversation or key holding '/' cannot pose as another)."""
    return "/".join(quote(str(part), safe="") for part in (run_id, conversation_id, *parts))


def given_key(value: Any) -> str | None:
    """The key a caller gave: null (JSON's or Python's) or empty text is no key; TypeError for a key that
    is not text, which a model can correct."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise TypeError("idempotency_key must be a string, or null for none")
    return value


def stored(db: sqlite3.Connection, key: str) -> Stored | None:
    row = db.execute(f"SELECT fingerprint, result FROM {TABLE} WHERE key = ?", (key,)).fetchone()
    return None if row is None else Stored(row[0], json.loads(row[1]))


def remember(key: str, print_: str) -> Within:
    """The bookkeeping to run inside the write's transaction: the key and the result it produced."""

    def insert(db: sqlite3.Connection, result: dict[str, Any]) -> None:
        db.execute(f"INSERT INTO {TABLE} (key, fingerprint, result) VALUES (?, ?, ?)", (key, print_, json.dumps(result)))

    return insert


def conflict(key: str, name: str) -> dict[str, Any]:
    return error(
        "idempotency_conflict",
        f"idempotency key {key} was already used for a different {name} call; use a new key for a new action",
    )
