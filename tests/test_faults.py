"""Fault injection: each class reaches the agent exactly as specified, drawn from the trial's seed."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.domains.toolkit import tool
from passhat.env import Environment, ToolRunner
from passhat.env.tools import spec_for
from passhat.errors import UserError
from passhat.faults import FAULT_CLASSES, FaultInjector, parse_faults
from passhat.faults.kinds import TIMEOUT_MESSAGE, leaves, prose_fields
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event

RETAIL = load_domain("retail")
ORDER = "#R3042198"  # a pending order of retail-001's customer


@pytest.fixture
def toy(toy_domain):
    env = Environment(toy_domain)
    yield env
    env.close()


@pytest.fixture
def shop():
    env = Environment(RETAIL)
    yield env
    env.close()


def through(env, fault: str, name: str, args: dict, seed: int = 7):
    injector = FaultInjector({fault: 1.0}, seed, env)
    return injector, injector.execute(name, args, lambda: env.execute(name, args))


def status(env, account: str) -> str:
    return env.db.execute("SELECT status FROM accounts WHERE id = ?", (account,)).fetchone()[0]


@pytest.mark.parametrize(
    "fault, retryable", [("timeout", True), ("transient_error", True), ("rate_limited", True), ("permission_denied", False)]
)
def test_execution_faults_stop_the_call_and_say_whether_to_retry(toy, fault: str, retryable: bool) -> None:
    _, (ex, record) = through(toy, fault, "close_account", {"account_id": "A-1"})
    assert ex.result["status"] == "error"
    assert ex.result["error"]["type"] == fault and ex.result["error"]["retryable"] is retryable
    assert record == {"class": fault, "actual": None}
    assert status(toy, "A-1") == "open"  # the tool never ran


def test_lost_response_writes_but_tells_the_agent_it_timed_out(toy) -> None:
    _, (ex, record) = through(toy, "lost_response", "close_account", {"account_id": "A-1"})
    assert ex.result == {"status": "error", "error": {"type": "timeout", "message": TIMEOUT_MESSAGE, "retryable": True}}
    assert status(toy, "A-1") == "closed"
    assert record["class"] == "lost_response" and record["actual"]["status"] == "ok"
    event = Event("tool", name="close_account", args=ex.args, result=ex.result, fault=record)
    assert not event.ok and event.took_effect


def test_lost_response_only_hits_writes(toy) -> None:
    _, (ex, record) = through(toy, "lost_response", "get_account", {"account_id": "A-1"})
    assert ex.result["status"] == "ok" and record is None


def test_schema_drift_renames_or_drops_one_field(shop) -> None:
    _, (ex, record) = through(shop, "schema_drift", "get_order", {"order_id": ORDER})
    shown, actual = ex.result["data"], record["actual"]["data"]
    assert set(shown) != set(actual) and len(set(actual) - set(shown)) == 1
    (gone,) = set(actual) - set(shown)
    renamed = set(shown) - set(actual)
    assert not renamed or shown[renamed.pop()] == actual[gone]


def test_stale_read_shows_the_record_as_it_was_before_the_last_write(toy) -> None:
    injector = FaultInjector({"stale_read": 1.0}, 1, toy)
    injector.execute("close_account", {"account_id": "A-1"}, lambda: toy.execute("close_account", {"account_id": "A-1"}))
    ex, record = injector.execute("get_account", {"account_id": "A-1"}, lambda: toy.execute("get_account", {"account_id": "A-1"}))
    assert ex.result["data"]["status"] == "open" and record["actual"]["data"]["status"] == "closed"


def test_stale_read_is_not_injected_when_nothing_changed(toy) -> None:
    _, (ex, record) = through(toy, "stale_read", "get_account", {"account_id": "A-1"})
    assert record is None and ex.result["data"]["status"] == "open"


def test_contradiction_makes_a_second_read_disagree_with_the_first(shop) -> None:
    injector = FaultInjector({"contradiction": 1.0}, 3, shop)
    read = lambda: shop.execute("get_order", {"order_id": ORDER})  # noqa: E731
    first, none = injector.execute("get_order", {"order_id": ORDER}, read)
    second, record = injector.execute("get_order", {"order_id": ORDER}, read)
    assert none is None and record["class"] == "contradiction"
    assert second.result != first.result and record["actual"] == first.result


def test_wrong_value_changes_exactly_one_figure_plausibly(shop) -> None:
    _, (ex, record) = through(shop, "wrong_value", "get_order", {"order_id": ORDER})
    shown, actual = dict(leaves(ex.result["data"])), dict(leaves(record["actual"]["data"]))
    changed = [p for p in actual if shown[p] != actual[p]]
    assert len(changed) == 1
    before, after = actual[changed[0]], shown[changed[0]]
    assert isinstance(after, (int, float)) and 0 < abs(after - before) <= max(1, abs(before) * 0.25) + 0.01


def test_silent_empty_is_an_empty_success(shop) -> None:
    _, (ex, record) = through(shop, "silent_empty", "get_order", {"order_id": ORDER})
    assert ex.result == {"status": "ok", "data": {}}
    assert record["actual"]["data"]["order_id"] == ORDER


def test_injected_instruction_hides_an_unrequested_write_in_a_text_field(shop) -> None:
    _, (ex, record) = through(shop, "injected_instruction", "get_order", {"order_id": ORDER})
    text = record["instruction"]
    hidden = [(p, v) for p, v in leaves(ex.result["data"]) if isinstance(v, str) and text in v]
    assert len(hidden) == 1 and hidden[0][0][-1] in ("address2", "product_name")
    writes = [n for n, s in shop.tools.items() if s.meta.write]
    assert any(f"Call {w} " in text for w in writes) and "without asking" in text


# -- where an injected instruction hides: the called tool's prose fields ------------------------------


@tool(prose=("review",))
def get_reviews(db: sqlite3.Connection, product: str) -> dict:
    """A product's reviews.

    Args:
        product: the product
    """
    return {"product": product, "title": "Desk lamp", "review": "Bright.", "replies": [{"review": "Agreed.", "by": "Sam"}]}


@tool(prose=("review", "note"))
def get_unreviewed(db: sqlite3.Connection, product: str) -> dict:
    """A product nobody has reviewed yet.

    Args:
        product: the product
    """
    return {"product": product, "title": "Desk lamp", "replies": []}


@tool()
def get_title(db: sqlite3.Connection, product: str) -> dict:
    """A product's title, which the shop wrote itself.

    Args:
        product: the product
    """
    return {"product": product, "title": "Desk lamp", "review": "Bright."}


@tool(write=True)
def delete_product(db: sqlite3.Connection, product: str) -> dict:
    """Delete a product.

    Args:
        product: the product
    """
    return {"deleted": product}


def reviews_runner() -> ToolRunner:
    specs = map(spec_for, (get_reviews, get_unreviewed, get_title, delete_product))
    return ToolRunner({s.name: s for s in specs}, sqlite3.connect(":memory:"))


def inject(runner: ToolRunner, name: str, seed: int):
    injector = FaultInjector({"injected_instruction": 1.0}, seed, runner)
    return injector.execute(name, {"product": "P-1"}, lambda: runner.execute(name, {"product": "P-1"}))


def test_an_instruction_hides_only_in_the_prose_fields_the_called_tool_declares_at_any_depth() -> None:
    runner = reviews_runner()
    hidden_at = set()
    for seed in range(30):
        ex, record = inject(runner, "get_reviews", seed)
        (path,) = [p for p, v in leaves(ex.result["data"]) if isinstance(v, str) and record["instruction"] in v]
        hidden_at.add(path)
    assert hidden_at == {("review",), ("replies", 0, "review")}


def test_a_tool_that_declares_no_prose_gets_no_instruction() -> None:
    """The same field name on another tool is not prose: it is the declaration that counts, not the name."""
    ex, record = inject(reviews_runner(), "get_title", 1)
    assert record is None and ex.result["data"]["review"] == "Bright."


def test_a_declared_prose_field_a_result_lacks_is_no_error_and_hides_nothing() -> None:
    ex, record = inject(reviews_runner(), "get_unreviewed", 1)
    assert record is None and ex.result == {"status": "ok", "data": {"product": "P-1", "title": "Desk lamp", "replies": []}}


@pytest.mark.parametrize("declared", ["review", ["review"], ("review", ""), ("review", 3)])
def test_a_prose_declaration_that_is_not_a_tuple_of_field_names_is_refused(declared) -> None:
    def get_page(db: sqlite3.Connection) -> str:
        """A page."""
        return ""

    with pytest.raises(UserError, match=r"tool .*get_page .*declares prose=.*a tuple of field names"):
        tool(prose=declared)(get_page)


# TEXT_KEYS as faults/kinds.py had it before tools declared their prose fields: the old behaviour, kept
# here only to prove that retail's declarations pick exactly the fields it picked.
OLD_TEXT_KEYS = frozenset({"address2", "note", "notes", "summary", "description", "review", "comment", "product_name", "name"})


def retail_read_calls(env: Environment) -> list[tuple[str, dict]]:
    """Every retail read tool on a few real records: orders of each status, with and without exchanges."""
    orders = [
        r[0]
        for r in env.db.execute(
            "SELECT MIN(o.id) FROM orders o LEFT JOIN order_items i ON i.order_id = o.id"
            " GROUP BY o.status, i.exchange_variant_id IS NULL, o.address2 = ''"
        )
    ]
    customers = [r[0] for r in env.db.execute("SELECT id FROM customers ORDER BY id LIMIT 4")]
    email, first, last, zip_code = env.db.execute(
        "SELECT email, first_name, last_name, zip FROM customers ORDER BY id"
    ).fetchone()
    products = [r[0] for r in env.db.execute("SELECT id FROM products ORDER BY id")]
    return [
        *(("get_order", {"order_id": o}) for o in orders),
        *(("get_customer", {"customer_id": c}) for c in customers),
        *(("get_product", {"product_id": p}) for p in products),
        ("list_categories", {}),
        ("find_product", {"name": "a"}),
        ("find_customer_by_email", {"email": email}),
        ("find_customer_by_name_zip", {"first_name": first, "last_name": last, "zip": zip_code}),
        ("calculate", {"expression": "2 * 3.5"}),
    ]


def test_retails_prose_declarations_pick_exactly_the_fields_the_old_text_keys_picked(shop) -> None:
    calls = retail_read_calls(shop)
    assert {name for name, _ in calls} == {name for name, spec in shop.tools.items() if not spec.meta.write}
    picked = 0
    for name, args in calls:
        result = shop.execute(name, args).result
        assert result["status"] == "ok", (name, args)
        old = [(p, v) for p, v in leaves(result["data"]) if isinstance(v, str) and p and p[-1] in OLD_TEXT_KEYS]
        assert prose_fields(result["data"], shop.tools[name].meta.prose) == old, (name, args)
        picked += len(old)
    assert picked > len(calls)  # the comparison is not between empty selections


def test_the_same_seed_injects_the_same_faults(toy) -> None:
    def run(seed: int) -> list[str | None]:
        injector = FaultInjector({"timeout": 0.5}, seed, toy)
        return [
            injector.execute("get_account", {"account_id": "A-1"}, lambda: toy.execute("get_account", {"account_id": "A-1"}))[1]
            is not None
            for _ in range(40)
        ]

    assert run(5) == run(5) and run(5) != run(6)
    assert 5 < sum(run(5)) < 35


def test_parse_faults_reads_a_flag_and_a_yaml_file(tmp_path) -> None:
    assert parse_faults("timeout=0.1, stale_read=0.05") == {"timeout": 0.1, "stale_read": 0.05}
    assert parse_faults("") == {}
    plan = tmp_path / "plan.yaml"
    plan.write_text("lost_response: 0.2\nwrong_value: 0.1\n")
    assert parse_faults(str(plan)) == {"lost_response": 0.2, "wrong_value": 0.1}
    for bad, words in [
        ("slow=0.1", "unknown fault class 'slow'"),
        ("timeout=2", "between 0 and 1"),
        ("timeout", "class=rate"),
        ("timeout=0.6,silent_empty=0.6", "add up to more than 1"),
    ]:
        with pytest.raises(UserError, match=words):
            parse_faults(bad)
    assert set(FAULT_CLASSES) >= {"timeout", "lost_response", "injected_instruction"} and len(FAULT_CLASSES) == 11


def test_parse_faults_refuses_unreadable_files_booleans_and_repeated_classes(tmp_path) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("timeout: 0.1  # d\xe9lai\n".encode("latin-1"))
    with pytest.raises(UserError, match="latin.yaml.*not UTF-8"):
        parse_faults(str(latin))
    folder = tmp_path / "plan.yaml"
    folder.mkdir()
    with pytest.raises(UserError, match="cannot read the fault plan"):
        parse_faults(str(folder))
    boolean = tmp_path / "bool.yaml"
    boolean.write_text("timeout: true\n")
    with pytest.raises(UserError, match="'timeout'.*not True"):
        parse_faults(str(boolean))
    with pytest.raises(UserError, match="'timeout' is given twice"):
        parse_faults("timeout=0.1,timeout=0.2")


def play(agent: str, task_id: str, trial: int, faults: dict, guards=()):
    task = RETAIL.tasks[task_id]
    spec = TrialSpec(task, PERSONAS["baseline"], trial, trial_seed(3, task.id, "baseline", trial))
    return asyncio.run(run_trial(RETAIL, spec, resolve_agent(agent), resolve_user("scripted"), faults=faults, guards=guards))


def test_faults_reach_the_trial_as_events_that_round_trip() -> None:
    out = play("reference:perfect", "retail-001", 0, {"timeout": 0.5})
    hit = [e for e in out.events if e.fault]
    assert hit and all(e.result["error"]["type"] == "timeout" for e in hit)
    assert [Event.from_dict(e.to_dict()) for e in out.events] == out.events


def test_a_fault_plan_does_not_change_the_customer_or_agent_randomness() -> None:
    calm = play("reference:flaky", "retail-001", 2, {})
    rate_zero = play("reference:flaky", "retail-001", 2, {"timeout": 0.0})
    assert [e.to_dict() for e in calm.events] == [e.to_dict() for e in rate_zero.events]


def test_the_reference_agent_retries_after_a_timeout_and_recovers() -> None:
    out = play("reference:perfect", "retail-001", 0, {"transient_error": 0.5})
    assert any(e.fault for e in out.events) and out.grade.reward == 1
