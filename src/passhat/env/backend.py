"""The embedded backend: one template image per domain and process, a fork per trial, a row-level diff.

Forking deserializes the template's in-memory image (a memcpy, no parsing); every table carries
triggers that log the primary key of each row a trial touches, so comparing two backends reads only
the rows that changed instead of hashing the whole database.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from typing import Any

from passhat.domains.model import Domain

CHANGELOG = "_passhat_changes"
RowKey = tuple[str, str]  # (table, JSON array of primary-key values)


@dataclasses.dataclass(frozen=True)
class Template:
    image: bytes
    primary_keys: dict[str, tuple[str, ...]]


_templates: dict[tuple[str, object, int], Template] = {}
_lock = threading.Lock()


def template_for(domain: Domain) -> Template:
    """The domain's seeded backend image, built on first use and kept for the process: one per schema,
    generator and seed, so a domain with tasks added shares its image, and two domains of one name do not."""
    key = (domain.schema_sql, domain.generate, domain.data_seed)
    with _lock:
        if key not in _templates:
            _templates[key] = _build_template(domain)
        return _templates[key]


def _build_template(domain: Domain) -> Template:
    db = sqlite3.connect(":memory:")
    db.executescript(domain.schema_sql)
    domain.generate(db, domain.data_seed)
    db.commit()
    keys = _primary_keys(db)
    db.execute(f"CREATE TABLE {CHANGELOG} (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, pk TEXT NOT NULL)")
    for table, cols in keys.items():
        _add_change_triggers(db, table, cols)
    db.commit()
    image = db.serialize()
    db.close()
    return Template(image=image, primary_keys=keys)


def _primary_keys(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    keys = {}
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    for table in tables:
        cols = sorted((r[5], r[1]) for r in db.execute(f"PRAGMA table_info({table})") if r[5])
        if not cols:
            raise ValueError(f"table {table} has no primary key; passhat diffs backends by primary key")
        keys[table] = tuple(name for _, name in cols)
    return keys


def _add_change_triggers(db: sqlite3.Connection, table: str, cols: tuple[str, ...]) -> None:
    def pk(row: str) -> str:
        return "json_array(" + ", ".join(f"{row}.{c}" for c in cols) + ")"

    log = f"INSERT INTO {CHANGELOG}(tbl, pk) VALUES ('{table}', "
    db.executescript(
        f"""
        CREATE TRIGGER _passhat_{table}_ins AFTER INSERT ON {table} BEGIN {log}{pk("NEW")}); END;
        CREATE TRIGGER _passhat_{table}_upd AFTER UPDATE ON {table} BEGIN
            {log}{pk("OLD")}); {log}{pk("NEW")});
        END;
        CREATE TRIGGER _passhat_{table}_del AFTER DELETE ON {table} BEGIN {log}{pk("OLD")}); END;
        """
    )


def fork_backend(template: Template) -> sqlite3.Connection:
    """A private, writable copy of the template for one trial."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.deserialize(template.image)
    db.row_factory = sqlite3.Row
    return db


def changed_keys(db: sqlite3.Connection) -> set[RowKey]:
    return {(t, pk) for t, pk in db.execute(f"SELECT DISTINCT tbl, pk FROM {CHANGELOG}")}


def read_row(db: sqlite3.Connection, template: Template, key: RowKey) -> dict[str, Any] | None:
    table, pk = key
    cols = template.primary_keys[table]
    where = " AND ".join(f"{c} = ?" for c in cols)
    row = db.execute(f"SELECT * FROM {table} WHERE {where}", json.loads(pk)).fetchone()
    return dict(zip(row.keys(), tuple(row), strict=False)) if row is not None else None


@dataclasses.dataclass(frozen=True)
class RowDifference:
    table: str
    key: str
    actual: dict[str, Any] | None
    expected: dict[str, Any] | None


def diff_backends(
    actual: sqlite3.Connection,
    expected: sqlite3.Connection,
    template: Template,
    ignored_columns: dict[str, frozenset[str]] | None = None,
) -> list[RowDifference]:
    """Rows whose final value differs between two forks of the same template.

    Only rows that either fork touched can differ, so only those are read.
    """
    ignored = ignored_columns or {}
    out = []
    for key in sorted(changed_keys(actual) | changed_keys(expected)):
        a, e = read_row(actual, template, key), read_row(expected, template, key)
        skip = ignored.get(key[0], frozenset())
        if _without(a, skip) != _without(e, skip):
            out.append(RowDifference(key[0], key[1], a, e))
    return out


def _without(row: dict[str, Any] | None, skip: frozenset[str]) -> dict[str, Any] | None:
    return None if row is None else {k: v for k, v in row.items() if k not in skip}
