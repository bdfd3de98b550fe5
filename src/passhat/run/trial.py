"""One trial: customer ⇄ agent ⇄ tools until the customer stops, the agent transfers, or turns run out."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from passhat.agents.base import Agent, AgentSetup, ToolCall
from passhat.domains.model import Domain, Task
from passhat.env import Environment
from passhat.env.tools import error
from passhat.grade import Grade, Mode, grade_trial
from passhat.llm import ContextOverflow
from passhat.guard import ToolPath
from passhat.run.tool_path import trial_tool_path
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
    audit: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # records for the run's audit trail


async def run_trial(
    domain: Domain,
    spec: TrialSpec,
    make_agent: AgentFactory,
    make_user: UserFactory,
    mode: Mode = "strict",
    max_turns: int = 30,
    faults: dict[str, float] | None = None,
    guards: Sequence[str] = (),
) -> TrialOutput:
    """Play one conversation to its end and grade it. Exceptions here are harness or infra failures.

    ``faults`` ({class: rate}) and ``guards`` (names) put the fault injector and the gateway on the
    tools' path, with the guards the task itself declares added; the operator then resolves any
    human-gate tickets before grading.
    """
    rng = random.Random(spec.seed)
    env = Environment(domain)
    try:
        conversation = f"{spec.task.id}/{spec.persona.name}/{spec.trial}"
        scenario_guards = [*guards, *(g for g in spec.task.guards if g not in guards)]  # a task's own gate always applies
        # keys derive from the trial's seed, not the run's name: the same seed gives the same trajectory
        path = trial_tool_path(env, spec.seed, faults or {}, scenario_guards, f"seed-{spec.seed}", conversation)
        user = make_user(domain, spec.task, spec.persona, random.Random(rng.getrandbits(64)))
        agent = make_agent(
            AgentSetup(domain, spec.task, path.tool_schemas(), domain.policy, random.Random(rng.getrandbits(64)), env.db)
        )
        events = await _converse(path, agent, user, max_turns)
        events += path.settle()
        return TrialOutput(events, grade_trial(domain, spec.task, env, events, mode), path.audit)
    finally:
        env.close()


async def _converse(path: ToolPath, agent: Agent, user: UserSimulator, max_turns: int) -> list[Event]:
    events: list[Event] = []
    turn = await user.respond(None)
    events.append(Event("user", turn.text))
    if turn.stop:  # a customer who leaves before asking anything (a simulator error)
        events.append(Event("end", turn.stop))
        return events
    for _ in range(max_turns):
        try:
            said, transferred = await _agent_turn(path, agent, events)
        except ContextOverflow:  # the agent's model cannot take the conversation any further
            events.append(Event("end", "context_overflow"))
            return events
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


async def _agent_turn(path: ToolPath, agent: Agent, events: list[Event]) -> tuple[str, bool]:
    """Let the agent call tools until it speaks; returns what it said and whether it handed off."""
    said: list[str] = []
    handed_off = False
    for _ in range(MAX_TOOL_ROUNDS):
        turn = await agent.act(events)
        for call in turn.tool_calls:
            event = _execute(path, call, events)
            events.append(event)
            handed_off |= event.ok and path.env.tools[call.name].meta.ends_conversation
        if turn.text or not turn.tool_calls:
            events.append(Event("agent", turn.text or ""))
            said.append(turn.text or "")
        if handed_off or not turn.tool_calls:
            break
    return "\n".join(said), handed_off


def _execute(path: ToolPath, call: ToolCall, events: list[Event]) -> Event:
    args = call.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            result = error("invalid_arguments", f"arguments are not valid JSON: {exc}", retryable=True)
            return Event("tool", call_id=call.id, name=call.name, args=call.arguments, result=result)
    return path.execute(call.name, args, events, call.id)
