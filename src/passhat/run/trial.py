"""One trial: customer ⇄ agent ⇄ tools until the customer stops, the agent transfers, or turns run out.

What one agent turn (one answer of its model) may carry is bounded (``TurnBounds``): a model that
answers with hundreds of calls or megabytes of arguments or text gets error results and a cut message,
and its trial is judged like any other, in bounded time, memory and store space.

Whatever ends a trial, its events are kept: a trial that cannot be judged raises ``Unjudgeable`` holding
them. The agent's side may cut a conversation short: its own failure (``AgentFailed``) ends it as
``agent_error``, judged; an agent that cannot answer (``AGENT_UNAVAILABLE``) makes the trial an infra error
(run again by ``--resume``) unless it has written, since a write that reached the backend is on the record
and a second try would wipe it: then it ends as ``agent_unavailable``, judged.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import traceback
from collections.abc import Sequence
from typing import Any

from passhat.agents.base import Agent, AgentFactory, AgentFailed, AgentSetup, ToolCall
from passhat.agents.protocol import AgentUnavailable
from passhat.customers.base import UserFactory, UserSimulator
from passhat.customers.personas import Persona
from passhat.domains.model import Domain, Task
from passhat.env import Environment
from passhat.env.tools import MAX_ARGUMENT_DEPTH, ToolSpec, argument_problem, error
from passhat.grade import Grade, Mode, grade_trial
from passhat.grade.steps import TrialSteps, trial_steps
from passhat.guard import ToolPath
from passhat.guard.gate import SIMULATED
from passhat.guard.inbox import Inbox
from passhat.llm import ContextOverflow, ModelRequestError, ModelUnavailable
from passhat.run.tool_path import trial_tool_path
from passhat.trajectory import Event
from passhat.untrusted import redact, storable

# an agent that could not answer: it said so, or its service or model endpoint failed past the retries or refused
AGENT_UNAVAILABLE = (AgentUnavailable, ModelUnavailable, ModelRequestError)
MAX_TOOL_ROUNDS = 25  # tool-call rounds the agent may make before it must speak to the customer
HEAD_BYTES = 256  # what a stored event keeps of arguments too large to keep whole
SECRET_MARGIN = 4096  # characters past a cut searched for a secret, so none is kept half-redacted


@dataclasses.dataclass(frozen=True)
class TurnBounds:
    """What one answer of the agent may carry: calls past ``tool_calls`` and calls whose arguments (as
    JSON text) pass ``argument_bytes`` get an error result without running, and a message past
    ``message_bytes`` is cut; what is stored of each is cut too, with its original size."""

    tool_calls: int = 32
    argument_bytes: int = 64 * 1024
    message_bytes: int = 64 * 1024


GENEROUS_BOUNDS = TurnBounds()


HELD_PER_CONVERSATION = 2  # trials a process holds per conversation slot: the one talking, and one waiting to start


@dataclasses.dataclass(frozen=True)
class Pacing:
    """How the trials of one event loop take turns: at most ``talking`` conversations at once, each trial graded
    after the one that takes its conversation slot has started, and one trial graded at a time, one per turn of
    the loop. So conversations that end together do not wait on one another's grading, and the steps of those
    still talking wait behind one grading at most."""

    talking: asyncio.Semaphore
    grading: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)


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
    steps: TrialSteps  # how the trial went along its task's plan
    audit: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # records for the run's audit trail


class Unjudgeable(Exception):
    """The trial could not be judged (an infra error; the cause is the exception it was raised from): ``events``
    is what happened until then, stored with it."""

    def __init__(self, events: list[Event]):
        super().__init__(f"the trial could not be judged after {len(events)} events")
        self.events = events


def unjudged(exc: Exception) -> tuple[str, list[Event]]:
    """A failure that left a trial unjudged, as stored: the traceback of what made it so (its last line the
    exception, which reports quote) and the events until then (none when the trial never started)."""
    cause, events = (exc.__cause__ or exc, exc.events) if isinstance(exc, Unjudgeable) else (exc, [])
    return "".join(traceback.format_exception(cause, limit=8)), events


async def run_trial(
    domain: Domain,
    spec: TrialSpec,
    make_agent: AgentFactory,
    make_user: UserFactory,
    mode: Mode = "strict",
    max_turns: int = 30,
    faults: dict[str, float] | None = None,
    guards: Sequence[str] = (),
    bounds: TurnBounds = GENEROUS_BOUNDS,
    inbox: Inbox | None = None,
    pacing: Pacing | None = None,
) -> TrialOutput:
    """Play one conversation to its end and grade it; Unjudgeable, raised from the harness or infra failure, when
    it cannot be judged.

    ``faults`` ({class: rate}) and ``guards`` (names) put the fault injector and the gateway on the
    tools' path, with the guards the task itself declares added; the operator then resolves any
    human-gate tickets before grading: the simulated one, or with an ``inbox`` the people deciding there,
    whose decisions the trial awaits (other trials of the event loop going on meanwhile).
    ``bounds``: what one answer of the agent may carry. ``pacing``: see Pacing (a conversation slot is held
    from the backend's fork to the conversation's end).
    """
    rng = random.Random(spec.seed)
    events: list[Event] = []
    try:
        with contextlib.ExitStack() as closing:
            async with pacing.talking if pacing else contextlib.nullcontext():
                env = Environment(domain)
                closing.callback(env.release)
                conversation = f"{spec.task.id}/{spec.persona.name}/{spec.trial}"
                scenario_guards = [*guards, *(g for g in spec.task.guards if g not in guards)]  # a task's own gate always applies
                # keys derive from the trial's seed, not the run's name: the same seed gives the same trajectory
                operator = inbox.operator(conversation, domain.name) if inbox else SIMULATED
                path = trial_tool_path(env, spec.seed, faults or {}, scenario_guards, f"seed-{spec.seed}", conversation, operator)
                user = make_user(domain, spec.task, spec.persona, random.Random(rng.getrandbits(64)))
                agent = make_agent(
                    AgentSetup(domain, spec.task, path.tool_schemas(), domain.policy, random.Random(rng.getrandbits(64)), env.db)
                )
                await _converse(path, agent, user, max_turns, bounds, events)
                events += await path.settle_waiting()
            async with pacing.grading if pacing else contextlib.nullcontext():
                if pacing:
                    await asyncio.sleep(0)  # a turn of the loop: the trial the slot went to, and every step ready, first
                grade = grade_trial(domain, spec.task, env, events, mode)
                return TrialOutput(events, grade, trial_steps(domain, spec.task, events, grade.outcome), path.audit)
    except Exception as exc:
        raise Unjudgeable(events) from exc


async def _converse(
    path: ToolPath, agent: Agent, user: UserSimulator, max_turns: int, bounds: TurnBounds, events: list[Event]
) -> None:
    """Play the conversation into ``events``, which keep what happened however it ends."""
    turn = await user.respond(None)
    events.append(Event("user", turn.text))
    if turn.stop:  # a customer who leaves before asking anything (a simulator error)
        events.append(Event("end", turn.stop))
        return
    for _ in range(max_turns):
        try:
            said, transferred = await _agent_turn(path, agent, events, bounds)
        except ContextOverflow:  # the agent's model cannot take the conversation any further
            events.append(Event("end", "context_overflow"))
            return
        except AgentFailed as exc:
            events.append(Event("end", "agent_error", cause=str(exc)))
            return
        except AGENT_UNAVAILABLE as exc:
            if not wrote(path.env.tools, events):
                raise
            events.append(Event("end", "agent_unavailable", cause=str(exc)))
            return
        if transferred:
            events.append(Event("end", "transferred"))
            return
        turn = await user.respond(said)
        events.append(Event("user", turn.text))
        if turn.stop:
            events.append(Event("end", turn.stop))
            return
    events.append(Event("end", "max_turns"))


def wrote(tools: dict[str, ToolSpec], events: list[Event]) -> bool:
    """Whether a write of the agent's reached the backend: it took effect, or was filed with the human gate."""
    return any(
        e.kind == "tool"
        and (spec := tools.get(e.name or "")) is not None
        and spec.meta.write
        and (e.took_effect or e.decision == "ticket")
        for e in events
    )


async def _agent_turn(path: ToolPath, agent: Agent, events: list[Event], bounds: TurnBounds) -> tuple[str, bool]:
    """Let the agent call tools until it speaks; returns what it said (as the customer sees it, cut to
    the bound) and whether it handed off."""
    said: list[str] = []
    handed_off = False
    for _ in range(MAX_TOOL_ROUNDS):
        turn = await agent.act(events)
        for number, call in enumerate(turn.tool_calls, 1):
            if number > bounds.tool_calls:
                event = _not_run(
                    call,
                    error(
                        "too_many_tool_calls",
                        (
                            f"this answer asked for {len(turn.tool_calls):,} tool calls and at most {bounds.tool_calls:,} of one "
                            f"answer are carried out, in order: call {number:,} was not run. Ask for fewer calls at a time."
                        ),
                    ),
                )
            else:
                event = execute_call(path, call, events, bounds.argument_bytes)
            events.append(event)
            handed_off |= event.ok and path.env.tools[call.name].meta.ends_conversation
        if turn.text or not turn.tool_calls:
            text = _bounded_message(turn.text or "", bounds.message_bytes)
            events.append(Event("agent", text))
            said.append(text)
        if handed_off or not turn.tool_calls:
            break
    return "\n".join(said), handed_off


def execute_call(path: ToolPath, call: ToolCall, events: list[Event], argument_bytes: int) -> Event:
    """One of the agent's calls, as an event: the one way a call reaches the tools, for a trial's orchestrator
    and for every other caller of a trial's tools (the MCP server). Arguments over ``argument_bytes`` and arguments no tool
    could take (text that is not JSON or that Python cannot read, values SQLite or the store cannot
    carry) get an error result here, before any guard or fault sees them; the call is then the agent's,
    judged like any other."""
    if (size := _utf8_size(_json_text(call.arguments))) > argument_bytes:
        return _not_run(
            call,
            error(
                "arguments_too_large",
                (
                    f"the arguments of this call are {size:,} bytes, over the {argument_bytes:,} bytes one call may carry: "
                    "it was not run."
                ),
            ),
        )
    try:
        args = _decoded(call.arguments) if isinstance(call.arguments, str) else call.arguments
        problem = argument_problem(args)
    except ValueError as exc:
        problem = str(exc)
    if problem:
        result = error("invalid_arguments", problem, retryable=True)
        return Event("tool", call_id=call.id, name=call.name, args=storable(call.arguments), result=result)
    # a checked value is its own storable form but for known secrets, which no tool, backend or audit keeps
    return path.execute(call.name, storable(args), events, call.id)


def _not_run(call: ToolCall, result: dict[str, Any]) -> Event:
    """A call refused before it ran; its event keeps its arguments whole (in their stored form) only when they are small."""
    text = _json_text(call.arguments)
    size = _utf8_size(text)
    args = storable(call.arguments) if size <= HEAD_BYTES else {"truncated": True, "bytes": size, "head": _head(text, HEAD_BYTES)}
    return Event("tool", call_id=call.id, name=call.name, args=args, result=result)


def _bounded_message(text: str, limit: int) -> str:
    """The agent's message, or its first ``limit`` bytes and a note of its size when it is longer."""
    size = _utf8_size(text)
    if size <= limit:
        return text
    return f"{_head(text, limit)}\n[passhat cut this message: it had {size:,} bytes, over the {limit:,} one message may carry]"


def _json_text(arguments: Any) -> str:
    """Arguments as JSON text: as the model wrote them, or written out (values JSON has no form for as
    their repr); what Python cannot write as it is (a key that is not text, an integer past its 4,300
    digits, nesting past its stack, a cycle) in its stored form, which the argument checks refuse anyway."""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(storable(arguments), ensure_ascii=False)


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _head(text: str, limit: int) -> str:
    """The longest start of ``text`` within ``limit`` UTF-8 bytes, whole characters only; secrets are
    redacted before the cut, so none is kept half."""
    raw = redact(text[: limit + SECRET_MARGIN]).encode("utf-8", "surrogatepass")[:limit]
    for end in range(len(raw), len(raw) - 4, -1):  # a cut inside a character: drop its first bytes
        try:
            return raw[:end].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            continue
    return ""


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
