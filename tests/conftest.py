"""Shared fixtures: a tiny domain built in code, so engine tests do not depend on the retail data.

hypothesis's regex strategies are imported before the first test: imported lazily in the middle of a
run, pytest's assertion rewriting parses them while finalizers of earlier tests' event loops may run,
which CPython 3.11's AST conversion can fail on ("AST constructor recursion depth mismatch")."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from passhat.dialogue.facts import Fact
from passhat.domains.kit import ConversationKit, Identification, cue
from passhat.domains.model import Action, Call, Customer, Domain, FactSource, Rule
from passhat.domains.toolkit import NotFound, ToolFailure, tool

SCHEMA = """
CREATE TABLE accounts (id TEXT PRIMARY KEY, owner TEXT NOT NULL, email TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE notes (account_id TEXT NOT NULL, n INTEGER NOT NULL, body TEXT, PRIMARY KEY (account_id, n));
"""


@pytest.fixture(scope="session", autouse=True)
def _regex_strategies_imported() -> None:
    import hypothesis.strategies._internal.regex  # noqa: F401


@pytest.fixture(scope="session", autouse=True)
def _audit_key_outside_the_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Runs with the audit guard make the user's audit key on first use: in a test folder, not in ~/.config."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    patch.delenv("PASSHAT_AUDIT_KEY", raising=False)
    yield
    patch.undo()


def _generate(db: sqlite3.Connection, seed: int) -> None:
    db.executemany(
        "INSERT INTO accounts VALUES (?, ?, ?, ?)",
        [(f"A-{i}", f"owner{i}", f"o{i}@example.com", "open" if i % 2 else "closed") for i in range(1, 11)],
    )


@tool(identifies=True)
def find_account(db: sqlite3.Connection, email: str) -> str:
    """Find an account by its owner's email.

    Args:
        email: the owner's email address
    """
    row = db.execute("SELECT id FROM accounts WHERE email = ?", (email,)).fetchone()
    if row is None:
        raise NotFound("account", email)
    return row[0]


@tool()
def get_account(db: sqlite3.Connection, account_id: str) -> dict:
    """Get an account.

    Args:
        account_id: the account id, such as A-1
    """
    row = db.execute("SELECT id, owner, status FROM accounts WHERE id = ?", (account_id,)).fetchone()
    if row is None:
        raise NotFound("account", account_id)
    return dict(zip(("id", "owner", "status"), tuple(row), strict=False))


@tool(write=True, target="account_id", confirm_words=("close",))
def close_account(db: sqlite3.Connection, account_id: str, note: str = "") -> dict:
    """Close an account.

    Args:
        account_id: the account to close
        note: why it is closed
    """
    if db.execute("UPDATE accounts SET status = 'closed' WHERE id = ?", (account_id,)).rowcount == 0:
        raise ToolFailure("unknown_account", f"no account {account_id}")
    db.execute("INSERT INTO notes VALUES (?, 1, ?)", (account_id, note))
    return {"account_id": account_id, "status": "closed"}


def _open_only(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    row = db.execute("SELECT status FROM accounts WHERE id = ?", (call.args["account_id"],)).fetchone()
    return "the account is not open" if row and row[0] != "open" else None


def _account_status(db: sqlite3.Connection, account_id: str) -> Fact:
    row = db.execute("SELECT status FROM accounts WHERE id = ?", (account_id,)).fetchone()
    if row is None:
        raise LookupError(f"no account {account_id}")
    return Fact("status", row[0], rivals=tuple({"open", "closed"} - {row[0]}), about=(account_id,))


class Holder(Customer):
    """The toy domain's customer: an account holder who identifies by email."""

    email: str


def _email(customer: Customer) -> str:
    assert isinstance(customer, Holder)
    return customer.email


TOY_KIT = ConversationKit(
    slots=("identity", "account"),
    cues={"identity": cue("e-?mail"), "account": cue("which account")},
    phrasings={"email": {"plain": ("My email is {email}.",)}, "account": {"plain": ("It's account {account}.",)}},
    slips=lambda customer: [None],
    identify=lambda customer, slip, voice: Identification(voice.say("email", email=_email(customer))),
    answer=lambda slot, goal, voice: voice.say("account", account=goal.actions[0].args["account_id"]) if goal.actions else "",
    refind=lambda text: None,
    knows=lambda goal: [str(a.args.get("account_id")) for a in goal.actions + goal.forbidden if "account_id" in a.args],
    identity_text=lambda customer: f"My email is {_email(customer)}",
    ask_identity="What is the email on your account?",
    ask_identity_again="I still need the email on your account.",
    questions={"account": "Which account?"},
    missing=lambda slot, goal, said: False,
)


def make_toy_domain() -> Domain:
    return Domain(
        name="toy",
        description="accounts that can be closed",
        schema_sql=SCHEMA,
        generate=_generate,
        data_seed=1,
        tools=(find_account, get_account, close_account),
        policy="Close only open accounts.",
        rules=(Rule("close-open-only", "only open accounts can be closed", ("close_account",), _open_only),),
        load_tasks=list,
        id_pattern=r"A-\d+",
        proposal_keywords={"close": ("close",)},
        describe_action=lambda db, a: f"close account {a.args['account_id']}",
        lookups=lambda db, a: [Action(tool="get_account", args={"account_id": a.args["account_id"]})],
        authenticate=lambda customer, text: Action(tool="find_account", args={"email": _email(customer)}),
        kit=TOY_KIT,
        near_misses=lambda db, a: [],
        facts={"account_status": FactSource("account {account_id} is {value}", _account_status)},
    )


@pytest.fixture(scope="session")
def toy_domain() -> Domain:
    return make_toy_domain()


TOY_IDENTITY = Holder(customer_id="A-1", email="o1@example.com")
