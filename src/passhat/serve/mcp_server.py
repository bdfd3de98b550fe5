"""Any domain's tools as an MCP server, each MCP session on a backend fork of its own.

An agent that reaches its tools over MCP (its own framework, its own service) meets here the tools an agent inside
``passhat run`` meets, on the same way to the backend: every call goes through ``execute_call`` (a trial's argument
checks), then the guards and the fault injector of ``trial_tool_path``, and is recorded as the ``Event`` a trial
stores, so what a session did can be graded like a trial.

Tools. Name, description and input schema are the ones the LLM agent of a run sees (with the guards' additions, such
as the idempotency key of a write); the annotations come from the tool's metadata: a tool that does not write is
read-only, a write is destructive, and idempotent when its metadata says so; no tool reaches outside the backend
(a closed world). A call that fails (an error or not-found result, arguments that do not fit, a tool that does not
exist, a guard's refusal, an injected fault) answers an error result (``isError``) holding the three-shape result
as structured content and as JSON text: never a protocol error, so the agent can read it and recover.

Sessions. A session gets a fresh fork of the domain's backend when it first lists or calls a tool, and loses it
when it ends:

- over stdio the connection is the session (one per process), ended when the client closes the server's stdin;
- over streamable HTTP each MCP session (``Mcp-Session-Id``, opened by ``initialize``) is one, ended when its client
  ends it (HTTP DELETE, which the SDK's client sends when it closes), when it has been idle for
  ``session_idle_timeout`` seconds (no tool listed or called; its fork is freed and its id then answers 404 saying
  why), or when the server stops. At most ``max_sessions`` are open at once: one more ``initialize`` is answered 503
  until one ends. A client that abandons its sessions therefore costs memory for the timeout, not for the server's
  life. Protocol revision 2026-07-28 has no sessions: a request of that revision is answered
  -32022 (unsupported protocol version) naming the handshake versions, so a client that negotiates (the SDK's
  default ``mode="auto"``) falls back to the handshake and gets a session.

Session *n* (numbered from 1 in opening order) draws its faults from ``trial_seed(seed, "mcp", "session", n)``: the
same seed and the same calls give the same faults, session by session.

In-process API, for a harness that runs an agent against this server::

    server = McpDomainServer(domain, guards=["confirmation"], faults={"timeout": 0.1}, seed=0, on_session_end=grade)
    await server.serve_stdio()                  # or: await server.serve_http(listening_socket(host, port), host)  # from agents.mcp_wire
    server.stop()                               # ends serve_http, from any thread
    server.session_ids()                        # every session so far, in opening order
    server.session_events(session_id)           # its events: each call, and at its end the operator's decisions
    server.session(session_id)                  # the McpSession: number, seed, env (its fork), path, events, audit

``on_session_end(session)`` runs when a session ends, once the operator has settled the session's human-gate tickets
and before its fork closes: the moment to read its final backend (to grade it, say). A session's events stay readable
after it ended, for as long as the server object lives.

Operator. By default the simulated operator settles a session's tickets when it ends. With an ``inbox``
(``passhat.guard.inbox``) each ticket is filed there as the gate opens it (conversation: the session); a decision made
in the inbox is carried out on the session's fork at the session's next tool call, and at its end the session waits
for the rest, up to the inbox's timeout (a ticket not decided by then expires: a rejection). Ending a session is
then a wait: the client's DELETE is answered, and the server stops, once it is over.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import mcp.types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import passhat
from passhat.agents.base import ToolCall
from passhat.agents.mcp_wire import MCP_PATH, mcp_tool, tool_result
from passhat.domains.model import Domain
from passhat.env import Environment
from passhat.guard import ToolPath
from passhat.guard.gate import SIMULATED
from passhat.guard.inbox import Inbox
from passhat.run.seeding import trial_seed
from passhat.run.tool_path import trial_tool_path
from passhat.run.trial import GENEROUS_BOUNDS, execute_call
from passhat.trajectory import Event

CONNECTION_SESSION = "stdio"  # the session of a connection its transport gives no id of its own (stdio, in-process)
SESSION_IDLE_TIMEOUT = 1800.0  # seconds without a tool listed or called before an HTTP session is ended (30 min)
MAX_SESSIONS = 200  # HTTP sessions open at once (each holds a backend fork, about 1.4 MB)
REAP_EVERY = 30.0  # seconds between looks for idle sessions (or a quarter of a shorter timeout)


@dataclasses.dataclass
class McpSession:
    """One MCP session's world: its number and fault seed, its backend fork and the way to it, and what it did."""

    id: str
    number: int
    seed: int
    env: Environment
    path: ToolPath
    events: list[Event] = dataclasses.field(default_factory=list)
    open: bool = True
    active: float = dataclasses.field(default_factory=time.monotonic)  # when it last listed or called a tool

    @property
    def audit(self) -> list[dict[str, Any]]:
        """The session's audit records, with the audit guard on."""
        return self.path.audit


class McpDomainServer:
    """A domain's tools over MCP (stdio or streamable HTTP), one backend fork per session (see the module)."""

    def __init__(
        self,
        domain: Domain,
        *,
        guards: Sequence[str] = (),
        faults: dict[str, float] | None = None,
        seed: int = 0,
        on_session_end: Callable[[McpSession], None] | None = None,
        inbox: Inbox | None = None,
        session_idle_timeout: float = SESSION_IDLE_TIMEOUT,
        max_sessions: int = MAX_SESSIONS,
    ):
        self.domain, self.guards, self.faults, self.seed = domain, list(guards), dict(faults or {}), seed
        self.on_session_end, self.inbox = on_session_end, inbox
        self.session_idle_timeout, self.max_sessions = session_idle_timeout, max_sessions
        self._sessions: dict[str, McpSession] = {}
        self._http: uvicorn.Server | None = None
        self._stopping = False  # stop() came, perhaps before serve_http made its server
        self.server: Server[Any] = Server(
            f"passhat-{domain.name}",
            version=passhat.__version__,
            description=domain.description,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    # -- sessions ---------------------------------------------------------------------------------------------------

    def session_ids(self) -> list[str]:
        return list(self._sessions)

    def session(self, session_id: str) -> McpSession:
        return self._sessions[session_id]

    def session_events(self, session_id: str) -> list[Event]:
        return list(self._sessions[session_id].events)

    async def end_session(self, session_id: str) -> None:
        """Settle the session's tickets (waiting for the inbox's decisions), hand it to ``on_session_end``, close its
        fork. A session that never used a tool has no fork to close, and ending a session twice does nothing."""
        session = self._sessions.get(session_id)
        if session is None or not session.open:
            return
        session.open = False
        try:
            session.events += await session.path.settle_waiting()
            if self.on_session_end is not None:
                self.on_session_end(session)
        finally:
            session.env.close()

    async def close(self) -> None:
        """End every session (the server stops), their waits for decisions running side by side."""
        await asyncio.gather(*(self.end_session(session_id) for session_id in self.session_ids()))

    async def end_idle_sessions(self, now: float | None = None) -> list[str]:
        """End every HTTP session idle for longer than ``session_idle_timeout`` (as of ``now``, monotonic), freeing
        its fork; the ids ended. The stdio session is the connection's: it ends with it, never by the clock."""
        now = time.monotonic() if now is None else now
        idle = [
            s.id for s in self._sessions.values()
            if s.open and s.id != CONNECTION_SESSION and now - s.active > self.session_idle_timeout
        ]  # fmt: skip
        await asyncio.gather(*(self.end_session(session_id) for session_id in idle))
        return idle

    def ended(self, session_id: str) -> bool:
        session = self._sessions.get(session_id)
        return session is not None and not session.open

    def _session_of(self, ctx: ServerRequestContext[Any, Any]) -> McpSession:
        """The request's session, opened (with its fork) on its first request."""
        request = ctx.request  # the HTTP request over streamable HTTP; None over stdio
        session_id = (request.headers.get(MCP_SESSION_ID_HEADER) if request is not None else None) or CONNECTION_SESSION
        session = self._sessions.get(session_id) or self._open(session_id)
        session.active = time.monotonic()
        return session

    def _open(self, session_id: str) -> McpSession:
        number = len(self._sessions) + 1
        seed = trial_seed(self.seed, "mcp", "session", number)
        env = Environment(self.domain)
        # as in a trial: keys derive from the seed (the same seed gives the same trajectory), the session names the conversation
        operator = self.inbox.operator(f"session {number}: {session_id}", self.domain.name) if self.inbox else SIMULATED
        path = trial_tool_path(env, seed, self.faults, self.guards, f"seed-{seed}", f"mcp-session-{number}", operator)
        session = self._sessions[session_id] = McpSession(session_id, number, seed, env, path)
        return session

    # -- the MCP handlers ---------------------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = self._session_of(ctx)
        tools = [mcp_tool(schema, session.env.tools[schema["name"]].meta) for schema in session.path.tool_schemas()]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        session = self._session_of(ctx)
        if self.inbox is not None:  # what people decided since the last call is carried out first
            session.events += session.path.settle()
        call = ToolCall(f"mcp-{ctx.request_id}", params.name, params.arguments or {})
        event = execute_call(session.path, call, session.events, GENEROUS_BOUNDS.argument_bytes)
        session.events.append(event)
        return tool_result(event.result)  # type: ignore[arg-type]  # a tool event always has its result

    # -- transports ---------------------------------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serve one session over this process's stdin and stdout until the client closes stdin."""
        try:
            async with stdio_server() as (read_stream, write_stream):
                await self.server.run(read_stream, write_stream, self.server.create_initialization_options())
        finally:
            await self.close()

    async def serve_http(self, sock: socket.socket, host: str = "127.0.0.1") -> None:
        """Serve streamable HTTP at ``MCP_PATH`` on a listening socket until ``stop()`` (or Ctrl-C in the main thread)."""
        self._http = uvicorn.Server(uvicorn.Config(self.http_app(host), log_config=None, log_level="warning"))
        self._http.should_exit = self._stopping
        reaper = asyncio.create_task(self._end_idle_sessions_until_stopped())
        try:
            await self._http.serve(sockets=[sock])
        finally:
            reaper.cancel()
            await self.close()

    async def _end_idle_sessions_until_stopped(self) -> None:
        while True:
            await asyncio.sleep(min(REAP_EVERY, self.session_idle_timeout / 4))
            await self.end_idle_sessions()

    def stop(self) -> None:
        """Ask ``serve_http`` to finish, or not to start serving if it has not yet (it ends every session on its way out)."""
        self._stopping = True
        if self._http is not None:
            self._http.should_exit = True

    def http_app(self, host: str = "127.0.0.1") -> ASGIApp:
        """The streamable HTTP app: the SDK's (which guards a loopback ``host`` against DNS rebinding), with sessions
        that last until their client ends them, behind the boundary that tells this server when they do."""
        app = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            host=host,
            session_idle_timeout=self.session_idle_timeout,
            max_sessions=self.max_sessions,
        )
        return _SessionBoundary(app, self)


class _SessionBoundary:
    """In front of the SDK's HTTP app: refuses requests that belong to no session (protocol 2026-07-28) or to a
    session this server ended, and ends a session when its client's DELETE succeeds."""

    def __init__(self, app: ASGIApp, server: McpDomainServer):
        self.app, self.server = app, server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts and stops with it
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await _sessionless_refusal(version)(scope, receive, send)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None and self.server.ended(session_id):
            await _ended_session(self.server.session_idle_timeout)(scope, receive, send)
            return
        if scope["method"] != "DELETE" or session_id is None:
            await self.app(scope, receive, send)
            return

        async def ending(message: Message) -> None:
            # the SDK answers a DELETE once the session is over: end ours before the client hears it is
            if message["type"] == "http.response.start" and 200 <= message["status"] < 300:
                await self.server.end_session(session_id)
            await send(message)

        await self.app(scope, receive, ending)


def _ended_session(timeout: float) -> JSONResponse:
    """404, as the protocol answers a session that is gone, saying why: the client must initialize a new one."""
    error = {
        "code": types.INVALID_REQUEST,
        "message": (
            f"this MCP session has ended (it listed or called no tool for {timeout:g} s, --session-idle-timeout, or "
            "its client ended it) and its backend was freed; initialize a new session"
        ),
    }
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=404)


def _sessionless_refusal(version: str) -> JSONResponse:
    """-32022 naming the versions this server speaks: a negotiating client falls back to the handshake."""
    error = {
        "code": types.UNSUPPORTED_PROTOCOL_VERSION,
        "message": (
            f"this passhat server gives each MCP session a backend of its own, and protocol version {version} has no "
            f"sessions: connect with the initialize handshake of one of {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}"
        ),
        "data": {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version},
    }
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=400)


def endpoint(sock: socket.socket) -> str:
    """The URL a client connects to for a server listening on ``sock``."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"
