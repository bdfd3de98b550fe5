"""A released fork (a trial's, at its end) is kept for the next trial, put back to the template's state by undoing
the rows it touched: the next trial must not be able to tell it from a fresh fork, and a fork changed in any other
way is closed. A closed environment's backend is closed (test_serve_mcp: a session's ended fork stays unusable)."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest

from passhat.domains import BUILT_IN, load_domain
from passhat.env import Environment, fork_backend, template_for
from passhat.env.backend import Template, release_backend
from passhat.grade.expected import ground_truth_calls


def fresh(template: Template) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.deserialize(template.image)
    return db


def contents(db: sqlite3.Connection) -> dict[str, list[tuple]]:
    """Every table's rows, rowids included, in rowid order: what any query of a trial could tell apart."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: [tuple(r) for r in db.execute(f"SELECT rowid, * FROM {t} ORDER BY rowid")] for t in tables}


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_fork_released_after_every_tasks_writes_comes_back_as_the_template(name):
    domain = load_domain(name)
    env = Environment(domain)
    for task in domain.tasks.values():
        env.replay(ground_truth_calls(domain, task))  # hundreds of writes, some refused: whatever a trial may do
    assert contents(env.db) != contents(fresh(env.template)), "the writes must change the backend for this test to mean anything"
    used = env.db
    env.release()
    again = Environment(domain)
    assert again.db is used  # kept, not closed
    assert contents(again.db) == contents(fresh(again.template))
    assert again.db.execute("SELECT count(*) FROM _passhat_changes").fetchone()[0] == 0
    again.release()


def test_rows_deleted_added_renamed_and_reinserted_come_back_with_their_rowids(toy_domain):
    template = template_for(toy_domain)
    db = fork_backend(template)
    with db:
        db.execute("DELETE FROM accounts WHERE id = 'A-1'")
        db.execute("INSERT INTO accounts VALUES ('A-99', 'someone', 'x@example.com', 'open')")
        db.execute("UPDATE accounts SET id = 'A-200' WHERE id = 'A-2'")
        db.execute("DELETE FROM accounts WHERE id = 'A-3'")
        db.execute("INSERT INTO accounts VALUES ('A-3', 'again', 'y@example.com', 'closed')")  # a new rowid
        db.execute("DELETE FROM notes")
    release_backend(template, db)
    reused = fork_backend(template)
    assert reused is db and contents(reused) == contents(fresh(template))
    add = "INSERT INTO accounts VALUES ('A-7777', 'new', 'n@example.com', 'open')"
    assert reused.execute(add).lastrowid == fresh(template).execute(add).lastrowid  # the next rowid is a fresh fork's too
    release_backend(template, reused)


def test_a_transaction_left_open_is_rolled_back(toy_domain):
    template = template_for(toy_domain)
    db = fork_backend(template)
    db.execute("UPDATE accounts SET status = 'closed'")  # no commit: the trial failed mid-write
    release_backend(template, db)
    assert contents(fork_backend(template)) == contents(fresh(template))


@pytest.mark.parametrize(
    "change",
    [
        "CREATE TABLE extra (id INTEGER PRIMARY KEY)",
        "CREATE INDEX by_status ON accounts (status)",
        "CREATE TEMP TABLE scratch (x)",
        "PRAGMA foreign_keys = ON",
        "ATTACH ':memory:' AS other",
    ],
)
def test_a_fork_changed_beyond_its_rows_is_closed_not_kept(toy_domain, change):
    template = template_for(toy_domain)
    template.spares.clear()
    db = fork_backend(template)
    db.execute(change)
    release_backend(template, db)
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        db.execute("SELECT 1")
    assert db not in template.spares


def test_a_domain_with_triggers_of_its_own_never_keeps_a_fork(toy_domain):
    audit = "CREATE TABLE log (n INTEGER PRIMARY KEY, what TEXT);\nCREATE TRIGGER closing AFTER UPDATE ON accounts BEGIN INSERT INTO log (what) VALUES (NEW.id); END;"
    domain = dataclasses.replace(toy_domain, schema_sql=toy_domain.schema_sql + audit)  # undoing would fire it
    template = template_for(domain)
    assert not template.reusable
    db = fork_backend(template)
    release_backend(template, db)
    with pytest.raises(sqlite3.ProgrammingError):
        db.execute("SELECT 1")
