"""The audit trail: a hash chain that any single edited, deleted or reordered entry breaks."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.cli import main
from passhat.guard import AuditLog, Gateway
from passhat.guard.audit import AUDIT_FILE, HEAD_FILE, verify_entries, verify_folder

records = st.lists(st.fixed_dictionaries({"tool": st.sampled_from(["refund", "get"]), "n": st.integers(0, 9)}), min_size=2, max_size=12)


def chain(items) -> list[dict]:
    log = AuditLog()
    log.extend(items)
    return log.entries


def head(entries) -> dict:
    return {"seq": len(entries), "hash": entries[-1]["hash"]}


@settings(max_examples=60)
@given(records, st.data())
def test_any_single_edit_delete_or_reorder_is_detected(items, data) -> None:
    entries = chain(items)
    anchor = head(entries)
    assert verify_entries(entries, anchor) == []
    i = data.draw(st.integers(0, len(entries) - 1))
    edited = [dict(e) for e in entries]
    edited[i]["n"] = edited[i]["n"] + 1
    deleted = entries[:i] + entries[i + 1:]
    j = data.draw(st.integers(0, len(entries) - 1).filter(lambda j: j != i))
    moved = list(entries)
    moved[i], moved[j] = moved[j], moved[i]
    for tampered in (edited, deleted, moved):
        assert verify_entries(tampered, anchor), tampered


def test_a_gateway_audits_every_call_and_decision(tmp_path) -> None:
    from test_guard import refund, shop_db

    log = AuditLog(tmp_path)
    gw = Gateway.over([refund], shop_db(), guards=["idempotency", "confirmation", "audit"], audit=log)
    gw.call("refund", {"account": "A-1", "amount": 5.0})
    gw.call("refund", {"account": "A-1", "amount": 5.0}, messages=[("agent", "Refund $5 to A-1?"), ("user", "yes")])
    gw.call("refund", {"account": "A-1", "amount": 5.0}, messages=[("agent", "Refund $5 to A-1?"), ("user", "yes")])
    assert [(e["decision"], e["guard"]) for e in log.entries] == [("refused", "confirmation"), ("called", None), ("replayed", "idempotency")]
    assert verify_folder(tmp_path) == (3, [])
    AuditLog(tmp_path).extend([{"tool": "x"}])  # a reopened log continues the chain
    assert verify_folder(tmp_path) == (4, [])


def test_passhat_audit_verify_on_a_guarded_run(tmp_path) -> None:
    cli = CliRunner()
    args = ["run", "--agent", "reference:hasty", "--tasks", "retail-005", "--personas", "baseline", "--trials", "2",
            "--guard", "all", "--out", str(tmp_path), "--run-id", "g"]
    assert cli.invoke(main, args).exit_code == 0
    ok = cli.invoke(main, ["audit", "verify", "g", "--out", str(tmp_path)])
    assert ok.exit_code == 0 and "intact" in ok.output
    log = tmp_path / "g" / AUDIT_FILE
    lines = log.read_text().splitlines()
    entry = json.loads(lines[1])
    entry["status"] = "ok" if entry["status"] != "ok" else "error"
    log.write_text("\n".join([lines[0], json.dumps(entry, sort_keys=True), *lines[2:]]) + "\n")
    bad = cli.invoke(main, ["audit", "verify", "g", "--out", str(tmp_path)])
    assert bad.exit_code == 1 and "line 2" in bad.output and "TAMPERED" in bad.output
    log.write_text("\n".join(lines[:-1]) + "\n")  # the last entry cut off
    assert cli.invoke(main, ["audit", "verify", "g", "--out", str(tmp_path)]).exit_code == 1


def test_audit_verify_without_a_log_is_a_user_error(tmp_path) -> None:
    cli = CliRunner()
    cli.invoke(main, ["run", "--agent", "reference:perfect", "--tasks", "retail-001", "--personas", "baseline", "--trials", "1",
                      "--out", str(tmp_path), "--run-id", "plain"])
    out = cli.invoke(main, ["audit", "verify", "plain", "--out", str(tmp_path)])
    assert out.exit_code == 2 and "--guard all" in out.output


def _audited_folder(tmp_path):
    folder = tmp_path / "out" / "g"
    folder.mkdir(parents=True)
    AuditLog(folder).extend([{"tool": "refund", "n": i} for i in range(3)])
    assert verify_folder(folder) == (3, [])
    return folder


def _replace_line(folder, number: int, raw: bytes) -> None:
    lines = (folder / AUDIT_FILE).read_bytes().splitlines()
    lines[number - 1] = raw
    (folder / AUDIT_FILE).write_bytes(b"\n".join(lines) + b"\n")


def _verify_cli(tmp_path):
    return CliRunner().invoke(main, ["audit", "verify", "g", "--out", str(tmp_path / "out")])


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (lambda f: _replace_line(f, 2, b'{"seq": 2, "tool": "\xff\xfe"}'), "line 2: not UTF-8 text"),
        (lambda f: _replace_line(f, 2, b"[1, 2]"), "line 2: JSON but not an entry"),
        (lambda f: _replace_line(f, 2, b'"just a string"'), "line 2: JSON but not an entry"),
        (lambda f: _replace_line(f, 2, b"[" * 100000), "line 2: not a JSON entry"),
        (lambda f: _replace_line(f, 2, b'{"seq": 2, "prev": 7, "hash": []}'), "line 2: its content does not match its hash"),
        (lambda f: _replace_line(f, 2, b'{"seq": "[/red]"}'), "sequence number '[/red]' where 2 belongs"),
        (lambda f: (f / HEAD_FILE).unlink(), "head missing"),
        (lambda f: (f / HEAD_FILE).write_bytes(b"\xff{"), "head unreadable"),
        (lambda f: (f / HEAD_FILE).write_text("[1, 2]"), "head unreadable"),
        (lambda f: (f / HEAD_FILE).write_text('{"seq": "3"}'), "head unreadable"),
        (lambda f: ((f / HEAD_FILE).unlink(), (f / HEAD_FILE).mkdir()), "head unreadable"),
        (lambda f: (f / AUDIT_FILE).unlink(), "log missing"),
    ],
)
def test_audit_verify_lists_any_tampering_and_never_crashes(tmp_path, tamper, expected) -> None:
    folder = _audited_folder(tmp_path)
    tamper(folder)
    _, problems = verify_folder(folder)
    assert any(expected in p for p in problems), problems
    result = _verify_cli(tmp_path)
    assert result.exit_code == 1, (result.output, result.exception)
    assert expected in result.output and "TAMPERED" in result.output


def test_a_missing_head_is_not_reported_as_entries_cut_from_the_end(tmp_path) -> None:
    folder = _audited_folder(tmp_path)
    (folder / HEAD_FILE).unlink()
    _, problems = verify_folder(folder)
    assert problems == [f"head missing ({HEAD_FILE}): the log's end cannot be checked (was the head deleted?)"]
