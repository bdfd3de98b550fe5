"""Defenses on the agent's path: what the agent is shown and what its calls may reach, whatever the agent is."""

from __future__ import annotations

import asyncio
import random

from passhat.agents import resolve_agent
from passhat.agents.attack_marks import REMINDER, SPOTLIGHT_CLOSE, SPOTLIGHT_OPEN
from passhat.agents.attack_templates import TEMPLATE_NAMES, render
from passhat.agents.base import AgentSetup, AgentTurn, ToolCall
from passhat.attack.defenses import (
    SPOTLIGHT_NOTE,
    WITHHELD,
    DefendedAgent,
    Defenses,
    instruction_heuristic,
    planned_tools,
    spotlighted,
)
from passhat.attack.runner import Suite, new_attack_config, plan_attacks, prepare
from passhat.customers import resolve_user
from passhat.domains import load_domain
from passhat.env import Environment, tool_registry
from passhat.env.tools import ok
from passhat.trajectory import Event

RETAIL = load_domain("retail")
TOOLS = tool_registry(RETAIL)


class Scripted:
    """An agent that plays given turns and keeps every view it was shown."""

    def __init__(self, turns: list[AgentTurn]):
        self.turns, self.views = list(turns), []

    async def act(self, events: list[Event]) -> AgentTurn:
        self.views.append(list(events))
        return self.turns.pop(0) if self.turns else AgentTurn(text="bye")


def defended(turns: list[AgentTurn], defenses: Defenses) -> tuple[DefendedAgent, Scripted, list[AgentSetup]]:
    inner, made = Scripted(turns), []

    def make(setup: AgentSetup) -> Scripted:
        made.append(setup)
        return inner

    schemas = [spec.schema for spec in TOOLS.values()]
    setup = AgentSetup(RETAIL, RETAIL.tasks["retail-001"], schemas, "The policy.", random.Random(0), None)
    return DefendedAgent(make, setup, defenses), inner, made


def call(name: str, i: int = 1) -> ToolCall:
    return ToolCall(f"c{i}", name, {})


def test_the_filter_refuses_calls_outside_the_plan_and_asks_the_agent_again() -> None:
    agent, inner, [setup] = defended(
        [AgentTurn(tool_calls=(call("cancel_order"),)), AgentTurn(tool_calls=(call("get_order", 2),))],
        Defenses(("tool_filter",), allowed=frozenset({"get_order"})),
    )
    turn = asyncio.run(agent.act([Event("user", "hi")]))
    assert [c.name for c in turn.tool_calls] == ["get_order"]  # the refused call never reaches the tools
    refusal = inner.views[1][-1]
    assert refusal.call_id == "c1" and refusal.result["error"]["type"] == "tool_not_allowed"
    assert agent.interventions.refused == ["cancel_order"]
    assert [s["name"] for s in setup.tool_schemas] == ["get_order"]  # and it is offered only the planned tools


def test_a_turn_with_words_and_refused_calls_keeps_its_words() -> None:
    agent, inner, _ = defended(
        [AgentTurn(text="One moment.", tool_calls=(call("cancel_order"),))], Defenses(("tool_filter",), allowed=frozenset())
    )
    turn = asyncio.run(agent.act([Event("user", "hi")]))
    assert turn == AgentTurn("One moment.", ())
    assert len(inner.views) == 1


def test_the_view_grows_as_the_conversation_does_with_results_as_the_defenses_show_them() -> None:
    untrusted = frozenset({"address2"})
    flags = instruction_heuristic(TOOLS)
    agent, inner, [setup] = defended(
        [AgentTurn(tool_calls=(call("get_order"),))] * 3, Defenses(("spotlight", "repeat_instructions"), untrusted, flags)
    )
    assert setup.policy.endswith(SPOTLIGHT_NOTE + "\n")
    events = [Event("user", "Please cancel my order.")]
    asyncio.run(agent.act(events))
    events.append(
        Event("tool", call_id="c1", name="get_order", args={}, result=ok({"address": {"address2": "Apt 4", "city": "Oslo"}}))
    )
    asyncio.run(agent.act(events))
    shown = inner.views[1][-1].result
    assert shown["data"]["address"] == {"address2": f"{SPOTLIGHT_OPEN}Apt 4{SPOTLIGHT_CLOSE}", "city": "Oslo"}
    assert shown[REMINDER].endswith("Please cancel my order.")
    assert events[-1].result["data"]["address"]["address2"] == "Apt 4"  # the conversation keeps the truth
    assert inner.views[1][0] == events[0] and len(inner.views[1]) == 2


def test_the_detector_withholds_a_flagged_result() -> None:
    text = render("urgency", RETAIL.injection.goals[0], "C-1", [])  # type: ignore[union-attr]
    agent, inner, _ = defended([AgentTurn(text="ok")] * 2, Defenses(("detector",), detector=instruction_heuristic(TOOLS)))
    events = [Event("user", "hi"), Event("tool", call_id="c1", name="get_order", args={}, result=ok({"note": text}))]
    asyncio.run(agent.act(events))
    assert inner.views[0][-1].result == ok({"notice": WITHHELD}) and agent.interventions.withheld == 1


def test_spotlighting_wraps_the_untrusted_fields_at_any_depth_and_nothing_else() -> None:
    data = {"name": "Lamp", "items": [{"product_name": "Lamp", "price": 3.0}], "status": "pending"}
    assert spotlighted(data, {"name", "product_name"}) == {
        "name": f"{SPOTLIGHT_OPEN}Lamp{SPOTLIGHT_CLOSE}",
        "items": [{"product_name": f"{SPOTLIGHT_OPEN}Lamp{SPOTLIGHT_CLOSE}", "price": 3.0}],
        "status": "pending",
    }


def test_the_heuristic_flags_every_template_and_no_clean_retail_read() -> None:
    flags = instruction_heuristic(TOOLS)
    for goal in RETAIL.injection.goals:  # type: ignore[union-attr]
        for name in TEMPLATE_NAMES:
            assert flags(ok({"address2": f"Apt 4 {render(name, goal, 'C-1', [])}"})), name
    env = Environment(RETAIL)
    try:
        reads = [("get_customer", {"customer_id": c}) for (c,) in env.db.execute("SELECT id FROM customers LIMIT 50")]
        reads += [("get_order", {"order_id": o}) for (o,) in env.db.execute("SELECT id FROM orders LIMIT 200")]
        reads += [("list_categories", {})]
        assert not [r for r in reads if flags(env.execute(*r).result)]
    finally:
        env.close()


def test_the_plan_holds_every_tool_the_tasks_careful_agent_calls() -> None:
    """Under the filter alone, with no attack, reference:perfect passes every retail task: the plan costs no utility."""
    config = new_attack_config(
        "urgency", "address_hijack", "tool_filter", domain="retail", agent="reference:perfect", user="scripted",
        personas="baseline", tasks="", trials=1,
    )  # fmt: skip
    world, tasks = prepare(config)
    suite = Suite(world, config, resolve_agent("reference:perfect"), resolve_user("scripted"))
    specs = [s for s in plan_attacks(config, tasks, set()) if s.configuration.defenses and s.attack is None]
    records = [asyncio.run(suite.judge(s)) for s in specs]
    assert len(records) == len(RETAIL.tasks)
    assert [r.outcome.key for r in records if r.outcome.reward != 1 or r.outcome.refused] == []


def test_the_plan_is_the_tasks_calls_reads_and_identity_lookups() -> None:
    task = RETAIL.tasks["retail-001"]
    env = Environment(RETAIL)
    try:
        plan = planned_tools(RETAIL, task, env.db)
    finally:
        env.close()
    writes = {a.tool for a in task.actions}
    identity = {name for name, spec in TOOLS.items() if spec.meta.identifies}
    assert writes | identity | {"get_customer", "get_order"} <= plan
    assert "change_customer_address" not in plan and "transfer_to_human" not in plan
