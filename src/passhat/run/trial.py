"""One trial: customer ⇄ agent ⇄ tools until the customer stops, the agent transfers, or turns run out."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable

from passhat.agents.base import Agent, AgentSetup, ToolCall
from passhat.domains.model import Domain, Task
from passhat.env import Environment
from passhat.env.tools import error
from passhat.grade import Grade, Mode, grade_trial
from passhat.trajectory import Event
from passhat.users.base import UserSimulator
from passhat.users.personas import Persona

AgentFactory = Callable[[AgentSetup], Agent]
UserFactory = Callable[[Domain, Task, Persona, random.Random], UserSimulator]

MAX_TOOL_ROUNDS = 25  # tool-call rounds the agent may make before it must speak to the customer


@dataclasses.dataclass(frozen=True)
class TrialSpec:
    task: Task
    persona: Persona
    trial: int
    seed: int


@dataclasses.dataclass(frozen=True)
class TrialOutput:
    events: list[Event]
    grade: Grade


async def run_trial(
    domain: Domain,
    spec: TrialSpec,
    make_agent: AgentFactory,
    make_user: UserFactory,
    mode: Mode = "strict",
    max_turns: int = 30,
) -> TrialOutput:
    """Play one conversation to its end and grade it. Exceptions here are harness or infra failures."""
    rng = random.Random(spec.seed)
    env = Environment(domain)
    try:
        user = make_user(domain, spec.task, spec.persona, random.Random(rng.getrandbits(64)))
        agent = make_agent(
            AgentSetup(domain, spec.task, env.tool_schemas(), domain.policy, random.Random(rng.getrandbits(64)), env.db)
        )
        events = await _converse(env, agent, user, max_turns)
        return TrialOutput(events, grade_trial(domain, spec.task, env, events, mode))
    finally:
        env.close()


async def _converse(env: Environment, agent: Agent, user: UserSimulator, max_turns: int) -> list[Event]:
    events: list[Event] = []
    turn = await user.respond(None)
    events.append(Event("user", turn.text))
    for _ in range(max_turns):
        said, transferred = await _agent_turn(env, agent, events)
        if transferred:
            events.append(Event("end", "transferred"))
            return events
        turn = await user.respond(said)
        events.append(Event("user", turn.text))
        if turn.stop:
            events.append(Event("end", turn.stop))
            return events
    events.append(Event("end", "max_turns"))
    return events


async def _agent_turn(env: Environment, agent: Agent, events: list[Event]) -> tuple[str, bool]:
    """Let the agent call tools until it speaks; returns what it said and whether it handed off."""
    said: list[str] = []
    handed_off = False
    for _ in range(MAX_TOOL_ROUNDS):
        turn = await agent.act(events)
        for call in turn.tool_calls:
            event = _execute(env, call)
            events.append(event)
            handed_off |= event.ok and env.tools[call.name].meta.ends_conversation
        if turn.text or not turn.tool_calls:
            events.append(Event("agent", turn.text or ""))
            said.append(turn.text or "")
        if handed_off or not turn.tool_calls:
            break
    return "\n".join(said), handed_off


def _execute(env: Environment, call: ToolCall) -> Event:
    args = call.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            result = error("invalid_arguments", f"arguments are not valid JSON: {exc}", retryable=True)
            return Event("tool", call_id=call.id, name=call.name, args=call.arguments, result=result)
    ex = env.execute(call.name, args)
    violations = tuple({"rule": v.rule, "reason": v.reason} for v in ex.violations)
    return Event("tool", call_id=call.id, name=call.name, args=ex.args, result=ex.result, violations=violations)
