"""The audit trail: sealed with a key the run folder never holds, so that every edit, deletion,
reordering, truncation and consistent rewrite is detected by whoever has the key, and nothing is
called intact by whoever has not."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.cli import main
from passhat.errors import UserError
from passhat.guard import AuditLog, Gateway, audit
from passhat.guard.audit import (
    AUDIT_FILE,
    GENESIS,
    HEAD_FILE,
    KEY_VARIABLE,
    AuditFile,
    AuditKey,
    canonical,
    entry_line,
    key_path,
    load_key,
    verify_folder,
)
from passhat.store import STORE_FILE

KEY = "k" * 40  # a key the tests set through PASSHAT_AUDIT_KEY
records = st.lists(
    st.fixed_dictionaries({"tool": st.sampled_from(["refund", "get"]), "n": st.integers(0, 9)}), min_size=2, max_size=12
)


def reseal(entries: list[dict[str, Any]], key: AuditKey, key_id: str) -> list[dict[str, Any]]:
    """What an attacker with passhat's code but not the key does: chain every entry again under another key."""
    out, prev = [], GENESIS
    for seq, entry in enumerate(entries, 1):
        body = {**{k: v for k, v in entry.items() if k != "hash"}, "seq": seq, "prev": prev, "key_id": key_id}
        prev = hmac.new(key.secret, canonical(body), hashlib.sha256).hexdigest()
        out.append({**body, "hash": prev})
    return out


# --- a log in a folder (AuditLog), checked by verify_folder ---------------------------------------------------


def written_log(folder: Path, items: list[dict[str, Any]], key: AuditKey) -> list[dict[str, Any]]:
    AuditLog(folder, key).extend(items)
    return [json.loads(line) for line in (folder / AUDIT_FILE).read_text().splitlines()]


def write_log(folder: Path, entries: list[dict[str, Any]], head: dict[str, Any] | None) -> None:
    (folder / AUDIT_FILE).write_text("".join(entry_line(e) + "\n" for e in entries))
    if head is not None:
        (folder / HEAD_FILE).write_text(json.dumps(head))


@settings(max_examples=40, deadline=None)
@given(records, st.data())
def test_with_the_key_any_single_edit_deletion_reordering_cut_or_rewrite_is_detected(tmp_path_factory, items, data) -> None:
    key = AuditKey(b"s" * 32, "test")
    folder = tmp_path_factory.mktemp("log")
    entries = written_log(folder, items, key)
    head = json.loads((folder / HEAD_FILE).read_text())
    assert verify_folder(folder, key).intact
    i = data.draw(st.integers(0, len(entries) - 1))
    j = data.draw(st.integers(0, len(entries) - 1).filter(lambda j: j != i))
    edited = [dict(e) for e in entries]
    edited[i]["n"] += 1
    moved = list(entries)
    moved[i], moved[j] = moved[j], moved[i]
    rewritten = reseal(edited, AuditKey(b"x" * 32, "attacker"), key.id)  # consistent, but not under the key
    cut = entries[: data.draw(st.integers(0, len(entries) - 1))]
    attacks = {
        "edit": (edited, head), "deletion": (entries[:i] + entries[i + 1:], head), "reordering": (moved, head),
        "cut": (cut, head), "rewrite": (rewritten, {"seq": len(rewritten), "hash": rewritten[-1]["hash"]}),
    }  # fmt: skip
    for name, (tampered, new_head) in attacks.items():
        write_log(folder, tampered, new_head)
        assert verify_folder(folder, key).problems, name


def test_a_gateway_audits_every_call_and_decision(tmp_path) -> None:
    from test_guard import refund, shop_db

    log = AuditLog(tmp_path)
    gw = Gateway.over([refund], shop_db(), guards=["idempotency", "confirmation", "audit"], audit=log)
    gw.call("refund", {"account": "A-1", "amount": 5.0})
    gw.call("refund", {"account": "A-1", "amount": 5.0}, messages=[("agent", "Refund $5 to A-1?"), ("user", "yes")])
    gw.call("refund", {"account": "A-1", "amount": 5.0}, messages=[("agent", "Refund $5 to A-1?"), ("user", "yes")])
    assert [(e["decision"], e["guard"]) for e in log.entries] == [
        ("refused", "confirmation"),
        ("called", None),
        ("replayed", "idempotency"),
    ]
    assert verify_folder(tmp_path).intact and verify_folder(tmp_path).entries == 3
    AuditLog(tmp_path).extend([{"tool": "x"}])  # a reopened log continues the chain
    assert verify_folder(tmp_path).intact and verify_folder(tmp_path).entries == 4


def test_a_gateway_outside_a_folder_keeps_its_chain_in_memory_under_a_key_of_its_own() -> None:
    log = AuditLog()
    log.extend([{"tool": "a"}, {"tool": "b"}])
    assert log.key.source == "this process only" and [e["seq"] for e in log.entries] == [1, 2]
    assert not key_path().exists() or key_path().read_text().strip().encode() != log.key.secret


def test_a_record_may_not_set_the_chain_fields() -> None:
    with pytest.raises(ValueError, match="seq"):
        AuditLog().append({"seq": 7, "tool": "x"})


def _audited_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "out" / "g"
    folder.mkdir(parents=True)
    AuditLog(folder).extend([{"tool": "refund", "n": i} for i in range(3)])
    assert verify_folder(folder).intact
    return folder


def _replace_line(folder: Path, number: int, raw: bytes) -> None:
    lines = (folder / AUDIT_FILE).read_bytes().splitlines()
    lines[number - 1] = raw
    (folder / AUDIT_FILE).write_bytes(b"\n".join(lines) + b"\n")


def verify_cli(out: Path, *args: str, run_id: str = "g") -> Result:
    return CliRunner().invoke(main, ["audit", "verify", run_id, "--out", str(out), *args])


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (lambda f: _replace_line(f, 2, b'{"seq": 2, "tool": "\xff\xfe"}'), "line 2: not UTF-8 text"),
        (lambda f: _replace_line(f, 2, b"[1, 2]"), "line 2: JSON but not an entry"),
        (lambda f: _replace_line(f, 2, b'"just a string"'), "line 2: JSON but not an entry"),
        (lambda f: _replace_line(f, 2, b"[" * 100000), "line 2: not a JSON entry"),
        (lambda f: _replace_line(f, 2, b'{"seq": 2, "prev": 7, "hash": [], "key_id": 1}'), "entry 2: sealed with key 1"),
        (lambda f: _replace_line(f, 2, b'{"seq": "[/red]"}'), "sequence number '[/red]' where 2 belongs"),
        (lambda f: (f / HEAD_FILE).unlink(), "head missing"),
        (lambda f: (f / HEAD_FILE).write_bytes(b"\xff{"), "head unreadable"),
        (lambda f: (f / HEAD_FILE).write_text("[1, 2]"), "head unreadable"),
        (lambda f: (f / HEAD_FILE).write_text('{"seq": "3"}'), "head unreadable"),
        (lambda f: (f / HEAD_FILE).write_text('{"seq": -1, "hash": ""}'), "no log has"),
        (lambda f: ((f / HEAD_FILE).unlink(), (f / HEAD_FILE).mkdir()), "head unreadable"),
        (lambda f: (f / AUDIT_FILE).unlink(), "log missing"),
    ],
)
def test_audit_verify_lists_any_tampering_of_a_log_and_never_crashes(tmp_path, tamper, expected) -> None:
    folder = _audited_folder(tmp_path)
    tamper(folder)
    problems = verify_folder(folder).problems
    assert any(expected in p for p in problems), problems
    result = verify_cli(tmp_path / "out")
    assert result.exit_code == 1, (result.output, result.exception)
    assert expected in result.output and "TAMPERED" in result.output


def test_a_missing_head_is_not_reported_as_entries_cut_from_the_end(tmp_path) -> None:
    folder = _audited_folder(tmp_path)
    (folder / HEAD_FILE).unlink()
    assert verify_folder(folder).problems == [
        f"head missing ({HEAD_FILE}): the log's end cannot be checked (was the head deleted?)"
    ]


def test_an_append_cut_short_by_a_kill_is_repaired_on_reopening_and_the_repair_is_recorded(tmp_path) -> None:
    folder = _audited_folder(tmp_path)
    whole = (folder / AUDIT_FILE).read_bytes()
    with open(folder / AUDIT_FILE, "ab") as log:  # half of the next entry, as a kill in the middle of an append leaves it
        log.write(b'{"decision": "called", "seq": 4, "to')
    torn = verify_folder(folder)
    assert torn.intact and "unfinished line" in torn.notes[0]  # what a kill leaves is not tampering
    AuditLog(folder).append({"tool": "next"})
    after = verify_folder(folder)
    assert after.intact and not after.notes and after.entries == 5
    assert (folder / AUDIT_FILE).read_bytes().startswith(whole)
    repair, appended = [json.loads(line) for line in (folder / AUDIT_FILE).read_text().splitlines()[3:]]
    assert repair["decision"] == "repaired" and repair["bytes"] == 36 and appended["tool"] == "next"


def test_a_complete_last_line_is_never_cut(tmp_path) -> None:
    folder = _audited_folder(tmp_path)
    before = (folder / AUDIT_FILE).read_bytes()
    AuditLog(folder)
    assert (folder / AUDIT_FILE).read_bytes() == before


def test_a_log_sealed_with_another_key_is_not_continued(tmp_path, monkeypatch) -> None:
    folder = _audited_folder(tmp_path)
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    with pytest.raises(UserError, match="sealed with audit key"):
        AuditLog(folder)


# --- the key ----------------------------------------------------------------------------------------------------


def test_the_key_file_is_made_on_first_use_readable_by_its_owner_only(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert load_key(create=False) is None
    made = load_key(create=True)
    path = tmp_path / "config" / "passhat" / "audit.key"
    assert made is not None and made.source == str(path)
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    again = load_key(create=True)
    assert again is not None and again.id == made.id and again.id not in path.read_text()


def test_the_environment_variable_wins_and_a_short_or_exposed_key_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    key = load_key(create=True)
    assert key is not None and key.source == KEY_VARIABLE and key.secret == KEY.encode()
    assert not (tmp_path / "config").exists()  # no file made when the variable gives the key
    monkeypatch.setenv(KEY_VARIABLE, "short")
    with pytest.raises(UserError, match="at least 32"):
        load_key(create=True)
    monkeypatch.delenv(KEY_VARIABLE)
    load_key(create=True)
    os.chmod(key_path(), 0o644)
    with pytest.raises(UserError, match="chmod 600"):
        load_key(create=False)


# --- a run's trail: the store is the record, audit.jsonl and audit.head its mirror --------------------------------


@pytest.fixture(scope="module")
def guarded_run(tmp_path_factory) -> Path:
    """A run with every guard on: two tasks, two trials each, sealed with KEY."""
    out = tmp_path_factory.mktemp("base")
    patch = pytest.MonkeyPatch()
    patch.setenv(KEY_VARIABLE, KEY)
    try:
        result = CliRunner().invoke(main, [
            "run", "--agent", "reference:hasty", "--tasks", "retail-005,retail-003", "--personas", "baseline",
            "--trials", "2", "--guard", "all", "--out", str(out), "--run-id", "g",
        ])  # fmt: skip
    finally:
        patch.undo()
    assert result.exit_code == 0, result.output
    return out / "g"


@pytest.fixture
def run(guarded_run, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the guarded run, verified with its key."""
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    shutil.copytree(guarded_run, tmp_path / "out" / "g")
    return tmp_path / "out" / "g"


def stored(folder: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(folder / STORE_FILE) as db:
        return [json.loads(line) for (line,) in db.execute("SELECT entry FROM audit ORDER BY seq")]


def rewrite_trail(folder: Path, entries: list[dict[str, Any]], *, store: bool = True, mirror: bool = True) -> None:
    """Put these entries in the store, the mirror and the head, consistently (the attacker's best effort)."""
    if store:
        with sqlite3.connect(folder / STORE_FILE) as db:
            db.execute("DELETE FROM audit")
            db.executemany("INSERT INTO audit VALUES (?, ?)", [(i, entry_line(e)) for i, e in enumerate(entries, 1)])
    if mirror:
        write_log(folder, entries, {"seq": entries[-1]["seq"], "hash": entries[-1]["hash"]} if entries else None)


def sql(folder: Path, statement: str, *args: Any) -> None:
    with sqlite3.connect(folder / STORE_FILE) as db:
        db.execute(statement, args)


def edited(entries: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    out = [dict(e) for e in entries]
    out[index]["status"] = "error" if out[index].get("status") == "ok" else "ok"
    return out


def last_trial_cut(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries without the last trial's (its records and closing entry)."""
    closings = [i for i, e in enumerate(entries) if e.get("decision") == "trial_stored"]
    return entries[: closings[-1] - entries[closings[-1]]["records"]]


ATTACKS = {
    "one entry edited in the mirror": (lambda f, e: rewrite_trail(f, edited(e, 1), store=False), "audit.jsonl line 2: differs"),
    "one entry edited in the store and the mirror": (
        lambda f, e: rewrite_trail(f, edited(e, 1)),
        "entry 2: its seal does not match",
    ),
    "one entry deleted": (lambda f, e: rewrite_trail(f, e[:2] + e[3:]), "entry 3: sequence number 4"),
    "two entries swapped": (lambda f, e: rewrite_trail(f, [e[0], e[2], e[1], *e[3:]]), "entry 2: sequence number 3"),
    "the last trial's entries cut, head rewritten": (
        lambda f, e: rewrite_trail(f, last_trial_cut(e)),
        "stored, but the trail has no entry",
    ),
    "every entry resealed without the key": (
        lambda f, e: rewrite_trail(f, reseal(edited(e, 1), AuditKey(b"x" * 32, "attacker"), e[0]["key_id"])),
        "entry 1: its seal does not match",
    ),
    "both audit files deleted": (lambda f, e: ((f / AUDIT_FILE).unlink(), (f / HEAD_FILE).unlink()), "log missing (audit.jsonl)"),
    "the mirror replaced by a folder": (lambda f, e: ((f / AUDIT_FILE).unlink(), (f / AUDIT_FILE).mkdir()), "log unreadable"),
    "the head rewritten": (
        lambda f, e: (f / HEAD_FILE).write_text(json.dumps({"seq": 3, "hash": "f" * 64})),
        "is not an entry of the stored trail",
    ),
    "a stored result edited": (
        lambda f, e: sql(f, "UPDATE trials SET reward = 1 - reward WHERE trial = 0"),
        "its stored result is not the one the trail sealed",
    ),
    "a stored trial deleted": (lambda f, e: sql(f, "DELETE FROM trials WHERE trial = 1"), "in the trail but not in the store"),
    "the audit table dropped": (lambda f, e: sql(f, "DROP TABLE audit"), "an entry the store does not hold"),
    "the trail emptied everywhere": (lambda f, e: rewrite_trail(f, []), "stored, but the trail has no entry"),
    "the mirror emptied, its head reset": (
        lambda f, e: write_log(f, [], {"seq": 0, "hash": "0" * 64}),
        "missing those of 4 stored trials",
    ),
    "the mirror cut by two trials": (
        lambda f, e: write_log(f, last_trial_cut(last_trial_cut(e)), None),
        "missing those of 2 stored trials",
    ),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_every_attack_on_a_runs_trail_is_tampered_exit_1(run, attack) -> None:
    assert verify_cli(run.parent).exit_code == 0
    tamper, expected = ATTACKS[attack]
    tamper(run, stored(run))
    result = verify_cli(run.parent)
    assert result.exit_code == 1, result.output
    assert "TAMPERED" in result.output and expected in result.output, result.output


def test_an_untouched_run_is_intact_and_says_what_is_proven_and_prints_its_head(run) -> None:
    result = verify_cli(run.parent)
    entries = stored(run)
    assert result.exit_code == 0, result.output
    assert f"intact ({len(entries)} entries sealed with audit key {entries[0]['key_id']}" in result.output
    assert "each of its 4 stored trials has all its entries" in result.output
    assert "Not provable from the folder alone" in result.output
    assert result.output.splitlines()[-1] == f"head {len(entries)}:{entries[-1]['hash']}"
    assert sum(e.get("decision") == "trial_stored" for e in entries) == 4


def test_cutting_trials_with_their_entries_is_caught_by_an_anchor_recorded_elsewhere(run) -> None:
    anchor = verify_cli(run.parent).output.splitlines()[-1].removeprefix("head ")
    entries = stored(run)
    last = entries[-1]["trial"]
    sql(run, "DELETE FROM trials WHERE task_id = ? AND persona = ? AND trial = ?", *last)
    rewrite_trail(run, last_trial_cut(entries))
    assert verify_cli(run.parent).exit_code == 0  # the folder alone cannot show it: the limit the output states
    result = verify_cli(run.parent, "--anchor", anchor)
    assert result.exit_code == 1 and f"the anchored head {anchor} is not in the log" in result.output
    assert verify_cli(run.parent, "--anchor", "3:abc").exit_code == 2


def test_without_the_key_nothing_is_called_intact(run, monkeypatch, tmp_path) -> None:
    monkeypatch.delenv(KEY_VARIABLE)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))
    result = verify_cli(run.parent)
    assert result.exit_code == 2 and "intact" not in result.output.replace("proven intact", "")
    assert "cannot be proven intact" in result.output and KEY_VARIABLE in result.output
    rewrite_trail(run, stored(run)[1:])  # what needs no key still proves tampering
    assert verify_cli(run.parent).exit_code == 1


def test_another_key_cannot_vouch_for_a_trail(run, monkeypatch) -> None:
    monkeypatch.setenv(KEY_VARIABLE, "o" * 40)
    result = verify_cli(run.parent)
    assert result.exit_code == 2 and "sealed with audit key" in result.output
    attacker = AuditKey(b"x" * 32, "attacker")
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    rewrite_trail(run, reseal(edited(stored(run), 1), attacker, attacker.id))  # a whole new chain under the attacker's key
    result = verify_cli(run.parent)
    assert result.exit_code == 2 and "intact" not in result.output.replace("proven intact", "")


def test_the_key_never_reaches_the_run_folder_or_the_output(run) -> None:
    for path in run.iterdir():
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in verify_cli(run.parent).output


def test_a_run_without_the_audit_guard_has_no_trail_to_verify(tmp_path) -> None:
    cli = CliRunner()
    cli.invoke(
        main,
        [
            "run",
            "--agent",
            "reference:perfect",
            "--tasks",
            "retail-001",
            "--personas",
            "baseline",
            "--trials",
            "1",
            "--out",
            str(tmp_path),
            "--run-id",
            "plain",
        ],
    )
    out = verify_cli(tmp_path, run_id="plain")
    assert out.exit_code == 2 and "--guard all" in out.output


def test_a_trail_from_before_keys_is_reported_unproven_not_intact(run) -> None:
    (run / AUDIT_FILE).write_text('{"seq": 1, "prev": "' + GENESIS + '", "hash": "ab", "tool": "x"}\n')
    with sqlite3.connect(run / STORE_FILE) as db:
        db.execute("DROP TABLE audit")
        db.execute("PRAGMA user_version = 2")
    result = verify_cli(run.parent)
    assert result.exit_code == 2 and "unkeyed" in result.output


def test_resuming_with_another_key_is_refused(run, monkeypatch) -> None:
    sql(run, "DELETE FROM trials WHERE trial = 1")  # something left to run
    monkeypatch.setenv(KEY_VARIABLE, "o" * 40)
    result = CliRunner().invoke(main, ["run", "--resume", "g", "--out", str(run.parent)])
    assert result.exit_code == 2 and "must be sealed with the same key" in result.output


@pytest.mark.parametrize("chunk", [1, 3, 65536])
@pytest.mark.parametrize(
    "content",
    [b"", b"torn", b"one\n", b"one\ntwo\n", b"one\ntwo\ntor", b"\n", b"a\n\n", b"x" * 10 + b"\n" + b"y" * 10 + b"\nz"],
)
def test_the_last_line_is_found_from_the_end_as_a_whole_read_finds_it(tmp_path, monkeypatch, chunk, content) -> None:
    monkeypatch.setattr(audit, "READ_BACK_BYTES", chunk)
    file = AuditFile(tmp_path)
    file.log.write_bytes(content)
    lines, tail = file.read()
    assert file.read_end() == (lines[-1] if lines else None, tail)


def test_a_mirror_one_trial_behind_the_store_is_what_a_kill_leaves_not_tampering(run) -> None:
    """A kill between storing a trial and mirroring it leaves exactly that trial's entries unwritten."""
    write_log(run, last_trial_cut(stored(run)), None)
    result = verify_cli(run.parent)
    assert result.exit_code == 0, result.output
    assert "entries behind the store (an interrupted write)" in " ".join(result.output.split())
