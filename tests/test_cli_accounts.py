"""`passhat accounts`: the web app's accounts from the terminal, every change in the audit trail by the person at
the terminal, bad input refused with exit 2 naming what to fix; and `passhat serve` refusing what it cannot serve."""

from __future__ import annotations

import getpass
import json
import socket
from pathlib import Path

from click.testing import CliRunner
from web_support import PASSWORD

from passhat.cli import main
from passhat.serve.web.accounts import Accounts


def users(out: Path, *args: str, password: str | None = None):
    stdin = None if password is None else password + "\n"
    return CliRunner().invoke(main, ["accounts", *args, "--out", str(out)], input=stdin)


def trail(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "audit" / "audit.jsonl").read_text().splitlines()]


def test_add_makes_an_account_prints_its_two_factor_secret_and_audits_who_did_it(tmp_path: Path):
    result = users(tmp_path, "add", "alice", "--role", "approver", "--password-stdin", password=PASSWORD)
    assert result.exit_code == 0, result.output
    account = Accounts(tmp_path).require("alice")
    assert account.role == "approver" and not account.enrolled
    assert account.totp_secret in result.output and "otpauth://totp/" in result.output and "QR code" in result.output
    assert Accounts(tmp_path).check_password("alice", PASSWORD) is not None
    entry = trail(tmp_path)[-1]
    assert (entry["action"], entry["by"], entry["name"], entry["role"]) == (
        "account added",
        f"cli:{getpass.getuser()}",
        "alice",
        "approver",
    )
    assert PASSWORD not in (tmp_path / "audit" / "audit.jsonl").read_text()


def test_add_prompts_for_the_password_twice(tmp_path: Path):
    result = CliRunner().invoke(
        main, ["accounts", "add", "alice", "--role", "viewer", "--out", str(tmp_path)], input=f"{PASSWORD}\n{PASSWORD}\n"
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("Password") == 1 and "Repeat" in result.output
    assert Accounts(tmp_path).check_password("alice", PASSWORD) is not None


def test_a_bad_role_exits_2_naming_the_flag(tmp_path: Path):
    result = users(tmp_path, "add", "alice", "--role", "boss", "--password-stdin", password=PASSWORD)
    assert result.exit_code == 2 and "--role" in result.output and "viewer, operator, approver, admin" in result.output
    assert Accounts(tmp_path).get("alice") is None


def test_a_bad_name_a_short_password_and_a_name_taken_exit_2(tmp_path: Path):
    assert users(tmp_path, "add", "Bad Name", "--role", "viewer", "--password-stdin", password=PASSWORD).exit_code == 2
    short = users(tmp_path, "add", "alice", "--role", "viewer", "--password-stdin", password="short")
    assert short.exit_code == 2 and "--password-stdin" in short.output
    users(tmp_path, "add", "alice", "--role", "viewer", "--password-stdin", password=PASSWORD)
    taken = users(tmp_path, "add", "alice", "--role", "admin", "--password-stdin", password=PASSWORD)
    assert taken.exit_code == 2 and "exists already" in taken.output


def test_list_role_reset_2fa_password_and_remove(tmp_path: Path):
    users(tmp_path, "add", "alice", "--role", "viewer", "--password-stdin", password=PASSWORD)
    listed = users(tmp_path, "list")
    assert listed.exit_code == 0 and "alice" in listed.output and "viewer" in listed.output

    assert users(tmp_path, "role", "alice", "admin").exit_code == 0
    assert Accounts(tmp_path).require("alice").role == "admin"
    bad_role = users(tmp_path, "role", "alice", "boss")
    assert bad_role.exit_code == 2 and "ROLE" in bad_role.output

    Accounts(tmp_path).confirm_enrolment("alice")
    old_secret = Accounts(tmp_path).require("alice").totp_secret
    reset = users(tmp_path, "reset-2fa", "alice")
    account = Accounts(tmp_path).require("alice")
    assert (
        reset.exit_code == 0
        and account.totp_secret != old_secret
        and not account.enrolled
        and account.totp_secret in reset.output
    )

    new = "another long password"
    assert users(tmp_path, "password", "alice", "--password-stdin", password=new).exit_code == 0
    assert Accounts(tmp_path).check_password("alice", new) is not None

    assert users(tmp_path, "remove", "alice").exit_code == 0
    assert Accounts(tmp_path).get("alice") is None
    actions = [e["action"] for e in trail(tmp_path)]
    assert actions == [
        "account added",
        "account role changed",
        "account two-factor reset",
        "password changed",
        "account removed",
    ]


def test_changing_an_account_that_does_not_exist_exits_2(tmp_path: Path):
    for args in (("role", "nobody", "admin"), ("remove", "nobody"), ("reset-2fa", "nobody")):
        result = users(tmp_path, *args)
        assert result.exit_code == 2 and "no account named 'nobody'" in result.output
    result = users(tmp_path, "password", "nobody", "--password-stdin", password=PASSWORD)
    assert result.exit_code == 2


def test_serve_refuses_a_port_in_use_naming_it(tmp_path: Path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "--out", str(tmp_path), "--port", str(port)])
    assert result.exit_code == 2 and f"--port {port}" in result.output


def test_serve_refuses_an_out_that_is_not_a_folder(tmp_path: Path):
    file = tmp_path / "runs"
    file.write_text("")
    result = CliRunner().invoke(main, ["serve", "--out", str(file), "--port", "0"])
    assert result.exit_code == 2 and "--out" in result.output


def test_serve_refuses_a_trusted_proxy_that_is_no_address_before_it_listens(tmp_path: Path):
    result = CliRunner().invoke(main, ["serve", "--out", str(tmp_path / "runs"), "--port", "0", "--trusted-proxy", "proxy"])
    assert result.exit_code == 2 and "--trusted-proxy 'proxy'" in result.output and not (tmp_path / "runs").exists()


def test_a_name_that_is_not_text_is_no_account_not_a_crash(tmp_path: Path):
    for args in (("role", "caf\udce9", "admin"), ("remove", "\udcff"), ("reset-2fa", "caf\udce9")):
        result = users(tmp_path, *args)
        assert result.exit_code == 2 and "no account named" in result.output and "bug" not in result.output


def test_a_trail_that_cannot_be_continued_refuses_the_change_instead_of_leaving_it_unrecorded(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PASSHAT_AUDIT_KEY", "a" * 64)
    assert users(tmp_path, "add", "alice", "--role", "viewer", "--password-stdin", password=PASSWORD).exit_code == 0
    monkeypatch.setenv("PASSHAT_AUDIT_KEY", "b" * 64)  # another key: the trail sealed with the first cannot go on
    added = users(tmp_path, "add", "bob", "--role", "viewer", "--password-stdin", password=PASSWORD)
    assert added.exit_code == 2 and "cannot be continued" in " ".join(added.output.split()), added.output
    assert Accounts(tmp_path).get("bob") is None
    changed = users(tmp_path, "role", "alice", "admin")
    assert changed.exit_code == 2 and Accounts(tmp_path).require("alice").role == "viewer"
    assert [e["action"] for e in trail(tmp_path)] == ["account added"]


def test_the_words_the_inbox_reads_as_someone_cannot_be_account_names(tmp_path: Path):
    from passhat.serve.web.accounts import RESERVED_NAMES
    from passhat.serve.web.pages_inbox import MINE, UNASSIGNED

    assert {MINE, UNASSIGNED, "me"} <= RESERVED_NAMES
    for word in sorted(RESERVED_NAMES):
        result = users(tmp_path, "add", word, "--role", "viewer", "--password-stdin", password=PASSWORD)
        assert result.exit_code == 2 and "cannot be an account name" in " ".join(result.output.split()), result.output
        assert Accounts(tmp_path).get(word) is None


def test_the_old_command_name_still_works_hidden_from_help(tmp_path: Path) -> None:
    made = CliRunner().invoke(
        main, ["users", "add", "bob", "--role", "viewer", "--password-stdin", "--out", str(tmp_path)], input=f"{PASSWORD}\n"
    )
    assert made.exit_code == 0, made.output
    assert "bob" in users(tmp_path, "list").output
    shown = CliRunner().invoke(main, ["--help"]).output
    assert "accounts" in shown and "users" not in shown


def test_the_customer_option_keeps_its_old_name_hidden() -> None:
    from passhat.cli.run import run

    shown = CliRunner().invoke(main, ["run", "--help"]).output
    assert "--customer " in shown and "--customer-base-url" in shown and "--user" not in shown
    names = {o: p.name for p in run.params for o in p.opts}
    assert names["--user"] == names["--customer"] == "user"
    assert names["--user-temperature"] == names["--customer-temperature"]


def test_the_old_customer_flag_still_chooses_the_customer_and_says_its_new_name(tmp_path: Path) -> None:
    for flag in ("--user", "--customer"):
        result = CliRunner().invoke(main, ["run", flag, "nobody", "--trials", "1", "--out", str(tmp_path)])
        assert result.exit_code == 2 and "unknown simulated customer 'nobody'" in result.output, result.output
        assert ("note: --user is now --customer" in result.stderr) is (flag == "--user")
    both = CliRunner().invoke(main, ["run", "--user", "scripted", "--customer", "scripted", "--out", str(tmp_path)])
    assert both.exit_code == 2 and "give --customer once (--user is its old name)" in both.output
    assert not tmp_path.exists() or not list(tmp_path.iterdir())  # refused before any run was made
