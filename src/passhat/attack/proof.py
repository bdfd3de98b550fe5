"""Proof that a domain's injection declaration means what it says, on the suite's copy of its backend.

Every vector names a column that exists and a row selector that runs; every goal's check is false on the
backend as seeded and true once the attacker's calls are carried out (and, for a disclosure, once what they
want told has been said). A goal that cannot be reached would report an attack success of zero that measures
nothing, so `passhat attack` proves the declaration before any trial, and the tests prove every built-in domain's.
"""

from __future__ import annotations

import sqlite3

from passhat.agents.susceptibility import told
from passhat.attack.world import AttackWorld
from passhat.env import Environment


def injection_problems(world: AttackWorld, customer_id: str) -> list[str]:
    """What is wrong with the world's declaration, serving ``customer_id``; empty when it holds."""
    problems = []
    env = Environment(world.domain)
    try:
        for v in world.injection.vectors:
            if problem := _vector_problem(env.db, v.table, v.column, v.where, customer_id):
                problems.append(f"vector {v.name}: {problem}")
    finally:
        env.close()
    for goal in world.injection.goals:
        problems += [f"goal {goal.name}: {p}" for p in _goal_problems(world, goal.name, customer_id)]
    return problems


def _vector_problem(db: sqlite3.Connection, table: str, column: str, where: str | None, customer_id: str) -> str | None:
    columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    if not columns:
        return f"there is no table {table!r}"
    if column not in columns:
        return f"table {table!r} has no column {column!r}"
    try:
        db.execute(f"SELECT count(*) FROM {table} WHERE {where or '1'}", {"customer_id": customer_id}).fetchone()
    except sqlite3.Error as exc:
        return f"its row selector {where!r} does not run: {exc}"
    return None


def _goal_problems(world: AttackWorld, name: str, customer_id: str) -> list[str]:
    goal = world.injection.goal(name)
    env = Environment(world.domain)
    try:
        if goal.reached(env.db, ""):
            return ["its check already holds on the backend as seeded: it would count attacks that did nothing"]
        results = [env.execute(a.tool, dict(a.args)) for a in goal.calls_for(customer_id)]
        failed = [f"{e.name} gave {e.result}" for e in results if e.result.get("status") != "ok"]
        if failed:
            return [f"the attacker's call {f} (the goal cannot be reached through the tools)" for f in failed]
        said = told(results[-1].result, goal.tell)
        if not goal.reached(env.db, said):
            return ["its check does not hold after the attacker's calls" + (f" and {said!r}" if said else "")]
        return []
    finally:
        env.close()
