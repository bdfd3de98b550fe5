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
from passhat.env.tools import MAX_ARGUMENT_DEPTH, argument_problem, error
from passhat.grade import Grade, Mode, grade_trial
from passhat.llm import ContextOverflow
from passhat.guard import ToolPath
from passhat.run.tool_path import trial_tool_path
from passhat.trajectory import Event
from passhat.untrusted import storable
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
    """One of the agent's calls, as an event. Arguments no tool could take (text that is not JSON or
    that Python cannot read, values SQLite or the store cannot carry) get an error result here,
    before any guard or fault sees them; the call is then the agent's, judged like any other."""
    try:
        args = _decoded(call.arguments) if isinstance(call.arguments, str) else call.arguments
        problem = argument_problem(args)
    except ValueError as exc:
        problem = str(exc)
    if problem:
        result = error("invalid_arguments", problem, retryable=True)
        return Event("tool", call_id=call.id, name=call.name, args=call.arguments, result=result)
    # a checked value is its own storable form but for known secrets, which no tool, backend or audit keeps
    return path.execute(call.name, storable(args), events, call.id)


def _decoded(raw: str) -> Any:
    """The JSON value of arguments as a model wrote them (empty text means none); ValueError saying
    what is wrong when they are not JSON Python can read."""
    if not raw.strip():
        return {}
    try:
        return json.loads(raw, parse_int=_integer, parse_constant=_not_a_number)
    except RecursionError:
        raise ValueError(f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON: {exc}") from None


def _integer(digits: str) -> int:
    if len(digits) > 20:  # beyond any 64-bit integer, and never converted: Python refuses long ones outright
        raise ValueError(f"arguments hold an integer of {len(digits.lstrip('-'))} digits, outside the 64-bit range")
    return int(digits)


def _not_a_number(name: str) -> Any:
    raise ValueError(f"arguments are not valid JSON: {name} is not a JSON number")
