"""The audit trail: every call, decision and refusal, appended to a hash-chained JSON-lines file.

Each entry carries its sequence number, the previous entry's hash and its own hash over both and its
body, so an edited, deleted or reordered entry breaks the chain; a head file holding the last
sequence number and hash catches entries cut from the end. ``verify`` reports every break it finds.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
AUDIT_FILE, HEAD_FILE = "audit.jsonl", "audit.head"


def entry_hash(prev: str, body: dict[str, Any]) -> str:
    return hashlib.sha256((prev + json.dumps(body, sort_keys=True, default=str)).encode()).hexdigest()


class AuditLog:
    """An append-only chain, kept in memory, or in ``folder/audit.jsonl`` when a folder is given."""

    def __init__(self, folder: Path | None = None):
        self.folder = folder
        self.entries: list[dict[str, Any]] = []
        self._seq, self._head = 0, GENESIS
        if folder is not None and (folder / HEAD_FILE).is_file():
            head = json.loads((folder / HEAD_FILE).read_text())
            self._seq, self._head = head["seq"], head["hash"]
            self._adopt_unheaded_tail()

    def _adopt_unheaded_tail(self) -> None:
        """Entries written just before a crash that stopped the head update: adopt those that chain on.

        The lines are appended before the head is replaced, so a process killed in between leaves valid
        entries past the head; a resumed run takes them in instead of reporting its own log as tampered.
        """
        assert self.folder is not None
        log = self.folder / AUDIT_FILE
        for line in log.read_text(encoding="utf-8").splitlines()[self._seq:] if log.is_file() else []:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                return
            body = {k: v for k, v in entry.items() if k != "hash"}
            if entry.get("seq") != self._seq + 1 or entry.get("prev") != self._head or entry_hash(self._head, body) != entry.get("hash"):
                return
            self._seq, self._head = entry["seq"], entry["hash"]
        _write_atomically(self.folder / HEAD_FILE, json.dumps({"seq": self._seq, "hash": self._head}))

    def append(self, record: dict[str, Any]) -> None:
        self.extend([record])

    def extend(self, records: Iterable[dict[str, Any]]) -> None:
        """Chain the records after the last entry and, with a folder, write them and the new head."""
        chained = []
        for record in records:
            self._seq += 1
            body = {"seq": self._seq, "prev": self._head, **record}
            self._head = entry_hash(self._head, body)
            chained.append({**body, "hash": self._head})
        self.entries += chained
        if self.folder is not None and chained:
            with open(self.folder / AUDIT_FILE, "a", encoding="utf-8") as f:
                f.writelines(json.dumps(e, sort_keys=True, default=str) + "\n" for e in chained)
            _write_atomically(self.folder / HEAD_FILE, json.dumps({"seq": self._seq, "hash": self._head}))


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def verify_entries(entries: list[dict[str, Any]], head: dict[str, Any] | None) -> list[str]:
    """Every break in the chain: empty when no entry was edited, deleted or moved."""
    problems, prev = [], GENESIS
    for line, entry in enumerate(entries, 1):
        body = {k: v for k, v in entry.items() if k != "hash"}
        if entry.get("seq") != line:
            problems.append(f"line {line}: sequence number {entry.get('seq')} where {line} belongs (deleted or moved entries)")
        if entry.get("prev") != prev:
            problems.append(f"line {line}: does not follow the entry before it (an entry was deleted, moved or edited)")
        if entry_hash(entry.get("prev", ""), body) != entry.get("hash"):
            problems.append(f"line {line}: its content does not match its hash (the entry was edited)")
        prev = entry.get("hash", "")
    expected = head or {"seq": 0, "hash": GENESIS}
    if (len(entries), prev) != (expected.get("seq"), expected.get("hash")):
        problems.append(f"the log ends at entry {len(entries)} but its head records entry {expected.get('seq')} (entries cut from the end)")
    return problems


def verify_folder(folder: Path) -> tuple[int, list[str]]:
    """(entries read, problems) of the audit log in a run folder."""
    log, head = folder / AUDIT_FILE, folder / HEAD_FILE
    lines = log.read_text(encoding="utf-8").splitlines() if log.is_file() else []
    entries, problems = [], []
    for number, line in enumerate(lines, 1):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            problems.append(f"line {number}: not a JSON entry")
            entries.append({})
    return len(entries), problems + verify_entries(entries, json.loads(head.read_text()) if head.is_file() else None)
