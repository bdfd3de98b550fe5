"""The embedded backend: one template image per domain and process, a fork per trial, a row-level diff.

Forking deserializes the template's in-memory image (a memcpy, no parsing); every table carries
triggers that log the primary key of each row a trial touches, so comparing two backends reads only
the rows that changed instead of hashing the whole database.

A fork's connection is kept for the next one when it is released: SQLite parses a connection's schema
(the triggers most of it) and compiles its statements afresh, which costs more than a trial's queries,
so a released fork is put back to the template's state instead, by the same log: every row it touched
deleted, and the template's rows of those keys (rowids included) inserted again. A fork whose schema,
pragmas or attached databases changed, or of a template whose own triggers would fire on that undoing,
is closed instead.
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
    reusable: bool = False  # whether a released fork can be undone (no triggers of the domain's own, no AUTOINCREMENT)
    spares: list[sqlite3.Connection] = dataclasses.field(default_factory=list, compare=False, repr=False)
    pristine: list[sqlite3.Connection] = dataclasses.field(default_factory=list, compare=False, repr=False)  # one, lazily


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
    own = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' OR name = 'sqlite_sequence'").fetchone()[0]
    db.execute(f"CREATE TABLE {CHANGELOG} (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, pk TEXT NOT NULL)")
    for table, cols in keys.items():
        _add_change_triggers(db, table, cols)
    db.commit()
    image = db.serialize()
    db.close()
    return Template(image=image, primary_keys=keys, reusable=own == 0)


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
    """A private, writable copy of the template for one trial (a released one put back, when there is one)."""
    with _lock:
        if template.spares:
            return template.spares.pop()
    return _fresh_fork(template)


def _fresh_fork(template: Template) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.deserialize(template.image)
    db.row_factory = sqlite3.Row
    return db


def release_backend(template: Template, db: sqlite3.Connection) -> None:
    """Done with a fork: put back to the template's state for the next fork_backend, or closed."""
    try:
        reusable = template.reusable and _undone(template, db)
    except sqlite3.Error:
        reusable = False
    if not reusable:
        db.close()
        return
    with _lock:
        template.spares.append(db)


# what a fork's connection must still be for its rows alone to differ from a fresh fork's
_SHAPE = (
    "SELECT (SELECT count(*) FROM temp.sqlite_master), (SELECT group_concat(name) FROM pragma_database_list),"
    " (SELECT schema_version FROM pragma_schema_version), (SELECT foreign_keys FROM pragma_foreign_keys)"
)


def _undone(template: Template, db: sqlite3.Connection) -> bool:
    """Put a fork back to the template's state when nothing but its rows changed; False when something else did."""
    if db.in_transaction:
        db.rollback()
    db.row_factory, db.text_factory, db.isolation_level = sqlite3.Row, str, ""
    with _lock:
        pristine = _pristine(template)
        if tuple(db.execute(_SHAPE).fetchone()) != tuple(pristine.execute(_SHAPE).fetchone()):
            return False
        keys = sorted(changed_keys(db))
        rows = [(table, _row_with_rowid(pristine, template, table, pk)) for table, pk in keys]
    if keys:
        with db:
            for table, pk in keys:
                db.execute(f"DELETE FROM {table} WHERE {_where(template, table)}", json.loads(pk))
            for table, found in rows:
                if found is not None:
                    names, values = found
                    db.execute(f"INSERT INTO {table} (rowid, {', '.join(names)}) VALUES ({', '.join('?' * len(values))})", values)
            db.execute(f"DELETE FROM {CHANGELOG}")
    return True


def _pristine(template: Template) -> sqlite3.Connection:
    """A fork never written, where released forks read the template's rows back (used under _lock)."""
    if not template.pristine:
        template.pristine.append(_fresh_fork(template))
    return template.pristine[0]


def _row_with_rowid(db: sqlite3.Connection, template: Template, table: str, pk: str) -> tuple[list[str], tuple[Any, ...]] | None:
    """A row's column names and, rowid first, its values."""
    cursor = db.execute(f"SELECT rowid, * FROM {table} WHERE {_where(template, table)}", json.loads(pk))
    row = cursor.fetchone()
    return None if row is None else ([d[0] for d in cursor.description[1:]], tuple(row))


def _where(template: Template, table: str) -> str:
    return " AND ".join(f"{c} = ?" for c in template.primary_keys[table])


def changed_keys(db: sqlite3.Connection) -> set[RowKey]:
    return {(t, pk) for t, pk in db.execute(f"SELECT DISTINCT tbl, pk FROM {CHANGELOG}")}


def read_row(db: sqlite3.Connection, template: Template, key: RowKey) -> dict[str, Any] | None:
    table, pk = key
    row = db.execute(f"SELECT * FROM {table} WHERE {_where(template, table)}", json.loads(pk)).fetchone()
    return dict(zip(row.keys(), tuple(row), strict=False)) if row is not None else None


@dataclasses.dataclass(frozen=True)
class RowDifference:
    table: str
    key: str
    actual: dict[str, Any] | None
    expected: dict[str, Any] | None


class SettledRows:
    """A fork's changed keys and rows, each read once and kept: for a fork nothing writes again (an outcome's
    expected backend), which every trial's grading compares with."""

    def __init__(self, db: sqlite3.Connection, template: Template):
        self._db, self._template = db, template
        self.changed = frozenset(changed_keys(db))
        self._rows: dict[RowKey, dict[str, Any] | None] = {}

    def row(self, key: RowKey) -> dict[str, Any] | None:
        if key not in self._rows:
            self._rows[key] = read_row(self._db, self._template, key)
        return self._rows[key]


def diff_backends(
    actual: sqlite3.Connection,
    expected: sqlite3.Connection | SettledRows,
    template: Template,
    ignored_columns: dict[str, frozenset[str]] | None = None,
) -> list[RowDifference]:
    """Rows whose final value differs between two forks of the same template.

    Only rows that either fork touched can differ, so only those are read.
    """
    ignored = ignored_columns or {}
    settled = expected if isinstance(expected, SettledRows) else SettledRows(expected, template)
    out = []
    for key in sorted(changed_keys(actual) | settled.changed):
        a, e = read_row(actual, template, key), settled.row(key)
        skip = ignored.get(key[0], frozenset())
        if _without(a, skip) != _without(e, skip):
            out.append(RowDifference(key[0], key[1], a, e))
    return out


def _without(row: dict[str, Any] | None, skip: frozenset[str]) -> dict[str, Any] | None:
    return None if row is None else {k: v for k, v in row.items() if k not in skip}
