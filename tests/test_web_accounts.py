"""Accounts and sign-in of the web app: what is stored, the two factors, enrolment, the throttle, sessions and
their expiry, and that an admin's (or the CLI's) change to an account counts on the account's next request."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher
from starlette.testclient import TestClient
from web_support import PASSWORD, code_for, csrf, form_token, parallel_sign_ins, served, sign_in, signed_in

from passhat.guard.audit import signing_key, verify_folder
from passhat.serve.web import trail
from passhat.serve.web.accounts import ABSOLUTE_SECONDS, IDLE_SECONDS, THROTTLE_WINDOW, Accounts
from passhat.serve.web.app import create_app


class Clock:
    """Time that moves only when a test says so."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(tmp_path: Path, clock: Clock):
    return create_app(tmp_path, clock=clock)


def trail_actions(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "audit" / "audit.jsonl").read_text().splitlines()]


def password_step(client: TestClient, name: str, password: str = PASSWORD):
    page = client.get("/login")
    return client.post(
        "/login", data={"name": name, "password": password, "csrf_token": form_token(page.text)}, follow_redirects=False
    )


def code_step(client: TestClient, code: str, step: str = "/login/totp"):
    page = client.get(step)
    return client.post(step, data={"code": code, "csrf_token": form_token(page.text)}, follow_redirects=False)


def is_signed_in(client: TestClient) -> bool:
    return client.get("/account", follow_redirects=False).status_code == 200


# what is stored


def test_a_password_is_stored_as_an_argon2id_hash_and_never_as_itself(tmp_path: Path):
    accounts = Accounts(tmp_path)
    accounts.add("alice", "viewer", PASSWORD)
    with sqlite3.connect(tmp_path / "accounts.sqlite") as db:
        stored = db.execute("SELECT password_hash FROM accounts").fetchone()[0]
    assert stored.startswith("$argon2id$")
    for file in tmp_path.glob("accounts.sqlite*"):
        assert PASSWORD.encode() not in file.read_bytes()


def test_a_hash_made_with_older_parameters_is_upgraded_at_the_next_correct_password(tmp_path: Path):
    accounts = Accounts(tmp_path)
    accounts.hasher = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)
    accounts.add("alice", "viewer", PASSWORD)
    accounts.hasher = PasswordHasher()
    assert accounts.check_password("alice", PASSWORD) is not None
    with sqlite3.connect(tmp_path / "accounts.sqlite") as db:
        stored = db.execute("SELECT password_hash FROM accounts").fetchone()[0]
    assert not accounts.hasher.check_needs_rehash(stored)


def test_the_accounts_file_is_readable_by_its_owner_only(tmp_path: Path):
    Accounts(tmp_path)
    assert (tmp_path / "accounts.sqlite").stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("name", ["", "Alice", "9lives", "a b", "a" * 33, "../x", "é"])
def test_names_that_are_not_account_names_are_refused(tmp_path: Path, name: str):
    with pytest.raises(Exception, match="not an account name"):
        Accounts(tmp_path).add(name, "viewer", PASSWORD)


def test_a_short_password_is_refused(tmp_path: Path):
    with pytest.raises(Exception, match="12 to 1024 characters"):
        Accounts(tmp_path).add("alice", "viewer", "short")


# the two factors


def test_a_wrong_password_is_refused_audited_and_starts_no_session(app, tmp_path: Path):
    Accounts(tmp_path).add("alice", "viewer", PASSWORD)
    client = TestClient(app)
    response = password_step(client, "alice", "wrong password!")
    assert response.status_code == 401 and "Wrong name or password" in response.text
    assert "passhat_session" not in client.cookies
    failed = [e for e in trail_actions(tmp_path) if e["action"] == "sign-in failed"]
    assert failed == [failed[0]] and failed[0]["name"] == "alice" and failed[0]["factor"] == "password"
    assert "wrong password!" not in (tmp_path / "audit" / "audit.jsonl").read_text()


def test_an_unknown_name_is_refused_like_a_wrong_password(app):
    response = password_step(TestClient(app), "nobody", PASSWORD)
    assert response.status_code == 401 and "Wrong name or password" in response.text


def test_the_password_alone_opens_no_page(app, tmp_path: Path):
    Accounts(tmp_path).add("alice", "viewer", PASSWORD)
    client = TestClient(app)
    assert password_step(client, "alice").status_code == 303
    assert client.get("/audit", follow_redirects=False).headers["location"].startswith("/login")


def test_a_new_account_enrols_its_second_factor_before_its_first_session(app, tmp_path: Path, clock: Clock):
    accounts = Accounts(tmp_path, clock)
    accounts.add("alice", "viewer", PASSWORD)
    client = TestClient(app)
    assert password_step(client, "alice").headers["location"].startswith("/enrol")
    assert client.get("/login/totp", follow_redirects=False).headers["location"] == "/enrol"
    page = client.get("/enrol")
    secret = accounts.require("alice").totp_secret
    assert "<svg" in page.text and secret in page.text
    assert code_step(client, "000000" if code_for(accounts, "alice") != "000000" else "111111", "/enrol").status_code == 401
    assert not accounts.require("alice").enrolled and not is_signed_in(client)
    assert code_step(client, code_for(accounts, "alice"), "/enrol").status_code == 303
    assert accounts.require("alice").enrolled and is_signed_in(client)
    assert "/login/totp" in password_step(TestClient(app), "alice").headers["location"]  # enrolled: no QR code again


def test_a_wrong_code_is_refused(app, tmp_path: Path, clock: Clock):
    accounts = Accounts(tmp_path, clock)
    signed_in(app, tmp_path, "viewer", "alice")
    client = TestClient(app)
    password_step(client, "alice")
    wrong = next(c for c in ("123456", "654321") if c != code_for(accounts, "alice"))
    response = code_step(client, wrong)
    assert response.status_code == 401 and "Wrong or already used code" in response.text
    assert not is_signed_in(client)
    last = trail_actions(tmp_path)[-1]
    assert (last["action"], last["name"], last["factor"]) == ("sign-in failed", "alice", "code")
    assert wrong not in (tmp_path / "audit" / "audit.jsonl").read_text()


def test_a_code_signs_in_once(app, tmp_path: Path, clock: Clock):
    accounts = Accounts(tmp_path, clock)
    signed_in(app, tmp_path, "viewer", "alice")
    first = TestClient(app)
    password_step(first, "alice")
    code = code_for(accounts, "alice")
    assert code_step(first, code).status_code == 303
    second = TestClient(app)
    password_step(second, "alice")
    assert code_step(second, code).status_code == 401
    assert not is_signed_in(second)


def test_a_code_from_before_the_last_accepted_one_is_refused(app, tmp_path: Path, clock: Clock):
    accounts = Accounts(tmp_path, clock)
    signed_in(app, tmp_path, "viewer", "alice")
    totp = accounts.require("alice").totp
    client = TestClient(app)
    password_step(client, "alice")
    assert code_step(client, totp.at(clock.now, counter_offset=1)).status_code == 303
    other = TestClient(app)
    password_step(other, "alice")
    assert code_step(other, totp.at(clock.now)).status_code == 401


def test_a_code_two_steps_old_is_refused(app, tmp_path: Path, clock: Clock):
    accounts = Accounts(tmp_path, clock)
    signed_in(app, tmp_path, "viewer", "alice")
    old = accounts.require("alice").totp.at(clock.now + 90)
    clock.advance(150)  # five steps on: the code is out of the window
    client = TestClient(app)
    password_step(client, "alice")
    assert code_step(client, old).status_code == 401


def test_after_sign_in_the_browser_goes_where_it_was_going_on_this_site_only(app, tmp_path: Path, clock: Clock):
    signed_in(app, tmp_path, "viewer", "alice")
    accounts = Accounts(tmp_path, clock)
    for wanted, lands in (("/audit?page=2", "/audit?page=2"), ("//evil.example/x", "/"), ("https://evil.example/", "/")):
        clock.advance(30)  # a code signs in once: the next sign-in needs the next one
        client = TestClient(app)
        first = client.get("/login", params={"next": wanted})
        client.post(
            "/login",
            data={"name": "alice", "password": PASSWORD, "next": wanted, "csrf_token": form_token(first.text)},
            follow_redirects=False,
        )
        page = client.get("/login/totp", params={"next": wanted})
        done = client.post(
            "/login/totp",
            data={"code": code_for(accounts, "alice"), "next": wanted, "csrf_token": form_token(page.text)},
            follow_redirects=False,
        )
        assert done.headers["location"] == lands


def test_a_page_asked_for_before_sign_in_is_reached_after_it(app, tmp_path: Path):
    response = TestClient(app).get("/audit?page=3", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login?next=%2Faudit%3Fpage%3D3"


# the throttle


def test_five_failures_for_a_name_refuse_it_for_the_window_and_are_audited(app, tmp_path: Path, clock: Clock):
    signed_in(app, tmp_path, "viewer", "alice")
    client = TestClient(app)
    for _ in range(5):
        assert password_step(client, "alice", "not the password").status_code == 401
    refused = password_step(client, "alice")  # even the right password
    assert refused.status_code == 429 and "Try again after" in refused.text and int(refused.headers["retry-after"]) > 0
    assert trail_actions(tmp_path)[-1]["action"] == "sign-in refused (throttled)"
    assert password_step(TestClient(app), "bob").status_code == 401  # another name is not refused
    clock.advance(THROTTLE_WINDOW + 1)
    assert password_step(client, "alice").status_code == 303


def test_wrong_codes_count_as_failures_too(app, tmp_path: Path, clock: Clock):
    accounts = Accounts(tmp_path, clock)
    signed_in(app, tmp_path, "viewer", "alice")
    client = TestClient(app)
    password_step(client, "alice")
    wrong = next(c for c in ("123456", "654321") if c != code_for(accounts, "alice"))
    for _ in range(5):
        assert code_step(client, wrong).status_code == 401
    assert code_step(client, code_for(accounts, "alice")).status_code == 429


def test_twenty_failures_from_one_address_refuse_it_whatever_the_name(app, clock: Clock):
    # The throttle counts failures, whatever they cost: the cheapest argon2id parameters (set before the first
    # check, so the unknown names' dummy hash is cheap too) make each of the 22 checks ~5 ms of CPU, not ~0.2 s.
    app.state.accounts.hasher = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)
    client = TestClient(app)
    for n in range(20):
        assert password_step(client, f"user{n}", "not the password").status_code == 401
    assert password_step(client, "someone-new", "not the password").status_code == 429
    clock.advance(THROTTLE_WINDOW + 1)
    assert password_step(client, "someone-new", "not the password").status_code == 401


def quick_app(out: Path):
    """An app whose argon2 hashes cost a few milliseconds: still checked in a worker thread, as every hash is."""
    app = create_app(out)
    app.state.accounts.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    return app


def test_parallel_guesses_at_one_name_are_checked_five_times_at_most(tmp_path: Path):
    """The attack that found it: 12 wrong passwords for one account posted at once to a served app; all 12 were
    checked when the throttle was read before the (threaded) argon2 check and written after it."""
    app = quick_app(tmp_path)
    app.state.accounts.add("alice", "viewer", PASSWORD)
    with served(app) as base:
        statuses = parallel_sign_ins(base, ["alice"] * 12, "not the password")
    assert sorted(statuses) == [401] * 5 + [429] * 7


def test_parallel_guesses_from_one_address_are_checked_twenty_times_at_most(tmp_path: Path):
    with served(quick_app(tmp_path)) as base:
        statuses = parallel_sign_ins(base, [f"user{n}" for n in range(26)], "not the password")
    assert sorted(statuses) == [401] * 20 + [429] * 6


def test_a_forged_forwarding_header_neither_escapes_the_address_limit_nor_reaches_the_trail(tmp_path: Path):
    """The attack that found it: each guess from 127.0.0.1 claimed another X-Forwarded-For address, and uvicorn
    believed every local client (25 of 25 guesses checked, each audited under the forged address)."""
    with served(quick_app(tmp_path)) as base, httpx.Client(base_url=base) as client:
        form = form_token(client.get("/login").text)
        statuses = [
            client.post(
                "/login",
                data={"name": f"user{n}", "password": "not the password", "csrf_token": form},
                headers={"X-Forwarded-For": f"203.0.113.{n}"},
            ).status_code
            for n in range(25)
        ]
    assert statuses == [401] * 20 + [429] * 5
    assert {entry["address"] for entry in trail_actions(tmp_path)} == {"127.0.0.1"}


def test_the_forwarding_header_of_a_trusted_proxy_is_the_address(tmp_path: Path):
    with served(quick_app(tmp_path), trusted_proxies=("127.0.0.1",)) as base, httpx.Client(base_url=base) as client:
        form = form_token(client.get("/login").text)
        data = {"name": "alice", "password": "not the password", "csrf_token": form}
        client.post("/login", data=data, headers={"X-Forwarded-For": "203.0.113.7"})
    assert trail_actions(tmp_path)[-1]["address"] == "203.0.113.7"


# sessions


def test_the_session_cookie_is_http_only_same_site_strict_and_holds_no_stored_value(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "viewer", "alice")
    other = TestClient(app)
    password_step(other, "alice")
    cookie = code_step(other, code_for(app.state.accounts, "alice")).headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie and "Secure" not in cookie
    token = client.cookies["passhat_session"]
    for file in tmp_path.glob("accounts.sqlite*"):
        assert token.encode() not in file.read_bytes()


def test_secure_cookies_are_marked_secure(tmp_path: Path):
    app = create_app(tmp_path, secure_cookies=True)
    response = TestClient(app).get("/login")
    assert "Secure" in response.headers["set-cookie"]


def test_a_session_ends_after_thirty_idle_minutes(app, tmp_path: Path, clock: Clock):
    client = signed_in(app, tmp_path, "viewer", "alice")
    clock.advance(IDLE_SECONDS - 1)
    assert is_signed_in(client)
    clock.advance(IDLE_SECONDS + 1)
    assert not is_signed_in(client)


def test_a_session_ends_after_twelve_hours_however_busy(app, tmp_path: Path, clock: Clock):
    client = signed_in(app, tmp_path, "viewer", "alice")
    for _ in range(ABSOLUTE_SECONDS // (IDLE_SECONDS // 2)):
        clock.advance(IDLE_SECONDS // 2)
        busy = is_signed_in(client)
    assert busy
    clock.advance(IDLE_SECONDS // 2)
    assert not is_signed_in(client)


def test_signing_out_ends_the_session_for_good(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "viewer", "alice")
    token = client.cookies["passhat_session"]
    assert client.post("/logout", data={"csrf_token": csrf(client)}, follow_redirects=False).status_code == 303
    replay = TestClient(app, cookies={"passhat_session": token})
    assert not is_signed_in(replay)
    assert trail_actions(tmp_path)[-1]["action"] == "signed out" and trail_actions(tmp_path)[-1]["by"] == "alice"


def test_a_disabled_accounts_live_session_is_refused_at_once(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "viewer", "alice")
    Accounts(tmp_path).set_disabled("alice", True)
    assert not is_signed_in(client)
    Accounts(tmp_path).set_disabled("alice", False)
    assert not is_signed_in(client)  # the session ended; it does not come back
    assert password_step(TestClient(app), "alice").status_code == 303


def test_a_removed_accounts_live_session_is_refused_at_once(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "viewer", "alice")
    Accounts(tmp_path).remove("alice")
    assert not is_signed_in(client)


def test_a_role_change_applies_from_the_next_request(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "admin", "alice")
    assert client.get("/admin/users").status_code == 200
    Accounts(tmp_path).set_role("alice", "viewer")
    refused = client.get("/admin/users")
    assert refused.status_code == 403 and "needs the admin role" in refused.text
    Accounts(tmp_path).set_role("alice", "admin")
    assert client.get("/admin/users").status_code == 200


def test_a_new_password_ends_the_other_sessions_and_keeps_this_one(app, tmp_path: Path):
    here = signed_in(app, tmp_path, "viewer", "alice")
    elsewhere = signed_in(app, tmp_path, "viewer", "alice")
    new = "another long password"
    response = here.post(
        "/account/password",
        data={"current_password": PASSWORD, "new_password": new, "repeat_password": new, "csrf_token": csrf(here)},
    )
    assert response.status_code == 200 and "Password changed" in response.text
    assert is_signed_in(here) and not is_signed_in(elsewhere)
    assert Accounts(tmp_path).check_password("alice", new) is not None
    assert trail_actions(tmp_path)[-1]["action"] == "password changed"


def test_a_new_password_needs_the_current_one(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "viewer", "alice")
    new = "another long password"
    data = {"current_password": "not it at all", "new_password": new, "repeat_password": new, "csrf_token": csrf(client)}
    assert client.post("/account/password", data=data).status_code == 400
    assert Accounts(tmp_path).check_password("alice", PASSWORD) is not None


# the admin's pages


def test_an_admin_adds_an_account_sees_its_qr_code_once_and_the_trail_records_it(app, tmp_path: Path):
    admin = signed_in(app, tmp_path, "admin", "root")
    response = admin.post(
        "/admin/users", data={"name": "bob", "role": "approver", "password": PASSWORD, "csrf_token": csrf(admin)}
    )
    secret = Accounts(tmp_path).require("bob").totp_secret
    assert response.status_code == 200 and "<svg" in response.text and secret in response.text
    assert secret not in admin.get("/admin/users").text
    last = trail_actions(tmp_path)[-1]
    assert (last["action"], last["by"], last["name"], last["role"]) == ("account added", "root", "bob", "approver")
    sign_in(TestClient(app), "bob")


def test_an_admin_changes_roles_disables_and_resets_two_factor_all_audited(app, tmp_path: Path):
    admin = signed_in(app, tmp_path, "admin", "root")
    bob = signed_in(app, tmp_path, "operator", "bob")
    admin.post("/admin/users/bob/role", data={"role": "approver", "csrf_token": csrf(admin)})
    assert Accounts(tmp_path).require("bob").role == "approver"
    admin.post("/admin/users/bob/reset-2fa", data={"csrf_token": csrf(admin)})
    assert not Accounts(tmp_path).require("bob").enrolled and not is_signed_in(bob)
    admin.post("/admin/users/bob/disable", data={"csrf_token": csrf(admin)})
    assert Accounts(tmp_path).require("bob").disabled
    actions = [(e["action"], e["by"], e.get("name")) for e in trail_actions(tmp_path)[-3:]]
    assert actions == [
        ("account role changed", "root", "bob"),
        ("account two-factor reset", "root", "bob"),
        ("account disabled", "root", "bob"),
    ]
    assert password_step(TestClient(app), "bob").status_code == 401


def test_an_admin_cannot_lock_themself_out(app, tmp_path: Path):
    admin = signed_in(app, tmp_path, "admin", "root")
    for action, data in (("role", {"role": "viewer"}), ("disable", {}), ("reset-2fa", {})):
        response = admin.post(f"/admin/users/root/{action}", data={**data, "csrf_token": csrf(admin)})
        assert response.status_code == 400
    account = Accounts(tmp_path).require("root")
    assert account.role == "admin" and not account.disabled and account.enrolled


# the audit trail


def test_the_audit_page_lists_the_newest_entries_first_and_says_the_chain_is_intact(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "viewer", "alice")
    for n in range(60):
        trail.append(tmp_path, signing_key(), f"action {n}", "test")
    first = client.get("/audit")
    assert "Intact" in first.text and first.text.index("action 59") < first.text.index("action 58")
    assert "action 5<" not in first.text
    second = client.get("/audit?page=2")
    assert "action 5<" in second.text and "signed in" in second.text


def test_the_audit_page_says_when_the_chain_was_tampered_with(app, tmp_path: Path):
    client = signed_in(app, tmp_path, "viewer", "alice")
    log = tmp_path / "audit" / "audit.jsonl"
    log.write_text(log.read_text().replace('"signed in"', '"nothing happened"'))
    assert "Tampered" in client.get("/audit").text


def test_the_audit_page_checks_the_chain_again_only_when_the_trail_changed_and_sees_any_edit(app, tmp_path: Path, monkeypatch):
    client = signed_in(app, tmp_path, "viewer", "alice")
    checks = []
    monkeypatch.setattr(trail, "verify_folder", lambda *a: checks.append(a) or verify_folder(*a))
    assert "Intact" in client.get("/audit").text and "Intact" in client.get("/audit?page=2").text
    assert len(checks) == 1  # the second page: the same bytes, the same finding
    log = tmp_path / "audit" / "audit.jsonl"
    before = log.stat()
    log.write_text(log.read_text().replace('"signed in"', '"signed up"'))  # as long as before, its times put back
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert log.stat().st_size == before.st_size
    assert "Tampered" in client.get("/audit").text and len(checks) == 2


def _append_many(out: str, worker: int, count: int) -> None:
    for n in range(count):
        trail.append(Path(out), signing_key(), "concurrent", f"worker {worker}", n=n)


def test_two_processes_appending_at_once_keep_one_chain(tmp_path: Path):
    """The server and the CLI each hold an AuditLog: without the lock both would chain after the same head."""
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_many, args=(str(tmp_path), w, 40)) for w in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [w.exitcode for w in workers] == [0, 0, 0]
    result = verify_folder(tmp_path / "audit", signing_key())
    assert result.intact and result.entries == 120, result.problems


def test_a_change_the_trail_cannot_record_is_refused_and_not_made(app, tmp_path: Path, monkeypatch):
    admin = signed_in(app, tmp_path, "admin", "root")
    signed_in(app, tmp_path, "operator", "bob")
    before = trail_actions(tmp_path)
    monkeypatch.setenv("PASSHAT_AUDIT_KEY", "b" * 64)
    app.state.audit_key = signing_key()  # another key: the trail sealed with the first cannot go on
    token = csrf(admin)
    attempts = {
        "/admin/users": {"name": "carol", "role": "viewer", "password": PASSWORD},
        "/admin/users/bob/role": {"role": "admin"},
        "/admin/users/bob/disable": {},
        "/admin/users/bob/reset-2fa": {},
        "/account/password": {"current_password": PASSWORD, "new_password": "x" * 20, "repeat_password": "x" * 20},
    }
    for path, data in attempts.items():
        response = admin.post(path, data={**data, "csrf_token": token})
        assert response.status_code == 400 and "cannot be continued" in " ".join(response.text.split()), path
    accounts = Accounts(tmp_path)
    bob = accounts.require("bob")
    assert accounts.get("carol") is None and (bob.role, bob.disabled, bob.enrolled) == ("operator", False, True)
    assert accounts.check_password("root", PASSWORD) is not None
    assert trail_actions(tmp_path) == before


def test_slash_users_leads_an_admin_to_the_accounts_page_and_a_viewer_nowhere(app, tmp_path: Path):
    admin = signed_in(app, tmp_path, "admin", "alice")
    moved = admin.get("/users", follow_redirects=False)
    assert moved.status_code == 308 and moved.headers["location"] == "/admin/users"
    assert admin.get("/users").status_code == 200
    viewer = signed_in(app, tmp_path, "viewer", "vera")
    assert viewer.get("/users", follow_redirects=False).status_code == 403
