"""The audit trail: a hash chain that any single edited, deleted or reordered entry breaks."""

from __future__ import annotations

import json

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.cli import main
from passhat.guard import AuditLog, Gateway
from passhat.guard.audit import AUDIT_FILE, verify_entries, verify_folder

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
