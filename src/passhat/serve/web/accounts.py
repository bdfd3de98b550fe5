"""Operator accounts of the web app, in ``<out>/accounts.sqlite``: argon2id password hashes, TOTP secrets,
sessions and the sign-in throttle.

The file is shared by the server and `passhat accounts` running at the same time, so it is in WAL mode and every
operation opens its own short connection (with a busy timeout) and commits before it returns. Nothing secret is
stored in a form that signs anyone in: passwords as argon2id hashes, session tokens as their SHA-256. The TOTP
secrets are stored as they are (a verifier needs them); whoever can read the file can read them, which is why
the file is made readable by its owner only.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args

import pyotp
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from pyotp.utils import strings_equal

from passhat.errors import UserError

Role = Literal["viewer", "operator", "approver", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)  # each includes the ones before it
Stage = Literal["password", "signed_in"]  # a session after the password only, or after the second factor too

ACCOUNTS_FILE = "accounts.sqlite"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9._-]{0,31}")
# words the inbox reads as a person or as no one ("assign to me", "mine", "unassigned"): never an account's name
RESERVED_NAMES = frozenset({"me", "mine", "unassigned"})
MIN_PASSWORD, MAX_PASSWORD = 12, 1024  # the cap keeps one hash from being a denial of service
IDLE_SECONDS, ABSOLUTE_SECONDS = 30 * 60, 12 * 3600  # a signed-in session's two expiries
PASSWORD_STAGE_SECONDS = 5 * 60  # how long a password stays good for entering the code
THROTTLE_WINDOW = 15 * 60
MAX_NAME_FAILURES, MAX_ADDRESS_FAILURES = 5, 20
TOTP_ISSUER = "passhat"
CODE_PATTERN = re.compile(r"[0-9]{6}")

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    name TEXT PRIMARY KEY, role TEXT NOT NULL, password_hash TEXT NOT NULL, totp_secret TEXT NOT NULL,
    enrolled INTEGER NOT NULL DEFAULT 0, disabled INTEGER NOT NULL DEFAULT 0,
    last_totp_step INTEGER NOT NULL DEFAULT -1, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL REFERENCES accounts(name) ON DELETE CASCADE,
    stage TEXT NOT NULL, created REAL NOT NULL, last_seen REAL NOT NULL);
CREATE TABLE IF NOT EXISTS attempts (at REAL NOT NULL, name TEXT NOT NULL, address TEXT NOT NULL, ok INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_by_name ON attempts (name, at);
CREATE INDEX IF NOT EXISTS attempts_by_address ON attempts (address, at);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def role_includes(have: Role, need: Role) -> bool:
    """Whether an account of role ``have`` may do what needs ``need``."""
    return ROLES.index(have) >= ROLES.index(need)


def checked_role(role: str, flag: str = "ROLE") -> Role:
    if role not in ROLES:
        raise UserError(f"{role!r} is not a role ({flag}): use one of {', '.join(ROLES)} (each includes the ones before it).")
    return role  # type: ignore[return-value]


def checked_name(name: str, flag: str = "NAME") -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise UserError(
            f"{name[:64]!r} is not an account name ({flag}): start with a lower-case letter, then up to 31 lower-case "
            "letters, digits, '.', '_' or '-'."
        )
    if name in RESERVED_NAMES:
        raise UserError(
            f"{name!r} cannot be an account name ({flag}): the inbox reads it as a person or as no one; choose another."
        )
    return name


def checked_password(password: str, flag: str = "the password") -> str:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise UserError(f"{flag} must be {MIN_PASSWORD} to {MAX_PASSWORD} characters long; it is {len(password)}.")
    return password


def secret_bytes(text: str) -> bytes:
    """A password or token as bytes, whatever characters a form sent (a lone surrogate included)."""
    return text.encode("utf-8", "surrogatepass")


def attempt_key(text: str) -> str:
    """A name or address as the throttle counts it: whatever was typed, cut short, lone surrogates escaped."""
    return text[:64].encode("utf-8", "backslashreplace").decode("utf-8")


def token_id(token: str) -> str:
    """What a session is stored under: the SHA-256 of its token, so the file never holds a usable cookie."""
    return hashlib.sha256(secret_bytes(token)).hexdigest()


@dataclass(frozen=True)
class Account:
    name: str
    role: Role
    enrolled: bool
    disabled: bool
    created_at: str
    totp_secret: str = field(repr=False)

    @property
    def totp(self) -> pyotp.TOTP:
        return pyotp.TOTP(self.totp_secret)

    @property
    def enrolment_uri(self) -> str:
        """The otpauth:// URI an authenticator app reads from the QR code."""
        return self.totp.provisioning_uri(name=self.name, issuer_name=TOTP_ISSUER)


@dataclass(frozen=True)
class Session:
    account: Account
    stage: Stage
    id: str  # the stored id (the token's SHA-256): what the CSRF token is tied to


class Accounts:
    """The accounts file of a runs folder. ``clock`` gives the time in seconds (tests move it instead of sleeping)."""

    def __init__(self, out: Path, clock: Callable[[], float] = time.time):
        self.path = Path(out) / ACCOUNTS_FILE
        self.clock = clock
        self.hasher = PasswordHasher()  # argon2id with the library's current parameters
        self._create()

    @functools.cached_property
    def _dummy_hash(self) -> str:
        """What an unknown name's password is checked against, so that it costs the time a known one does."""
        return self.hasher.hash(secrets.token_hex(16))

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        with self._db() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10)
        try:
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: a crash may drop the last commits, never corrupt
            with db:
                yield db
        finally:
            db.close()

    # accounts

    def add(self, name: str, role: Role, password: str) -> Account:
        checked_name(name), checked_role(role), checked_password(password)
        created = datetime.fromtimestamp(self.clock(), UTC).isoformat(timespec="seconds")
        try:
            with self._db() as db:
                db.execute(
                    "INSERT INTO accounts (name, role, password_hash, totp_secret, created_at) VALUES (?, ?, ?, ?, ?)",
                    (name, role, self.hasher.hash(secret_bytes(password)), pyotp.random_base32(), created),
                )
        except sqlite3.IntegrityError:
            raise UserError(f"an account named {name!r} exists already; pick another name or remove it first.") from None
        return self.require(name)

    def get(self, name: str) -> Account | None:
        if not NAME_PATTERN.fullmatch(name):  # no account has such a name (and SQLite takes no lone surrogate)
            return None
        with self._db() as db:
            row = db.execute(
                "SELECT name, role, enrolled, disabled, created_at, totp_secret FROM accounts WHERE name = ?", (name,)
            ).fetchone()
        return None if row is None else Account(row[0], row[1], bool(row[2]), bool(row[3]), row[4], row[5])

    def require(self, name: str) -> Account:
        account = self.get(name)
        if account is None:
            raise UserError(f"there is no account named {name[:64]!r} in {self.path}; `passhat accounts list` shows them.")
        return account

    def all(self) -> list[Account]:
        with self._db() as db:
            names = [row[0] for row in db.execute("SELECT name FROM accounts ORDER BY name")]
        return [self.require(name) for name in names]

    def _update(self, name: str, sql: str, *args: object, end_sessions: bool = False) -> None:
        self.require(name)
        with self._db() as db:
            db.execute(f"UPDATE accounts SET {sql} WHERE name = ?", (*args, name))
            if end_sessions:
                db.execute("DELETE FROM sessions WHERE name = ?", (name,))

    def set_role(self, name: str, role: Role) -> None:
        """Takes effect on the account's next request: sessions read the role from here each time."""
        self._update(name, "role = ?", checked_role(role))

    def set_disabled(self, name: str, disabled: bool) -> None:
        """Disabling ends the account's sessions at once."""
        self._update(name, "disabled = ?", int(disabled), end_sessions=disabled)

    def set_password(self, name: str, password: str) -> None:
        """A new password ends every session of the account (a stolen one among them)."""
        self._update(name, "password_hash = ?", self.hasher.hash(secret_bytes(checked_password(password))), end_sessions=True)

    def reset_2fa(self, name: str) -> Account:
        """A new TOTP secret, to be enrolled at the next sign-in; the account's sessions end."""
        secret = pyotp.random_base32()
        self._update(name, "totp_secret = ?, enrolled = 0, last_totp_step = -1", secret, end_sessions=True)
        return self.require(name)

    def remove(self, name: str) -> None:
        self.require(name)
        with self._db() as db:
            db.execute("DELETE FROM accounts WHERE name = ?", (name,))

    # the two factors

    def check_password(self, name: str, password: str) -> Account | None:
        """The account when ``password`` is its password (and it is not disabled), else None; the hash is
        upgraded when the hasher's parameters changed. An unknown name costs the same time as a known one."""
        row = None
        if NAME_PATTERN.fullmatch(name):
            with self._db() as db:
                row = db.execute("SELECT password_hash FROM accounts WHERE name = ?", (name,)).fetchone()
        stored = row[0] if row else self._dummy_hash
        try:
            self.hasher.verify(stored, secret_bytes(password[:MAX_PASSWORD]))
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        if row is None:
            return None
        if self.hasher.check_needs_rehash(stored):
            self._update(name, "password_hash = ?", self.hasher.hash(secret_bytes(password)))
        account = self.require(name)
        return None if account.disabled else account

    def check_code(self, name: str, code: str) -> bool:
        """Whether ``code`` is the account's TOTP code now (or one step either side), and was not accepted before:
        each code signs in once, and no code older than the last accepted one is taken."""
        account = self.get(name)
        if account is None or not CODE_PATTERN.fullmatch(code):
            return False
        totp, now = account.totp, self.clock()
        step = next(
            (totp.timecode(now) + i for i in (-1, 0, 1) if strings_equal(code, totp.at(now, counter_offset=i))),
            None,
        )
        if step is None:
            return False
        with self._db() as db:  # the condition makes two requests racing with one code accept it once
            changed = db.execute(
                "UPDATE accounts SET last_totp_step = ? WHERE name = ? AND last_totp_step < ?", (step, name, step)
            ).rowcount
        return changed == 1

    def confirm_enrolment(self, name: str) -> None:
        self._update(name, "enrolled = 1")

    # sessions

    def start_session(self, name: str, stage: Stage) -> str:
        """A new session of ``name`` at ``stage``; returns its token (the cookie), which is stored only hashed."""
        token, now = secrets.token_urlsafe(32), self.clock()
        with self._db() as db:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", (token_id(token), name, stage, now, now))
        return token

    def session(self, token: str) -> Session | None:
        """The live session of ``token``, its idle time reset; None when unknown, expired, or its account is
        disabled or gone."""
        sid, now = token_id(token), self.clock()
        with self._db() as db:
            row = db.execute("SELECT name, stage, created, last_seen FROM sessions WHERE id = ?", (sid,)).fetchone()
            if row is None:
                return None
            name, stage, created, last_seen = row
            lifetime, idle = (
                (PASSWORD_STAGE_SECONDS, PASSWORD_STAGE_SECONDS) if stage == "password" else (ABSOLUTE_SECONDS, IDLE_SECONDS)
            )
            if now - created > lifetime or now - last_seen > idle:
                db.execute("DELETE FROM sessions WHERE id = ?", (sid,))
                return None
            db.execute("UPDATE sessions SET last_seen = ? WHERE id = ?", (now, sid))
        account = self.get(name)
        if account is None or account.disabled:
            return None
        return Session(account, stage, sid)

    def end_session(self, token: str) -> None:
        with self._db() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (token_id(token),))

    # throttle

    def reserve_attempt(self, name: str, address: str) -> int | None:
        """An attempt to sign in as ``name`` from ``address``, counted as a failure from now on (its id), or None
        when the throttle refuses it. The count and the reservation are one write transaction, taken before the
        slow check (argon2, in a worker thread): parallel requests cannot all pass a count that none has raised
        yet. A check that succeeds releases the attempt (``attempt_succeeded``)."""
        now = self.clock()
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")  # the write lock first: no other count runs until this commits
            if self._refused_until(db, name, address) is not None:
                return None
            db.execute("DELETE FROM attempts WHERE at < ?", (now - THROTTLE_WINDOW,))
            cursor = db.execute("INSERT INTO attempts VALUES (?, ?, ?, 0)", (now, attempt_key(name), attempt_key(address)))
            return cursor.lastrowid

    def attempt_succeeded(self, attempt: int) -> None:
        """The reserved attempt passed its check: it no longer counts as a failure."""
        with self._db() as db:
            db.execute("UPDATE attempts SET ok = 1 WHERE rowid = ?", (attempt,))

    def refused_until(self, name: str, address: str) -> float | None:
        """When sign-in attempts for ``name`` or from ``address`` are accepted again, or None when they are now:
        after MAX_NAME_FAILURES failures for a name, or MAX_ADDRESS_FAILURES from an address, within the window."""
        with self._db() as db:
            return self._refused_until(db, name, address)

    def _refused_until(self, db: sqlite3.Connection, name: str, address: str) -> float | None:
        since = self.clock() - THROTTLE_WINDOW
        ends = []
        keys = (("name", attempt_key(name), MAX_NAME_FAILURES), ("address", attempt_key(address), MAX_ADDRESS_FAILURES))
        for column, value, limit in keys:
            times = [
                row[0]
                for row in db.execute(
                    f"SELECT at FROM attempts WHERE {column} = ? AND ok = 0 AND at >= ? ORDER BY at DESC LIMIT ?",
                    (value, since, limit),
                )
            ]
            if len(times) >= limit:
                ends.append(times[-1] + THROTTLE_WINDOW)  # the oldest of the last `limit` failures leaves the window
        return max(ends) if ends else None

    # the server's own secret

    def server_secret(self) -> bytes:
        """A random key kept in the file (made on first use) that the CSRF tokens are derived under: forms stay
        valid across restarts, and no two runs folders share one."""
        with self._db() as db:
            db.execute("INSERT OR IGNORE INTO settings VALUES ('csrf_key', ?)", (secrets.token_hex(32),))
            return bytes.fromhex(db.execute("SELECT value FROM settings WHERE key = 'csrf_key'").fetchone()[0])
