"""The environment: forks are private and cheap, diffs see exactly the rows that changed, and every
tool call ends in one of the three result shapes."""

from __future__ import annotations

import sqlite3

import pytest

from passhat.domains.toolkit import tool
from passhat.env import Environment, diff_backends, fork_backend, template_for, tool_registry
from passhat.env.backend import SettledRows
from passhat.env.tools import spec_for
from passhat.errors import UserError


def test_forks_are_independent(toy_domain):
    a, b = Environment(toy_domain), Environment(toy_domain)
    a.execute("close_account", {"account_id": "A-1"})
    status = lambda env: env.db.execute("SELECT status FROM accounts WHERE id='A-1'").fetchone()[0]  # noqa: E731
    assert (status(a), status(b)) == ("closed", "open")


def test_template_is_built_once_per_process(toy_domain):
    assert template_for(toy_domain) is template_for(toy_domain)


def test_diff_reports_only_rows_that_differ(toy_domain):
    actual, expected = Environment(toy_domain), Environment(toy_domain)
    expected.execute("close_account", {"account_id": "A-1"})
    actual.execute("close_account", {"account_id": "A-3"})
    diff = diff_backends(actual.db, expected.db, actual.template)
    changed = {(d.table, d.key) for d in diff}
    assert changed == {("accounts", '["A-1"]'), ("accounts", '["A-3"]'), ("notes", '["A-1",1]'), ("notes", '["A-3",1]')}
    assert diff_backends(expected.db, expected.db, expected.template) == []


def test_an_expected_backend_read_once_compares_as_the_backend_itself(toy_domain):
    expected = Environment(toy_domain)
    expected.execute("close_account", {"account_id": "A-1"})
    settled = SettledRows(expected.db, expected.template)
    for closed in ("A-1", "A-3"):  # the expected rows, then rows only the trial changed (read from the expected fork)
        actual = Environment(toy_domain)
        actual.execute("close_account", {"account_id": closed})
        assert diff_backends(actual.db, settled, actual.template) == diff_backends(actual.db, expected.db, actual.template)
    assert diff_backends(Environment(toy_domain).db, settled, expected.template)  # a trial that did nothing differs


def test_ignored_columns_are_not_compared(toy_domain):
    a, b = Environment(toy_domain), Environment(toy_domain)
    a.execute("close_account", {"account_id": "A-1", "note": "moving away"})
    b.execute("close_account", {"account_id": "A-1", "note": "other words"})
    assert diff_backends(a.db, b.db, a.template)
    assert diff_backends(a.db, b.db, a.template, {"notes": frozenset({"body"})}) == []


def test_a_change_undone_is_no_difference(toy_domain):
    a, b = Environment(toy_domain), Environment(toy_domain)
    with a.db:
        a.db.execute("UPDATE accounts SET status='open' WHERE id='A-2'")
        a.db.execute("UPDATE accounts SET status='closed' WHERE id='A-2'")
    assert diff_backends(a.db, b.db, a.template) == []


def test_three_result_shapes(toy_domain):
    env = Environment(toy_domain)
    assert env.execute("get_account", {"account_id": "A-1"}).result == {
        "status": "ok",
        "data": {"id": "A-1", "owner": "owner1", "status": "open"},
    }
    missing = env.execute("get_account", {"account_id": "A-99"}).result
    assert missing["status"] == "not_found" and missing["found"] is False
    failed = env.execute("close_account", {"account_id": "A-99"}).result
    assert failed["status"] == "error" and failed["error"]["type"] == "unknown_account"
    assert set(failed["error"]) == {"type", "message", "retryable"}


def test_a_failed_write_leaves_no_trace(toy_domain):
    env = Environment(toy_domain)
    env.execute("close_account", {"account_id": "A-99"})
    assert env.db.execute("SELECT count(*) FROM notes").fetchone()[0] == 0


def test_bad_arguments_are_error_results_not_crashes(toy_domain):
    env = Environment(toy_domain)
    for name, args in [
        ("get_account", {}),
        ("get_account", {"account_id": "A-1", "extra": 1}),
        ("get_account", {"account_id": ["A-1"]}),
        ("get_account", "not an object"),
        ("no_such_tool", {}),
    ]:
        result = env.execute(name, args).result
        assert result["status"] == "error", (name, args)
        assert result["error"]["type"] in {"invalid_arguments", "unknown_tool"}


def test_schemas_are_derived_from_signatures_and_docstrings(toy_domain):
    schema = tool_registry(toy_domain)["close_account"].schema
    assert schema["name"] == "close_account"
    assert schema["description"] == "Close an account."
    params = schema["parameters"]
    assert params["required"] == ["account_id"]
    assert params["properties"]["account_id"] == {"type": "string", "description": "the account to close"}
    assert "db" not in params["properties"]


def test_rules_are_checked_before_a_write_runs(toy_domain):
    env = Environment(toy_domain)
    closed = env.execute("close_account", {"account_id": "A-2"})  # A-2 is closed in the seed data
    assert [v.rule for v in closed.violations] == ["close-open-only"]
    assert env.execute("close_account", {"account_id": "A-1"}).violations == ()
    assert env.execute("get_account", {"account_id": "A-2"}).violations == ()


def test_fork_is_writable_copy_of_template(toy_domain):
    db = fork_backend(template_for(toy_domain))
    assert db.execute("SELECT count(*) FROM accounts").fetchone()[0] == 10
    db.execute("DELETE FROM accounts")
    assert fork_backend(template_for(toy_domain)).execute("SELECT count(*) FROM accounts").fetchone()[0] == 10


def test_an_args_entry_wrapped_over_lines_reaches_the_schema_whole():
    @tool(write=True, target="account")
    def refund(db: sqlite3.Connection, account: str, amount: float) -> dict:
        """Refund an amount to an account.

        Only to the account the payment came from.

        Args:
            account: the account id, as the customer's statement prints it
                (e.g. A-1), never an order id
            amount (float): dollars

        Returns:
            the refund made
        """
        return {}

    schema = spec_for(refund).schema
    assert schema["description"] == "Refund an amount to an account.\n\nOnly to the account the payment came from."
    properties = schema["parameters"]["properties"]
    assert (
        properties["account"]["description"]
        == "the account id, as the customer's statement prints it (e.g. A-1), never an order id"
    )
    assert properties["amount"]["description"] == "dollars" and set(properties) == {"account", "amount"}


def test_a_docstring_that_is_not_google_style_names_the_tool():
    @tool()
    def lookup(db: sqlite3.Connection, account: str) -> dict:
        """Look an account up.

        Args:
            account the account id, with no colon
        """
        return {}

    with pytest.raises(UserError, match="docstring of tool .*lookup.*Expected a colon"):
        spec_for(lookup)
