"""A run's audit trail: sealed entries committed with their trial in the results store, mirrored to the
run folder's audit.jsonl, and verified against both.

The store is the record. A trial's entries, closed by one that seals the trial's stored result (a
digest of its row) and how many entries it has, are committed in the trial's own transaction, so a
kill never leaves a trial without its entries or entries without their trial. ``audit.jsonl`` follows
each commit and ``audit.head`` each writer's end; a kill can leave them behind the store, or the log
with an unfinished last line, which resuming the run repairs (the repair is an entry too).

What ``verify_run`` proves with the key: no entry was edited, inserted, deleted or reordered, even by
a rewrite of the whole chain with passhat's own code; every stored trial has all its entries, and its
stored result is the one that was sealed; the mirror holds exactly the stored entries. What a run
folder alone cannot show: its last trials removed together with their entries. The head, recorded
elsewhere and given back as an anchor, shows that.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from passhat.crashpoints import crash_point
from passhat.errors import UserError
from passhat.guard.audit import (
    AUDIT_FILE,
    GENESIS,
    AuditFile,
    AuditKey,
    Chain,
    ProblemList,
    Verification,
    check_anchor,
    check_chain,
    entry_line,
    how_to_provide_key,
    line_problem,
    parse_line,
    repair_record,
    verify_folder,
)
from passhat.run_config import stored_config
from passhat.store import STORE_FILE, EncodedTrial, ResultStore, TrialRecord
from passhat.store.results import AuditRow, TrialKey

TRIAL_STORED = "trial_stored"  # the decision of a trial's closing entry
NO_TRAIL = "run {!r} has no audit trail: it ran without the audit guard (run with --guard all or --guard audit)."


class RunTrail:
    """The audit trail a run writes: sealed under ``key``, continuing what the store holds."""

    def __init__(self, store: ResultStore, key: AuditKey):
        rows, _ = store.audit_state()
        stored = [line for _, line in rows or []]
        last = parse_line(stored[-1].encode()) if stored else None
        if last is not None and not (isinstance(last.get("seq"), int) and isinstance(last.get("hash"), str)):
            raise UserError(
                f"the audit trail stored with run {store.run_id!r} ends with something that is not an entry; "
                f"`passhat audit verify {store.run_id}` lists the problems."
            )
        if last is not None and last.get("key_id") != key.id:
            raise UserError(
                f"the audit trail of run {store.run_id!r} is sealed with audit key {last.get('key_id')}, the key in "
                f"{key.source} is {key.id}: the rest of the run must be sealed with the same key; {how_to_provide_key()}"
            )
        self.store, self.file = store, AuditFile(store.path.parent, durable=False)  # the store is the record
        self.chain = Chain(key, last["seq"], last["hash"]) if last else Chain(key)
        self._level_mirror(stored)

    def _level_mirror(self, stored: list[str]) -> None:
        """Bring audit.jsonl level with the store: cut an unfinished last line (the repair stored first, so a
        kill never leaves a cut unrecorded), then write the entries committed after the mirror's end. A
        mirror that differs otherwise is refused."""
        lines, tail = self.file.read()
        if len(lines) > len(stored) or any(line != s.encode() for line, s in zip(lines, stored, strict=False)):
            raise UserError(
                f"{self.file.log} does not match the audit trail stored with run {self.store.run_id!r}; resuming would "
                f"write after what was put there. `passhat audit verify {self.store.run_id}` lists the differences; to go "
                f"on anyway, move {AUDIT_FILE} out of the run folder and resume: the stored trail writes it again."
            )
        if tail:
            repair = self.chain.seal([repair_record(tail)])
            self.store.add_audit(_rows(repair))
            self.chain.advance(repair)
            stored += [entry_line(e) for e in repair]
            self.file.cut_torn_tail(tail)
        self.file.append(stored[len(lines) :])
        self.file.write_head(self.chain.seq, self.chain.prev)

    def record(self, trial: TrialRecord | EncodedTrial, records: Sequence[dict[str, Any]]) -> None:
        """Store the trial with its audit records, closed by an entry sealing its stored row, in one
        transaction; then mirror them to audit.jsonl."""
        entries: list[dict[str, Any]] = []

        def seal(digest: str) -> list[AuditRow]:
            closing = {"decision": TRIAL_STORED, "trial": list(trial.key), "records": len(records), "digest": digest}
            entries.extend(self.chain.seal([*records, closing]))
            return _rows(entries)

        self.store.record(trial, seal)
        crash_point("trial_stored")
        self.chain.advance(entries)
        self.file.append([entry_line(e) for e in entries])

    def close(self) -> None:
        """Record the head (once per run, not per trial: the store is the record, and a replaced file costs
        a flush; a head left behind by a kill is moved on by the next resume)."""
        self.file.write_head(self.chain.seq, self.chain.prev)


def _rows(entries: Sequence[dict[str, Any]]) -> list[AuditRow]:
    return [(e["seq"], entry_line(e)) for e in entries]


def verify_run(folder: Path, key: AuditKey | None, anchor: tuple[int, str] | None = None) -> Verification:
    """Check a run's audit trail (or, in a folder without a store, an ``AuditLog`` file); UserError when
    there is none and the run never had one."""
    file = AuditFile(folder)
    if not (folder / STORE_FILE).exists():
        if not (file.log.exists() or file.head.exists()):
            raise UserError(NO_TRAIL.format(folder.name))
        return verify_folder(folder, key, anchor)
    log_exists = file.log.exists()
    try:
        lines, tail = file.read()  # before the store: the store holds at least what the mirror holds
    except OSError as exc:
        lines, tail, unreadable = [], b"", f"log unreadable ({AUDIT_FILE}): {exc.strerror or exc}"
    else:
        unreadable = None
    head, head_problem = file.read_head()
    with ResultStore.open(folder) as store:
        audited = "audit" in stored_config(store).guard
        rows, digests = store.audit_state()
    if rows is None:  # a store older than keyed trails
        if not (audited or log_exists):
            raise UserError(NO_TRAIL.format(folder.name))
        return Verification(len(lines), unproven="the trail is unkeyed (written by an older passhat): it cannot be proven")
    if not (audited or rows or log_exists or file.head.exists()):
        raise UserError(NO_TRAIL.format(folder.name))
    stored = [line for _, line in rows]
    entries = [parse_line(line.encode()) for line in stored]
    result = check_chain(entries, key)
    result.trials = len(digests)
    if not audited and rows:
        result.problems.append(
            f"the stored configuration has no audit guard, yet the store holds {len(rows)} audit "
            "entries (the configuration was edited)"
        )
    _check_trials(result, entries, digests)
    if unreadable:
        result.problems.append(unreadable)
    else:
        _check_mirror(result, entries, stored, lines if log_exists else None, tail)
    _check_head(result, entries, head, head_problem)
    check_anchor(result, entries, anchor)
    return result


def _check_trials(result: Verification, entries: Sequence[dict[str, Any]], digests: dict[TrialKey, str]) -> None:
    """Every stored trial has its closing entry, right after all its entries, sealing its stored row."""
    sealed: dict[TrialKey, Any] = {}
    listed = ProblemList(result.problems)
    for index, entry in enumerate(entries):
        if entry.get("decision") != TRIAL_STORED:
            continue
        key, count = _trial_key(entry.get("trial")), entry.get("records")
        if key is None or not isinstance(count, int) or not 0 <= count <= index:
            listed.add(f"entry {index + 1}: a trial's closing entry without a readable trial and entry count")
            continue
        conversation = "/".join(map(str, key))
        own = entries[index - count : index]
        if any(e.get("conversation") != conversation or e.get("decision") == TRIAL_STORED for e in own):
            listed.add(
                f"entry {index + 1}: trial {conversation}'s {count} entries are not the ones just before it "
                "(entries removed, moved or added)"
            )
        sealed[key] = entry.get("digest")
    for key, digest in sorted(digests.items()):
        name = "/".join(map(str, key))
        if key not in sealed:
            listed.add(f"trial {name}: stored, but the trail has no entry of it (its entries were removed)")
        elif sealed[key] != digest:
            listed.add(f"trial {name}: its stored result is not the one the trail sealed (edited after it ran)")
    for key in sorted(sealed.keys() - digests.keys()):
        listed.add(f"trial {'/'.join(map(str, key))}: in the trail but not in the store (deleted from the store)")
    listed.close()


def _trial_key(value: Any) -> TrialKey | None:
    if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], str) \
            and isinstance(value[2], int):  # fmt: skip
        return value[0], value[1], value[2]
    return None


def _check_mirror(
    result: Verification, entries: Sequence[dict[str, Any]], stored: list[str], lines: list[bytes] | None, tail: bytes
) -> None:
    """audit.jsonl holds the stored entries, in order: maybe fewer (an interrupted write), never others."""
    if lines is None:
        if stored:
            result.problems.append(f"log missing ({AUDIT_FILE}): the store holds {len(stored)} entries it mirrors (deleted?)")
        return
    listed = ProblemList(result.problems)
    for number, line in enumerate(lines, 1):
        if number > len(stored):
            listed.add(line_problem(number, line) or f"{AUDIT_FILE} line {number}: an entry the store does not hold (added)")
        elif line != stored[number - 1].encode():
            listed.add(f"{AUDIT_FILE} line {number}: differs from entry {number} stored with the run (edited, inserted or moved)")
    listed.close()
    unwritten = sum(e.get("decision") == TRIAL_STORED for e in entries[len(lines) :])
    if unwritten > 1:  # the parent mirrors each trial right after storing it: a kill leaves one unwritten at most
        result.problems.append(
            f"{AUDIT_FILE} holds {len(lines)} of the {len(entries)} stored entries, missing those of {unwritten} "
            "stored trials: an interrupted write leaves at most the last trial's unwritten, so the log was cut or "
            "emptied (after a power cut, `passhat run --resume` writes it again from the store)"
        )
    elif len(lines) < len(entries):
        result.notes.append(
            f"{AUDIT_FILE} is {len(entries) - len(lines)} entries behind the store (an interrupted write): "
            "`passhat run --resume` writes them"
        )
    if tail:
        result.notes.append(
            f"{AUDIT_FILE} ends with an unfinished line ({len(tail)} bytes, an interrupted write): "
            "`passhat run --resume` cuts it and records the repair"
        )


def _check_head(
    result: Verification, entries: Sequence[dict[str, Any]], head: dict[str, Any] | None, problem: str | None
) -> None:
    """audit.head names a stored entry: the last one, or one before it after an interrupted write."""
    if head is None:
        if entries and problem:
            result.problems.append(problem)
        return
    seq, seal = head["seq"], head["hash"]
    if not 0 <= seq <= len(entries) or seal != (entries[seq - 1].get("hash") if seq else GENESIS):
        result.problems.append(f"the head ({seq}:{seal}) is not an entry of the stored trail (the head was rewritten)")
    elif seq < len(entries):
        result.notes.append(
            f"the head is {len(entries) - seq} entries behind the store (an interrupted write): "
            "`passhat run --resume` moves it on"
        )
