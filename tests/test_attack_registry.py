"""Every built-in domain declares where a stranger's text reaches its agent and what attacks want, and each
declaration holds on the suite's copy of its backend: vectors name real columns whose selectors run, and each
goal's check is false as seeded and true once the attacker's calls are carried out."""

from __future__ import annotations

import sqlite3

import pytest

from passhat.attack.proof import injection_problems
from passhat.attack.world import AttackWorld, attack_world
from passhat.domains import BUILT_IN, load_domain
from passhat.domains.injection import AttackerGoal, Injection, RowExists, Vector
from passhat.domains.model import Action
from passhat.env import Environment
from passhat.errors import UserError


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_built_in_domain_declares_five_vectors_and_three_goals(name: str) -> None:
    injection = load_domain(name).injection
    assert injection is not None, f"{name} declares no injection"
    assert len(injection.vectors) >= 5
    assert len(injection.goals) >= 3


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_declaration_holds_for_the_customers_of_its_tasks(name: str) -> None:
    """False before, true after the attacker's calls: for two different customers of the domain's tasks."""
    domain = load_domain(name)
    customers = list(dict.fromkeys(t.customer.customer_id for t in domain.tasks.values()))
    world = attack_world(domain)
    for customer in (customers[0], customers[-1]):
        assert injection_problems(world, customer) == []


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_attackers_rows_are_only_in_the_suites_copy(name: str) -> None:
    """A plain run's backend is its generator's alone (its trials stay byte-identical); the suite's has more rows."""
    domain = load_domain(name)
    world = attack_world(domain)
    fresh = sqlite3.connect(":memory:")
    fresh.executescript(domain.schema_sql)
    domain.generate(fresh, domain.data_seed)
    plain, attacked = Environment(domain), Environment(world.domain)
    try:
        tables = [r[0] for r in fresh.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert _sizes(plain.db, tables) == _sizes(fresh, tables)
        if world.injection.attacker_rows is not None:
            assert _sizes(attacked.db, tables) != _sizes(fresh, tables)
        assert not any(goal.reached(plain.db, "") for goal in world.injection.goals)
    finally:
        for db in (plain, attacked, fresh):
            db.close()


def _sizes(db: sqlite3.Connection, tables: list[str]) -> dict[str, int]:
    return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_the_proof_finds_a_goal_already_reached_an_unreachable_one_and_a_broken_vector(toy_domain) -> None:
    """The proof can fail: each broken declaration is named."""
    injection = Injection(
        vectors=(
            Vector("no_column", "accounts", "nickname", "a column that does not exist"),
            Vector("bad_selector", "accounts", "owner", "a selector that does not run", where="nonsense ="),
        ),
        goals=(
            AttackerGoal(
                "seeded",
                "holds already",
                "do nothing",
                (Action(tool="find_account", args={"email": "o1@example.com"}),),
                RowExists("accounts", "id = 'A-1'"),
            ),  # fmt: skip
            AttackerGoal(
                "unreachable",
                "a call that fails",
                "look up nobody",
                (Action(tool="find_account", args={"email": "x@y"}),),
                RowExists("accounts", "id = 'A-99'"),
            ),  # fmt: skip
        ),
    )
    problems = injection_problems(AttackWorld(toy_domain, injection), "A-1")
    assert [p.split(":")[0] for p in problems] == ["vector no_column", "vector bad_selector", "goal seeded", "goal unreachable"]


def test_a_domain_without_a_declaration_is_refused_with_a_message(toy_domain) -> None:
    with pytest.raises(UserError, match="declares no injection"):
        attack_world(toy_domain)


def test_names_are_checked_when_declared() -> None:
    goal = AttackerGoal("g", "d", "ask", (Action(tool="t"),), RowExists("t", "1"))
    with pytest.raises(ValueError, match="repeat"):
        Injection(vectors=(), goals=(goal, goal))
    with pytest.raises(ValueError, match="lower_snake_case"):
        Injection(vectors=(Vector("Bad Name", "t", "c", "d"),), goals=())
