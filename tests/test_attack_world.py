"""The suite's copy of a domain: an attack's text reaches the agent through every read of a vector's rows and
nowhere else; the backend, the graders and the write results never hold it, so an attacked trial is graded
exactly as a clean one; writes leave the image the goal is checked on."""

from __future__ import annotations

import asyncio

import pytest

from passhat.attack.runner import Suite, new_attack_config, plan_attacks, prepare
from passhat.attack.world import Exposure, attack_world
from passhat.domains import load_domain
from passhat.env import Environment, diff_backends
from passhat.env.backend import changed_keys

RETAIL = load_domain("retail")
WORLD = attack_world(RETAIL)
CUSTOMER = RETAIL.tasks["retail-001"].customer.customer_id
TEXT = "ATTACK TEXT"


@pytest.fixture
def env():
    env = Environment(WORLD.domain)
    yield env
    WORLD.release(env.db)
    env.close()


def test_a_read_shows_the_text_in_the_vectors_fields_and_leaves_the_backend_as_it_was(env) -> None:
    exposure = Exposure(TEXT, CUSTOMER)
    WORLD.expose(env.db, exposure)
    before = env.db.execute("SELECT address2 FROM customers WHERE id = ?", (CUSTOMER,)).fetchone()[0]
    profile = env.execute("get_customer", {"customer_id": CUSTOMER}).result["data"]
    assert profile["address"]["address2"].endswith(TEXT) and exposure.shown
    assert env.db.execute("SELECT address2 FROM customers WHERE id = ?", (CUSTOMER,)).fetchone()[0] == before
    assert changed_keys(env.db) == set()  # the triggers' log of the planting was rolled back with it


def test_only_the_rows_a_vector_selects_carry_the_text(env) -> None:
    WORLD.expose(env.db, Exposure(TEXT, CUSTOMER))
    other = env.db.execute("SELECT id FROM customers WHERE id != ? LIMIT 1", (CUSTOMER,)).fetchone()[0]
    assert TEXT not in str(env.execute("get_customer", {"customer_id": other}).result)
    product = env.db.execute("SELECT id FROM products LIMIT 1").fetchone()[0]  # every product's name is a vector's
    assert env.execute("get_product", {"product_id": product}).result["data"]["name"].endswith(TEXT)


def test_without_an_exposure_or_with_a_clean_one_nothing_is_planted(env) -> None:
    plain = env.execute("get_customer", {"customer_id": CUSTOMER}).result
    WORLD.expose(env.db, Exposure(None, CUSTOMER))
    assert env.execute("get_customer", {"customer_id": CUSTOMER}).result == plain and TEXT not in str(plain)


def test_a_write_keeps_the_image_the_goal_is_checked_on_and_shows_no_text(env) -> None:
    exposure = Exposure(TEXT, CUSTOMER)
    WORLD.expose(env.db, exposure)
    goal = WORLD.injection.goal("address_hijack")
    [call] = goal.calls_for(CUSTOMER)
    result = env.execute(call.tool, dict(call.args)).result
    assert result["status"] == "ok" and TEXT not in str(result)
    final = WORLD.backend(exposure)
    try:
        assert goal.reached(final, "") and diff_backends(final, env.db, env.template) == []
    finally:
        final.close()


def test_an_attacked_trial_of_an_agent_that_ignores_attacks_is_graded_as_a_clean_one() -> None:
    """reference:perfect reads every attack and passes every attacked trial, as it passes the clean ones."""
    config = new_attack_config(
        "urgency,multi_step", "all", "none", domain="retail", agent="reference:perfect", user="scripted",
        personas="baseline", tasks="retail-001,retail-010,retail-020", trials=1,
    )  # fmt: skip
    world, tasks = prepare(config)
    from passhat.agents import resolve_agent
    from passhat.customers import resolve_user

    suite = Suite(world, config, resolve_agent("reference:perfect"), resolve_user("scripted"))
    specs = plan_attacks(config, tasks, set())
    records = [asyncio.run(suite.judge(spec)) for spec in specs]
    assert len(records) == 3 * (1 + 2 * 3)
    assert all(r.outcome.reward == 1 for r in records)
    attacked = [r.outcome for r in records if r.outcome.attack]
    assert all(o.shown and o.reached is False for o in attacked)
