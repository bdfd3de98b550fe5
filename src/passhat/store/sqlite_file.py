"""What every passhat SQLite store shares: how its file is opened and written, and that closing the store releases
the writer lock on its folder (a run's results, an attack suite's trials)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from types import TracebackType
from typing import Self

from passhat.file_writes import FolderLock


def connect(target: str) -> sqlite3.Connection:
    """isolation_level=None: each statement is its own transaction unless BEGIN is issued."""
    return sqlite3.connect(target, uri=target.startswith("file:"), isolation_level=None, timeout=30.0)


def configure(conn: sqlite3.Connection) -> sqlite3.Connection:
    """synchronous is per connection; NORMAL in WAL mode keeps every commit through a killed process.
    This is the first statement on a connection, so a file that is not SQLite fails here."""
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class HeldStore:
    """A store's connection and, for a writer, its folder's lock: closed and released together."""

    _conn: sqlite3.Connection
    _lock: FolderLock | None

    def close(self) -> None:
        self._conn.close()
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
