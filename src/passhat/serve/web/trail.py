"""The audit trail of a runs folder (``<out>/audit``), written by the web app and by `passhat accounts` at once.

``AuditLog`` keeps its chain's head in memory, so two processes holding one each would both chain their next
entry after the same head and fork the chain. Every append here therefore takes an exclusive lock on a file in
the folder and reopens the log under it, so each append continues from the head on disk.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from passhat.guard.audit import AUDIT_FILE, HEAD_FILE, AuditKey, AuditLog, Verification, parse_line, verify_folder

TRAIL_FOLDER = "audit"
LOCK_FILE = "audit.lock"


def trail_folder(out: Path) -> Path:
    return Path(out) / TRAIL_FOLDER


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_FILE, "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def append(out: Path, key: AuditKey, action: str, by: str, **details: Any) -> None:
    """Append one record ``{"action", "by", "at", **details}`` to the runs folder's trail, after its head on disk."""
    with recorded(out, key, action, by, **details):
        pass


@contextmanager
def recorded(out: Path, key: AuditKey, action: str, by: str, **details: Any) -> Iterator[dict[str, Any]]:
    """Make, inside, a change the trail records: the trail is opened (locked, its key checked) before the change,
    so a trail that cannot be continued refuses the change instead of leaving it unrecorded, and the record is
    appended once the change is made (none when it raises), with the details the change adds to the dict given."""
    folder = trail_folder(out)
    with _locked(folder):
        log = AuditLog(folder, key)
        found: dict[str, Any] = {}
        yield found
        log.append({"action": action, "by": by, "at": now_iso(), **details, **found})


@dataclass(frozen=True)
class TrailPage:
    """One page of the trail, newest entry first, and how many entries it has in all."""

    entries: list[dict[str, Any]]
    total: int


def read_page(out: Path, page: int, per_page: int) -> TrailPage:
    """Page ``page`` (1 is the newest) of the trail; empty when the trail or the page does not exist."""
    log = trail_folder(out) / AUDIT_FILE
    lines = log.read_bytes().split(b"\n") if log.exists() else []
    lines = [line for line in lines if line.strip()]
    end = len(lines) - (page - 1) * per_page
    chosen = lines[max(0, end - per_page) : max(0, end)]
    return TrailPage([parse_line(line) for line in reversed(chosen)], len(lines))


def verify(out: Path, key: AuditKey) -> Verification:
    """What a check of the runs folder's trail finds under ``key`` (as `passhat audit verify` checks a run's), found
    again only when the trail's bytes changed: every page of the audit page shows it, and hashing the files costs a
    few percent of checking every entry's seal (1.2 s at 100,000 entries)."""
    folder = trail_folder(out)
    seen = (key.id, _digest(folder))
    cached = _verified.get(folder)
    if cached is None or cached[0] != seen:
        _verified[folder] = cached = (seen, verify_folder(folder, key))
    return cached[1]


_verified: dict[Path, tuple[tuple[str, str], Verification]] = {}  # a trail folder -> (its key and bytes, what was found)


def _digest(folder: Path) -> str:
    """A digest of the trail's log and head as they are now (each file's length first, so no byte can move from one to
    the other unseen; a missing file and an empty one differ)."""
    digest = hashlib.sha256()
    for name in (AUDIT_FILE, HEAD_FILE):
        try:
            data = (folder / name).read_bytes()
        except OSError:
            digest.update(b"missing")
            continue
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def entry_details(entry: dict[str, Any]) -> str:
    """The parts of an entry that are neither the chain's nor the columns the audit page shows, as one line."""
    shown = {k: v for k, v in entry.items() if k not in ("seq", "prev", "key_id", "hash", "action", "by", "at")}
    return json.dumps(shown, sort_keys=True, ensure_ascii=False) if shown else ""
