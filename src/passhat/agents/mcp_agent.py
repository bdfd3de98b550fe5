"""A team's agent service that calls its tools itself, over MCP: ``--agent mcp+http://host:port/path`` (or https).

The service is called as in the HTTP way (``http_agent``: the same client, timeouts, retries and blame), and each
request also names the trial's MCP endpoint, ``"mcp": {"url": "http://127.0.0.1:PORT/trials/<trial id>/mcp"}``:
while passhat waits for the answer, the service lists and calls the domain's tools there, then answers the customer
(``message``). An answer may still ask for ``tool_calls``, carried out as in the HTTP way.

One MCP server serves the whole run, on 127.0.0.1, from its first trial to its end; each trial has a path of its own
and no other. The server does not carry the calls out itself: it hands each one to the trial's orchestrator as a turn
of the agent (the way a Python agent's ``trial.call_tool`` does), so the call is checked, guarded, fault-injected and
recorded in order between the trial's messages on the trial's one backend fork, exactly as in-process. Every MCP
session and every request on a trial's path reach that trial, so a framework may open as many sessions as it likes.
The server keeps no MCP sessions (it is stateless): the path says which trial a request belongs to.

Who is to blame: as in the HTTP way, with one more rule: a try of a request during which the service called a tool
is not tried again when it fails (a second try could repeat a write): the trial is an infra error at once. A call
made while passhat is not waiting for an answer (before the first request, after the answer, on a trial that is
over) is refused with an error result and never runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import weakref
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import mcp.types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

import passhat
from passhat.agents.base import AgentSetup, AgentTurn, ToolCall
from passhat.agents.http_agent import AgentService, HttpAgent, checked_url
from passhat.agents.mcp_wire import MCP_PATH, listening_socket, mcp_tool, tool_result
from passhat.agents.protocol import ToolResult
from passhat.env import tool_registry
from passhat.env.tools import error
from passhat.errors import UserError
from passhat.llm import ModelHub
from passhat.trajectory import Event
from passhat.untrusted import escape_text

PREFIX = "mcp+"
HOST = "127.0.0.1"
TRIAL_PATH = re.compile(r"/trials/(?P<id>[0-9a-f]{32})/mcp/?")
GRACE_SECONDS = 2.0  # what the run's end waits for connections a service still holds open
TRIAL_KEY = "passhat.trial"  # where the ASGI scope of a request carries the id of its trial


def is_mcp_spec(spec: str) -> bool:
    return spec.strip().lower().startswith((f"{PREFIX}http://", f"{PREFIX}https://"))


def mcp_agent_factory(spec: str, hub: ModelHub | None) -> McpAgentFactory:
    """Check the spec; with the run's hub, also open the run's client of the service and its MCP server (both
    closed with the hub; the server starts with the first trial)."""
    if not is_mcp_spec(spec):
        raise UserError(f"--agent {spec!r}: an MCP agent service's spec is mcp+http://host:port/path (or mcp+https://).")
    url = checked_url(spec, spec.strip()[: len(PREFIX)])
    if hub is None:
        return McpAgentFactory(url, None, None)
    service, server = AgentService(url, hub.remote), McpTrialServer()
    hub.adopt(service)
    hub.adopt(server)
    return McpAgentFactory(url, service, server)


@dataclasses.dataclass(frozen=True)
class McpAgentFactory:
    """Makes one McpAgent per trial. ``service`` and ``server`` are None only while a configuration is checked."""

    url: str
    service: AgentService | None
    server: McpTrialServer | None

    def __call__(self, setup: AgentSetup) -> McpAgent:
        if self.service is None or self.server is None:
            raise RuntimeError(f"the agent service {self.url!r} was called without the run's client")
        return McpAgent(setup, self.service, self.server)


class McpAgent(HttpAgent):
    """One trial of an agent service that calls its tools over MCP, as the orchestrator's Agent: while a request is
    in flight, each call the service makes through MCP is a turn of one call, and the answer is the last turn."""

    def __init__(self, setup: AgentSetup, service: AgentService, server: McpTrialServer):
        super().__init__(setup, service)
        registry = tool_registry(setup.domain)
        tools = [mcp_tool(schema, registry[schema["name"]].meta) for schema in setup.tool_schemas]
        self._mcp = McpTrial(self._trial["id"], tools, self._transcript.new_call_id)
        self._url = server.add(self._mcp)
        # the trial's end (this agent's): its path goes, and a request still open (after a handoff) and its calls end
        weakref.finalize(self, server.end_trial, self._mcp.id)

    async def act(self, events: list[Event]) -> AgentTurn:
        self._mcp.deliver(self._transcript.update(events))
        request = self._mcp.request or self._mcp.send(
            self._service.post(self._request(mcp={"url": self._url}), repeatable=self._mcp.untouched)
        )
        call = asyncio.ensure_future(self._mcp.next_call())
        try:
            await asyncio.wait({request, call}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            call.cancel()  # does nothing to a call already taken; one not yet taken stays queued
        if call.done() and not call.cancelled():  # a call the service made: its own turn, carried out by the orchestrator
            return self._transcript.add(AgentTurn(None, (call.result(),)))
        return self._answer(self._mcp.finish())


class McpTrial:
    """One trial as its MCP endpoint sees it: its tools, the request passhat waits on, and the calls the service
    made through MCP during that request, queued for the orchestrator in the order they came. Holds nothing of the
    McpAgent, so the agent's end (the trial's) can end it."""

    def __init__(self, trial_id: str, tools: list[types.Tool], new_call_id: Callable[[], str]):
        self.id, self.tools, self._new_call_id = trial_id, tools, new_call_id
        self.request: asyncio.Future[bytes] | None = None
        self._calls_made = 0  # during the request in flight
        self._queue: asyncio.Queue[ToolCall] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[ToolResult]] = {}

    def send(self, post: Coroutine[Any, Any, bytes]) -> asyncio.Future[bytes]:
        """Send a request (``post``, running from now on): the service may call tools until it is answered."""
        self.request, self._calls_made = asyncio.ensure_future(post), 0
        return self.request

    def untouched(self) -> bool:
        """Whether the service has called no tool during the request in flight (so trying it again is safe)."""
        return self._calls_made == 0

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """A call the service made through MCP: queued for the orchestrator; its result once carried out."""
        if self.request is None or self.request.done():
            return error(
                "no_request",
                "passhat is not waiting for this agent's answer now (its answer came, or the trial is over): tools can be "
                "called only while a request of passhat's is unanswered. This call was not run.",
            )
        call = ToolCall(self._new_call_id(), escape_text(name), arguments)
        result: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self._waiting[call.id] = result
        self._calls_made += 1
        self._queue.put_nowait(call)
        return await result

    async def next_call(self) -> ToolCall:
        return await self._queue.get()

    def deliver(self, tool_events: list[Event]) -> None:
        """Hand each waiting call its result, from the orchestrator's events."""
        for event in tool_events:
            self._answer(event.call_id or "", event.result or {})

    def finish(self) -> bytes:
        """The answer to the request (or its failure, raised); calls still queued never run."""
        request, self.request = self.request, None
        assert request is not None and request.done()
        self._refuse("the agent answered passhat before this call could run: it was not run.")
        return request.result()

    def end(self) -> None:
        """The trial is over: its request is given up, and its calls that did not run are refused."""
        if self.request is not None:
            self.request.cancel()
        self._refuse("the trial ended before this call could run: it was not run.")

    def _refuse(self, why: str) -> None:
        """Answer every call still waiting: ``why`` to those never carried out, and to those carried out whose result
        the trial ended before handing back (a handoff), that the trial is over."""
        while not self._queue.empty():
            self._answer(self._queue.get_nowait().id, error("not_run", why))
        for call_id in list(self._waiting):
            self._answer(call_id, error("trial_over", "the trial ended after this call was carried out: it is in its record."))

    def _answer(self, call_id: str, result: ToolResult) -> None:
        if (waiting := self._waiting.pop(call_id, None)) and not waiting.done():
            waiting.set_result(result)


class McpTrialServer:
    """The run's MCP server on 127.0.0.1, started with the first trial and stopped with the run: each trial's tools at
    ``/trials/<trial id>/mcp``, a path that exists while the trial runs. Streamable HTTP, stateless."""

    def __init__(self) -> None:
        self._trials: dict[str, McpTrial] = {}
        self._base = ""
        self._http: _Quiet | None = None
        self._serving: asyncio.Task[None] | None = None

    def add(self, trial: McpTrial) -> str:
        """Serve ``trial``'s tools; returns its endpoint's URL. Call it inside the run's event loop."""
        if self._serving is None:
            self._start()
        self._trials[trial.id] = trial
        return f"{self._base}/trials/{trial.id}/mcp"

    def end_trial(self, trial_id: str) -> None:
        """The trial is over: its path goes, and its request and the calls still waiting end (McpTrial.end)."""
        if (trial := self._trials.pop(trial_id, None)) is not None:
            trial.end()

    def _start(self) -> None:
        sock = listening_socket(HOST, 0)  # listening now: a request that comes before the server runs waits for it
        self._base = f"http://{HOST}:{sock.getsockname()[1]}"
        server: Server[Any] = Server(
            "passhat", version=passhat.__version__, on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )
        app = server.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True, host=HOST)
        config = uvicorn.Config(
            _TrialRoutes(app, self._trials),
            log_config=None,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=GRACE_SECONDS,
        )
        self._http = _Quiet(config)
        self._serving = asyncio.ensure_future(self._http.serve(sockets=[sock]))

    async def aclose(self) -> None:
        """Stop serving, once every trial's waiting calls are answered (so no request is left open)."""
        for trial_id in list(self._trials):
            self.end_trial(trial_id)
        if self._http is not None and self._serving is not None:
            self._http.should_exit = True
            await self._serving

    def _trial_of(self, ctx: ServerRequestContext[Any, Any]) -> McpTrial | None:
        """The trial whose path the request came to (None once it is over)."""
        return self._trials.get(ctx.request.scope.get(TRIAL_KEY, "") if ctx.request is not None else "")

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        trial = self._trial_of(ctx)
        return types.ListToolsResult(tools=trial.tools if trial else [])

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        trial = self._trial_of(ctx)
        if trial is None:
            return tool_result(error("no_request", "this trial is over: the call was not run."))
        return tool_result(await trial.call(params.name, params.arguments or {}))


class _TrialRoutes:
    """In front of the SDK's app: ``/trials/<id>/mcp`` of a running trial is the MCP endpoint, marked with its trial;
    any other path is a 404."""

    def __init__(self, app: ASGIApp, trials: dict[str, McpTrial]):
        self.app, self.trials = app, trials

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts and stops with it
            await self.app(scope, receive, send)
            return
        match = TRIAL_PATH.fullmatch(scope["path"])
        if match is None or match["id"] not in self.trials:
            refusal = {"error": "no running trial has its MCP endpoint here: each of passhat's requests names it in mcp.url"}
            await JSONResponse(refusal, status_code=404)(scope, receive, send)
            return
        routed = {**scope, "path": MCP_PATH, "raw_path": MCP_PATH.encode(), TRIAL_KEY: match["id"]}
        await self.app(routed, receive, send)


class _Quiet(uvicorn.Server):
    """uvicorn without its signal handlers: Ctrl-C stops the run, as it does without this server."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
