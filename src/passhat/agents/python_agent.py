"""A team's agent as Python code: ``--agent python:package.module:factory``.

The module is imported from ``sys.path`` and then the current folder; ``factory()`` is called once per run
and returns an ``ExternalAgent``; each trial gets a fresh session from its ``new_conversation(trial)``,
whose ``respond(conversation, tools)`` gives each answer (see ``passhat.agents.protocol``).

Calls a session makes from inside ``respond`` through ``trial.call_tool`` are not run behind the
orchestrator's back: ``respond`` runs as a task, and each such call becomes a turn of one tool call that
the orchestrator carries out like any other (bounds, guards, faults, events, grading); the next ``act``
hands its result back to the waiting call. So an agent may mix calls it makes itself with calls its answer
asks for, and every one is judged the same way (at most ``MAX_TOOL_ROUNDS`` of them before it speaks).

Who is to blame: an exception from the agent's code (factory excepted) is the agent's own failure, its turn
with a note, and the trial is judged; what it raises that is not an Exception (SystemExit, its own
KeyboardInterrupt) ends the conversation as its failure (``AgentFailed``), never the run; ``AgentUnavailable``,
or no step within the run's request timeout, means the agent could not answer (see ``passhat.run.trial``).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import importlib
import inspect
import os
import signal
import sys
import threading
import traceback
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passhat.agents.base import AgentFailed, AgentSetup, AgentTurn, ToolCall
from passhat.agents.protocol import AgentSession, AgentUnavailable, ExternalAgent, ToolResult, Transcript, Trial, function_schemas
from passhat.errors import UserError
from passhat.llm import ModelHub
from passhat.trajectory import Event
from passhat.untrusted import escape_text

PREFIX = "python:"
SHOWN_ERROR_CHARS = 500  # what a note keeps of an exception's message


def load_factory(spec: str) -> Callable[[], Any]:
    """The callable ``python:module:attribute`` names; a UserError saying what is wrong when there is none."""
    module_name, _, attribute = spec.strip().removeprefix(PREFIX).partition(":")
    if not module_name or not attribute:
        raise UserError(f"--agent {spec!r} names no factory: write python:package.module:factory, e.g. python:my_agent:create.")
    if (here := os.getcwd()) not in sys.path:
        sys.path.append(here)  # after the installed packages: the current folder never shadows them
    try:
        target: Any = importlib.import_module(module_name)
    except BaseException as exc:  # the team's module: any failure to import it is theirs to fix
        if is_ctrl_c(exc):
            raise
        raise UserError(
            f"--agent {spec!r}: cannot import module {module_name!r} ({type(exc).__name__}: {exc}); it is looked up on "
            f"sys.path and then in the current folder ({here})."
        ) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise UserError(f"--agent {spec!r}: module {module_name!r} has no {attribute!r} (missing {part!r}).")
        target = getattr(target, part)
    if not callable(target):
        raise UserError(f"--agent {spec!r}: {attribute!r} is a {type(target).__name__}, not a callable that returns the agent.")
    return target


def python_agent_factory(spec: str, hub: ModelHub | None) -> PythonAgentFactory:
    """Check the spec; with the run's hub, also call the factory (once per run) and check what it returned."""
    factory = load_factory(spec)
    if hub is None:
        return PythonAgentFactory(spec, None, 0.0)
    try:
        agent = factory()
    except BaseException as exc:
        if is_ctrl_c(exc):
            raise
        raise UserError(f"--agent {spec!r}: the factory raised {_described(exc)}; no trial was run.") from None
    if not callable(getattr(agent, "new_conversation", None)):
        raise UserError(
            f"--agent {spec!r}: the factory returned a {type(agent).__name__}, which has no new_conversation(trial) method; "
            "see docs/agents.md for the protocol."
        )
    return PythonAgentFactory(spec, agent, hub.remote.timeout)


@dataclasses.dataclass(frozen=True)
class PythonAgentFactory:
    """Makes one PythonAgent per trial. ``agent`` is None only while a configuration is being checked."""

    spec: str
    agent: ExternalAgent | None
    timeout: float

    def __call__(self, setup: AgentSetup) -> PythonAgent:
        if self.agent is None:
            raise RuntimeError(f"the python agent {self.spec!r} was started without being created")
        return PythonAgent(setup, self.agent, self.timeout)


class PythonAgent:
    """One trial of a Python agent, as the orchestrator's Agent."""

    def __init__(self, setup: AgentSetup, agent: ExternalAgent, timeout: float):
        self._transcript = Transcript()
        self._conversation = _Conversation(
            agent, self._transcript, function_schemas(setup.tool_schemas), setup.rng.getrandbits(31)
        )
        self._timeout = timeout
        self._task: asyncio.Task[Any] | None = None

    async def act(self, events: list[Event]) -> AgentTurn:
        self._conversation.deliver(self._transcript.update(events))
        if self._task is None:
            self._task = asyncio.create_task(self._conversation.respond(copy.deepcopy(self._transcript.messages)))
            weakref.finalize(self, _cancel, self._task)  # a trial that ends mid-respond (a handoff) leaves no task behind
        call = asyncio.create_task(self._conversation.requests.get())
        done, _ = await asyncio.wait({self._task, call}, timeout=self._timeout, return_when=asyncio.FIRST_COMPLETED)
        if call in done:  # a call respond() waits on: its own turn, carried out by the orchestrator
            return self._transcript.add(AgentTurn(None, (call.result(),)))
        call.cancel()
        task, self._task = self._task, None
        if task not in done:
            task.cancel()
            raise AgentUnavailable(
                f"the agent gave no answer and made no tool call within {self._timeout:g} s (--request-timeout)"
            )
        self._conversation.abandon_calls()
        return self._answer(task)

    def _answer(self, task: asyncio.Task[Any]) -> AgentTurn:
        try:
            raw = task.result()
        except AgentUnavailable:
            raise
        except _Escaped as exc:
            raise AgentFailed(f"the agent raised {_described(exc.raised)}") from None
        except (Exception, asyncio.CancelledError) as exc:  # the agent's own bug: judged
            return self._transcript.note(f"the agent raised {_described(exc)}")
        return self._transcript.answer(raw)


class _Escaped(Exception):
    """What the agent's code raised that is not an Exception, carried out of its task as one: asyncio lets a
    SystemExit or KeyboardInterrupt out of a task end the event loop, the run's."""

    def __init__(self, raised: BaseException):
        super().__init__(repr(raised))
        self.raised = raised


def is_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` may be the person's Ctrl-C rather than the agent's own: a KeyboardInterrupt in the main thread
    while Python's default SIGINT handler, which raises it in whatever code runs, is in place. Under ``passhat
    run`` asyncio's handler is (a Ctrl-C cancels the run, which ends as interrupted, and only a second one raises),
    and worker processes ignore SIGINT: there a KeyboardInterrupt from the agent's code is the agent's."""
    return (
        isinstance(exc, KeyboardInterrupt)
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )


class _Conversation:
    """What the respond task holds (never the PythonAgent, so a trial that ends can cancel its task): the
    agent's session, the trial it was given and the calls it is waiting on."""

    def __init__(self, agent: ExternalAgent, transcript: Transcript, tools: list[dict[str, Any]], seed: int):
        self._agent, self._transcript, self._tools = agent, transcript, tools
        self.trial = Trial(uuid.uuid4().hex, seed, tools, self.call_tool)
        self.requests: asyncio.Queue[ToolCall] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[ToolResult]] = {}
        self._session: AgentSession | None = None
        self._responding = False

    async def respond(self, conversation: list[dict[str, Any]]) -> Any:
        self._responding = True
        try:
            if self._session is None:
                self._session = await _awaited(self._agent.new_conversation(self.trial))
            return await _awaited(self._session.respond(conversation, self._tools))
        except (Exception, asyncio.CancelledError):
            raise
        except BaseException as exc:
            if is_ctrl_c(exc):
                raise
            raise _Escaped(exc) from None
        finally:
            self._responding = False

    async def call_tool(self, name: str, arguments: dict[str, Any] | str | None = None) -> ToolResult:
        """The trial's ``call_tool``: queue a turn of this one call and wait for its result."""
        if not self._responding:
            raise RuntimeError("trial.call_tool can only be used while respond() runs")
        if not isinstance(name, str):
            raise TypeError(f"a tool's name is a str, not a {type(name).__name__}")
        call = ToolCall(self._transcript.new_call_id(), escape_text(name), {} if arguments is None else arguments)
        result: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self._waiting[call.id] = result
        self.requests.put_nowait(call)
        return await result

    def deliver(self, tool_events: list[Event]) -> None:
        """Hand each waiting call its result, from the orchestrator's events."""
        for event in tool_events:
            if (waiting := self._waiting.pop(event.call_id or "", None)) and not waiting.done():
                waiting.set_result(event.result or {})

    def abandon_calls(self) -> None:
        """respond() returned with calls still queued (made by a task it did not wait for): they never run."""
        while not self.requests.empty():
            call = self.requests.get_nowait()
            if (waiting := self._waiting.pop(call.id, None)) and not waiting.done():
                waiting.set_exception(RuntimeError("respond() returned before this tool call could run"))


async def _awaited(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _cancel(task: asyncio.Task[Any]) -> None:
    if not task.done():
        task.cancel()


def _described(exc: BaseException) -> str:
    """An exception as a note shows it: its type and message, and where in the agent's code it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    message = str(exc)
    if len(message) > SHOWN_ERROR_CHARS:
        message = message[:SHOWN_ERROR_CHARS] + "…"
    return escape_text(f"{type(exc).__name__}{where}: {message}" if message else f"{type(exc).__name__}{where}")
