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


def verify_entries(entries: list[dict[str, Any]], head: dict[str, Any] | None, head_known: bool = True) -> list[str]:
    """Every break in the chain: empty when no entry was edited, deleted or moved.

    head is the head file's record; head_known=False means there is none to check the end against (the
    caller reports why), so a cut end cannot be ruled out and is not claimed either.
    """
    problems, prev = [], GENESIS
    for line, entry in enumerate(entries, 1):
        body = {k: v for k, v in entry.items() if k != "hash"}
        if entry.get("seq") != line:
            problems.append(f"line {line}: sequence number {entry.get('seq')!r} where {line} belongs (deleted or moved entries)")
        if entry.get("prev") != prev:
            problems.append(f"line {line}: does not follow the entry before it (an entry was deleted, moved or edited)")
        if entry_hash(str(entry.get("prev", "")), body) != entry.get("hash"):
            problems.append(f"line {line}: its content does not match its hash (the entry was edited)")
        prev = entry.get("hash", "")
    if not head_known:
        return problems
    expected = head or {"seq": 0, "hash": GENESIS}
    if (len(entries), prev) != (expected.get("seq"), expected.get("hash")):
        if expected.get("seq") == len(entries):
            problems.append(f"the log's last entry {len(entries)} is not the one its head records (the end was replaced)")
        else:
            problems.append(f"the log ends at entry {len(entries)} but its head records entry {expected.get('seq')!r} "
                            "(entries cut from the end)")
    return problems


def read_head(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the head record, None), or (None, the problem) when the head is missing or unreadable."""
    path = folder / HEAD_FILE
    if not path.exists():
        return None, f"head missing ({HEAD_FILE}): the log's end cannot be checked (was the head deleted?)"
    try:
        head = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        return None, f"head unreadable ({HEAD_FILE}): {exc.strerror or exc}"
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None, f"head unreadable ({HEAD_FILE}): not a JSON record"
    if not isinstance(head, dict) or not isinstance(head.get("seq"), int) or not isinstance(head.get("hash"), str):
        return None, f"head unreadable ({HEAD_FILE}): not a {{\"seq\": int, \"hash\": str}} record"
    return head, None


def verify_folder(folder: Path) -> tuple[int, list[str]]:
    """(entries read, problems) of the audit log in a run folder.

    Never raises on what tampering can leave behind: bytes that are not UTF-8, a line that is not a JSON
    object, an unreadable log, a missing or unreadable head are each listed as a problem.
    """
    log = folder / AUDIT_FILE
    problems: list[str] = []
    raw = b""
    if log.exists():
        try:
            raw = log.read_bytes()
        except OSError as exc:
            problems.append(f"log unreadable ({AUDIT_FILE}): {exc.strerror or exc}")
    else:
        problems.append(f"log missing ({AUDIT_FILE})")
    entries: list[dict[str, Any]] = []
    for number, line in enumerate(raw.splitlines(), 1):
        try:
            entry = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append(f"line {number}: not UTF-8 text")
            entry = {}
        except (ValueError, RecursionError):
            problems.append(f"line {number}: not a JSON entry")
            entry = {}
        if not isinstance(entry, dict):
            problems.append(f"line {number}: JSON but not an entry (an object is expected)")
            entry = {}
        entries.append(entry)
    head, head_problem = read_head(folder)
    if head_problem:
        problems.append(head_problem)
    return len(entries), problems + verify_entries(entries, head, head_known=head_problem is None)
