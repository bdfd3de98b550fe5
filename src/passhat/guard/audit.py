"""The audit trail: every call, decision and refusal, in a chain sealed with a key its folder never holds.

Each entry carries its sequence number, the previous entry's seal, the id of the key that sealed it and
its own seal: HMAC-SHA256 under the user's audit key over all of that and its body. Whoever holds the
folder but not the key can edit, delete, reorder or cut entries, or rewrite the whole chain with
passhat's own code, but cannot make the seals match: ``verify`` with the key detects each of those,
and without it says that it cannot prove anything rather than "intact".

The key comes from ``PASSHAT_AUDIT_KEY`` or from ``audit.key`` in the user's config folder (created,
readable by its owner only, on first use); it is redacted from everything stored like any API key.
Entries identify it by a fingerprint (``key_id``), which reveals nothing of it.

In a folder, the chain is ``audit.jsonl`` (one entry a line) and ``audit.head`` (the last entry's
number and seal). An append is one write of whole lines, on disk before it returns, so a kill leaves
at most an unterminated last line: opening the log again cuts it and records the repair as an entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from passhat.errors import UserError
from passhat.file_writes import append_whole, write_atomically
from passhat.untrusted import add_secret, storable

GENESIS = "0" * 64  # what the first entry's "prev" holds
AUDIT_FILE, HEAD_FILE = "audit.jsonl", "audit.head"
KEY_VARIABLE = "PASSHAT_AUDIT_KEY"
KEY_FILE = "audit.key"
MIN_KEY_CHARS = 32
CHAIN_FIELDS = frozenset({"seq", "prev", "key_id", "hash"})
MAX_LISTED = 20  # problems of one kind listed before "and N more"
READ_BACK_BYTES = 65536  # how much of the log's end is read at a time to find its last line


@dataclasses.dataclass(frozen=True)
class AuditKey:
    """The secret that seals a chain, and where it came from (for messages; never the secret itself)."""

    secret: bytes = dataclasses.field(repr=False)
    source: str

    @property
    def id(self) -> str:
        """A fingerprint naming the key in entries and messages; it cannot be turned back into the key."""
        return hashlib.sha256(b"passhat audit key id\0" + self.secret).hexdigest()[:16]

    def seal(self, body: dict[str, Any]) -> str:
        return hmac.new(self.secret, canonical(body), hashlib.sha256).hexdigest()

    @classmethod
    def ephemeral(cls) -> AuditKey:
        """A key for a chain that lives in memory only (a Gateway used outside the harness)."""
        return cls(secrets.token_bytes(32), "this process only")


def key_path() -> Path:
    """``$XDG_CONFIG_HOME/passhat/audit.key`` (``~/.config/passhat/audit.key`` by default)."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(config_home) / "passhat" / KEY_FILE


def how_to_provide_key() -> str:
    return f"set {KEY_VARIABLE} to the key, or put it in {key_path()} (readable by you only)"


def load_key(create: bool) -> AuditKey | None:
    """The user's audit key: ``PASSHAT_AUDIT_KEY`` if set, else the key file, made on first use when
    ``create`` (a run); None when there is none and ``create`` is false (verify)."""
    text = os.environ.get(KEY_VARIABLE, "").strip()
    if text:
        return _key(text, KEY_VARIABLE)
    path = key_path()
    if not path.exists():
        if not create:
            return None
        _create_key_file(path)
    return _key(_read_key_file(path), str(path))


def signing_key() -> AuditKey:
    """The key a run seals its trail with: the user's, made on first use."""
    key = load_key(create=True)
    assert key is not None
    return key


def _key(text: str, source: str) -> AuditKey:
    if len(text) < MIN_KEY_CHARS:
        raise UserError(
            f"the audit key in {source} is {len(text)} characters long; use at least {MIN_KEY_CHARS} random "
            "characters (e.g. the output of `openssl rand -hex 32`)."
        )
    add_secret(text)  # never stored, printed or exported: redacted like an API key
    return AuditKey(text.encode("utf-8"), source)


def _read_key_file(path: Path) -> str:
    try:
        if os.stat(path).st_mode & 0o077:
            raise UserError(f"the audit key file {path} can be read by others; make it yours only: chmod 600 {path}")
        return path.read_text(encoding="utf-8").strip()
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the audit key file {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _create_key_file(path: Path) -> None:
    """A fresh random key, readable by its owner only; whole or absent, even with two runs starting at once."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, (secrets.token_hex(32) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # fails if another process made the key first: then that key is the one
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    except OSError as exc:
        raise UserError(f"cannot create the audit key file {path}: {exc.strerror or exc}; set {KEY_VARIABLE} instead.") from None


def canonical(body: dict[str, Any]) -> bytes:
    """The bytes a seal covers: the same for an entry and for its line read back."""
    return json.dumps(body, sort_keys=True, allow_nan=False).encode("ascii")


def entry_line(entry: dict[str, Any]) -> str:
    """An entry as its line in audit.jsonl (and its row in a results store), without the newline."""
    return json.dumps(entry, sort_keys=True, allow_nan=False)


class Chain:
    """Where the next entry goes: its sequence number and the previous entry's seal, under one key."""

    def __init__(self, key: AuditKey, seq: int = 0, prev: str = GENESIS):
        self.key, self.seq, self.prev = key, seq, prev

    def seal(self, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records as entries chained after the last one; the chain moves on only with advance()."""
        entries, seq, prev = [], self.seq, self.prev
        for record in records:
            if clash := CHAIN_FIELDS & record.keys():
                raise ValueError(f"an audit record may not set the chain's own fields {sorted(clash)}")
            seq += 1
            body = {**storable(record), "seq": seq, "prev": prev, "key_id": self.key.id}
            prev = self.key.seal(body)
            entries.append({**body, "hash": prev})
        return entries

    def advance(self, entries: Sequence[dict[str, Any]]) -> None:
        if entries:
            self.seq, self.prev = entries[-1]["seq"], entries[-1]["hash"]


class AuditFile:
    """``audit.jsonl`` and ``audit.head`` in a folder; ``durable``: on disk before a write returns (the
    log is the record), or not (a mirror of a record kept elsewhere, rebuilt from it)."""

    def __init__(self, folder: Path, durable: bool = True):
        self.log, self.head = Path(folder) / AUDIT_FILE, Path(folder) / HEAD_FILE
        self.durable = durable

    def read(self) -> tuple[list[bytes], bytes]:
        """(the complete lines, the unterminated tail a kill mid-append leaves, b"" when none)."""
        raw = self.log.read_bytes() if self.log.exists() else b""
        end = raw.rfind(b"\n") + 1
        return raw[:end].split(b"\n")[:-1], raw[end:]

    def read_end(self) -> tuple[bytes | None, bytes]:
        """(the last complete line, None when there is none; the unterminated tail, as read()), reading the log
        backwards from its end only: an append reopens the log, which may hold a whole trail."""
        if not self.log.exists():
            return None, b""
        with open(self.log, "rb") as f:
            position, data = f.seek(0, os.SEEK_END), b""
            while position > 0 and data.count(b"\n") < 2:
                step = min(READ_BACK_BYTES, position)
                position -= step
                f.seek(position)
                data = f.read(step) + data
        end = data.rfind(b"\n")
        if end == -1:
            return None, data
        return data[data.rfind(b"\n", 0, end) + 1 : end], data[end + 1 :]

    def cut_torn_tail(self, tail: bytes) -> None:
        """Cut an unterminated last line (``tail``, as read())."""
        with open(self.log, "r+b") as f:
            f.truncate(self.log.stat().st_size - len(tail))
            if self.durable:
                os.fsync(f.fileno())

    def append(self, lines: Sequence[str]) -> None:
        """Append whole lines; with none, make sure the log exists."""
        if lines:
            data = "".join(line + "\n" for line in lines).encode("ascii")
            append_whole(self.log, data, window="audit_append", durable=self.durable)
        else:
            self.log.touch()

    def write_head(self, seq: int, last: str) -> None:
        write_atomically(self.head, json.dumps({"seq": seq, "hash": last}), durable=self.durable)

    def read_head(self) -> tuple[dict[str, Any] | None, str | None]:
        """(the head record, None), or (None, the problem) when the head is missing or unreadable."""
        if not self.head.exists():
            return None, f"head missing ({HEAD_FILE}): the log's end cannot be checked (was the head deleted?)"
        try:
            head = json.loads(self.head.read_bytes().decode("utf-8"))
        except OSError as exc:
            return None, f"head unreadable ({HEAD_FILE}): {exc.strerror or exc}"
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return None, f"head unreadable ({HEAD_FILE}): not a JSON record"
        if not isinstance(head, dict) or not isinstance(head.get("seq"), int) or not isinstance(head.get("hash"), str):
            return None, f'head unreadable ({HEAD_FILE}): not a {{"seq": int, "hash": str}} record'
        return head, None


class AuditLog:
    """An append-only chain, in memory (under a key of this process only), or in a folder's audit.jsonl
    under the user's audit key. Reopening a folder continues its chain, after repairing a torn tail."""

    def __init__(self, folder: Path | None = None, key: AuditKey | None = None):
        self.key = key or (signing_key() if folder is not None else AuditKey.ephemeral())
        self.entries: list[dict[str, Any]] = []  # those appended through this object
        self._chain = Chain(self.key)
        self._file = AuditFile(folder) if folder is not None else None
        if self._file is not None:
            self._reopen(self._file)

    def _reopen(self, file: AuditFile) -> None:
        line, tail = file.read_end()
        if line is not None:
            last = parse_line(line)
            if not isinstance(last.get("seq"), int) or not isinstance(last.get("hash"), str):
                raise ValueError(f"{file.log} ends with a line that is not an entry: verify_folder lists the problems")
            if last.get("key_id") != self.key.id:
                sealed = f"sealed with audit key {last['key_id']}" if "key_id" in last else "unkeyed (an older passhat's)"
                raise UserError(
                    f"{file.log} is {sealed}, not sealed with the key in {self.key.source} ({self.key.id}): "
                    f"it cannot be continued; {how_to_provide_key()}, or start a log in another folder"
                )
            self._chain = Chain(self.key, last["seq"], last["hash"])
        if tail:
            file.cut_torn_tail(tail)
            self.extend([repair_record(tail)])
        else:
            file.append([])  # the log exists from its opening: a missing one is then a deleted one
            file.write_head(self._chain.seq, self._chain.prev)  # also moves on a head a kill left behind

    def append(self, record: dict[str, Any]) -> None:
        self.extend([record])

    def extend(self, records: Iterable[dict[str, Any]]) -> None:
        """Chain the records after the last entry and, with a folder, write them and the new head."""
        entries = self._chain.seal(records)
        if self._file is not None and entries:
            self._file.append([entry_line(e) for e in entries])
            self._file.write_head(entries[-1]["seq"], entries[-1]["hash"])
        self._chain.advance(entries)
        self.entries += entries


def repair_record(tail: bytes) -> dict[str, Any]:
    """The audit record of cutting an unfinished last line."""
    return {
        "decision": "repaired", "repair": f"cut the unfinished last line of {AUDIT_FILE} (an interrupted append)",
        "bytes": len(tail), "sha256": hashlib.sha256(tail).hexdigest(),
    }  # fmt: skip


def parse_line(line: bytes) -> dict[str, Any]:
    """An entry from its line; {} for a line that is not one (the checks then say what is wrong)."""
    try:
        entry = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return {}
    return entry if isinstance(entry, dict) else {}


def line_problem(number: int, line: bytes) -> str | None:
    """Why line ``number`` is not an entry, or None."""
    try:
        entry = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return f"line {number}: not UTF-8 text"
    except (ValueError, RecursionError):
        return f"line {number}: not a JSON entry"
    return None if isinstance(entry, dict) else f"line {number}: JSON but not an entry (an object is expected)"


@dataclasses.dataclass
class Verification:
    """What a check of a trail found.

    ``problems`` prove tampering; ``notes`` are what an interrupted write leaves (repaired by resuming);
    ``unproven`` says why the entries' seals could not be checked (no key, another key, no key at all
    when the trail was written); None when they were.
    """

    entries: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    key_id: str | None = None
    unproven: str | None = None
    head: tuple[int, str] = (0, GENESIS)
    trials: int | None = None  # stored trials checked against the trail (a run's trail)

    @property
    def intact(self) -> bool:
        return not self.problems and self.unproven is None


def check_chain(entries: Sequence[dict[str, Any]], key: AuditKey | None) -> Verification:
    """Every break in the chain, with the seals checked under ``key`` when it is the key that sealed it.

    Without the key only the structure is checked (numbers, links), which a rewrite passes too, so the
    result says why it proves nothing; an entry sealed under another key than the first's is a problem.
    """
    result = Verification(len(entries))
    key_ids = [e.get("key_id") for e in entries]
    result.key_id = next((k for k in key_ids if isinstance(k, str)), None)
    if entries and result.key_id is None:
        result.unproven = "the trail is unkeyed (written by an older passhat): its entries cannot be proven authentic"
    elif result.key_id is not None and key is None:
        result.unproven = f"no audit key is available to check the seals of key {result.key_id}; {how_to_provide_key()}"
    elif result.key_id is not None and key is not None and key.id != result.key_id:
        result.unproven = (
            f"the trail is sealed with audit key {result.key_id}, the key in {key.source} is {key.id}; {how_to_provide_key()}"
        )
    sealing = key if result.unproven is None else None
    prev, listed = GENESIS, ProblemList(result.problems)
    for number, entry in enumerate(entries, 1):
        body = {k: v for k, v in entry.items() if k != "hash"}
        if entry.get("seq") != number:
            listed.add(f"entry {number}: sequence number {entry.get('seq')!r} where {number} belongs (deleted or moved entries)")
        if entry.get("prev") != prev:
            listed.add(f"entry {number}: does not follow the entry before it (an entry was deleted, moved or edited)")
        if key_ids[number - 1] != result.key_id:
            listed.add(f"entry {number}: sealed with key {key_ids[number - 1]!r}, the trail with {result.key_id!r}")
        elif sealing is not None and not hmac.compare_digest(_seal_or_empty(sealing, body), str(entry.get("hash", ""))):
            listed.add(f"entry {number}: its seal does not match its content (edited, or written without the key)")
        prev = entry.get("hash", "")
    listed.close()
    if entries and isinstance(entries[-1].get("seq"), int) and isinstance(prev, str):
        result.head = (entries[-1]["seq"], prev)
    return result


def _seal_or_empty(key: AuditKey, body: dict[str, Any]) -> str:
    """The seal the body should carry; "" for a body no entry can have (NaN, a non-JSON value)."""
    try:
        return key.seal(body)
    except (TypeError, ValueError, RecursionError):
        return ""


class ProblemList:
    """Appends up to MAX_LISTED problems, then counts the rest (an inserted line breaks every later one)."""

    def __init__(self, problems: list[str]):
        self.problems, self.more = problems, 0

    def add(self, problem: str) -> None:
        if len(self.problems) < MAX_LISTED:
            self.problems.append(problem)
        else:
            self.more += 1

    def close(self) -> None:
        if self.more:
            self.problems.append(f"... and {self.more} more problems of the same kind")


def check_anchor(result: Verification, entries: Sequence[dict[str, Any]], anchor: tuple[int, str] | None) -> None:
    """A head recorded elsewhere (``SEQ:HASH``) must still be an entry of the log."""
    if anchor is None:
        return
    seq, seal = anchor
    if not (0 < seq <= len(entries) and entries[seq - 1].get("hash") == seal):
        result.problems.append(f"the anchored head {seq}:{seal} is not in the log: it was rewritten or cut since")


def verify_folder(folder: Path, key: AuditKey | None = None, anchor: tuple[int, str] | None = None) -> Verification:
    """Check the audit log kept by ``AuditLog(folder)``; ``key`` is the user's (loaded when not given).

    Never raises on what tampering can leave behind: bytes that are not UTF-8, a line that is not a JSON
    object, an unreadable log, a missing or unreadable head are each listed as a problem. A log's end
    cut together with its head's rewrite is beyond what the folder can show: ``anchor`` (a head recorded
    elsewhere) catches it.
    """
    key = key if key is not None else load_key(create=False)
    file = AuditFile(folder)
    problems, notes, lines, tail = [], [], [], b""
    if not file.log.exists():
        problems.append(f"log missing ({AUDIT_FILE})")
    else:
        try:
            lines, tail = file.read()
        except OSError as exc:
            problems.append(f"log unreadable ({AUDIT_FILE}): {exc.strerror or exc}")
    problems += [p for number, line in enumerate(lines, 1) if (p := line_problem(number, line))]
    if tail:
        notes.append(
            f"{AUDIT_FILE} ends with an unfinished line ({len(tail)} bytes, an interrupted append): "
            "reopening the log cuts it and records the repair"
        )
    entries = [parse_line(line) for line in lines]
    result = check_chain(entries, key)
    result.problems[:0], result.notes = problems, notes
    head, head_problem = file.read_head()
    if head_problem:
        result.problems.append(head_problem)
    elif head is not None:
        _check_head(result, entries, head)
    check_anchor(result, entries, anchor)
    return result


def _check_head(result: Verification, entries: Sequence[dict[str, Any]], head: dict[str, Any]) -> None:
    seq, seal = head["seq"], head["hash"]
    if seq < 0:
        result.problems.append(f"the head records entry {seq}, which no log has (the head was edited)")
    elif seq > len(entries):
        result.problems.append(
            f"the log ends at entry {len(entries)} but its head records entry {seq} (entries cut from the end)"
        )
    elif seal != (entries[seq - 1].get("hash") if seq else GENESIS):
        result.problems.append(
            f"the head records entry {seq} with a seal the log's entry {seq} does not have (the end was replaced)"
        )
    elif seq < len(entries):
        result.notes.append(
            f"the head is {len(entries) - seq} entries behind the log (an interrupted append): reopening the log moves it on"
        )
