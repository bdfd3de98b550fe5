"""A team's agent as an HTTP service: ``--agent http://host:port/path`` (or https).

At each of the agent's turns passhat POSTs ``{"protocol": "passhat.agent/1", "trial": {"id", "seed"},
"conversation", "tools"}`` as JSON, and the service answers ``{"message", "tool_calls"}``
(``passhat.agents.protocol``; docs/agents.md is the reference). The service is called by the run's rules
for remote calls, as model endpoints are (``passhat.llm``): ``--request-timeout`` per request,
``--max-connections`` in flight, ``--max-retries`` with backoff after a 408, 409, 429 or 5xx, a lost or
refused connection or a timeout, honouring Retry-After.

Who is to blame: an answer the service sent is the agent's, whatever it holds; one that is not JSON, too
large or off the protocol is its turn with a note, and a call of an unknown tool or with bad arguments is an
error result, so the trial is judged. A refusal (a 4xx other than 408, 409 and 429, or a redirect) is an
answer too, the service's failure to serve a well-formed request: it ends the conversation as the agent's
failure (``AgentFailed``). A service that cannot answer (timeouts, 5xx or lost connections past the retries)
is unavailable, which ``passhat.run.trial`` judges only once the agent has written.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx2

import passhat
from passhat.agents.base import AgentFailed, AgentSetup, AgentTurn
from passhat.agents.protocol import PROTOCOL, Transcript, function_schemas
from passhat.errors import UserError
from passhat.llm import (
    ModelHub,
    ModelRequestError,
    ModelUnavailable,
    RemoteCalls,
    TransientError,
    classify_status,
    retry_after_seconds,
    retrying,
)
from passhat.trajectory import Event
from passhat.untrusted import escape_text

MAX_ANSWER_BYTES = 8 * 1024 * 1024  # an answer past this is not read (a turn's bounds keep far less of it)
ERROR_BYTES = 1024  # what an error message keeps of the body of a refusal
HEADERS = {"content-type": "application/json", "accept": "application/json", "user-agent": f"passhat/{passhat.__version__}"}


def is_http_spec(spec: str) -> bool:
    return spec.strip().lower().startswith(("http://", "https://"))


def checked_url(spec: str, prefix: str = "") -> str:
    """The agent's URL (what follows ``prefix`` in the spec), refused (UserError) unless it is an http(s) URL
    with a host that carries nothing that must not be stored with the run (credentials, a query string)."""
    url = spec.strip()[len(prefix) :]
    problem = None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is what refuses "http://h:99999"
    except ValueError as exc:
        problem = str(exc)
    else:
        if not parts.hostname:
            problem = "it has no host"
        elif parts.username or parts.password or parts.query:
            problem = "it carries credentials or a query string, and the agent's URL is stored with the run"
        elif any(c.isspace() for c in url):
            problem = "it holds a space"
    if problem:
        raise UserError(
            f"--agent {spec!r} is not an agent service's URL ({problem}); write e.g. {prefix}http://127.0.0.1:8000/agent."
        )
    return url


def http_agent_factory(spec: str, hub: ModelHub | None) -> HttpAgentFactory:
    """Check the URL; with the run's hub, also open the run's client (closed with the hub)."""
    url = checked_url(spec)
    if hub is None:
        return HttpAgentFactory(url, None)
    service = AgentService(url, hub.remote)
    hub.adopt(service)
    return HttpAgentFactory(url, service)


class AgentService:
    """The run's client of one agent service: one connection pool, the run's limit and retries."""

    def __init__(self, url: str, remote: RemoteCalls):
        self.url, self._remote = url, remote
        self._limit = asyncio.Semaphore(remote.max_connections)
        limits = httpx2.Limits(max_connections=remote.max_connections, max_keepalive_connections=remote.max_connections)
        self._client = httpx2.AsyncClient(timeout=remote.timeout, limits=limits, headers=HEADERS)

    async def post(self, payload: bytes, repeatable: Callable[[], bool] | None = None) -> bytes:
        """The body of the service's answer (cut past MAX_ANSWER_BYTES); raises ModelUnavailable after
        the retries, AgentFailed (or ContextOverflow) when the service refuses the request.

        ``repeatable`` is asked after a try that failed: False makes that failure final (ModelUnavailable at
        once), for a request whose failed try may already have acted (a service that called tools itself)."""

        async def attempt() -> bytes:
            try:
                return await self._attempt(payload)
            except TransientError as exc:
                if repeatable is None or repeatable():
                    raise
                raise ModelUnavailable(
                    f"the agent service at {self.url} failed after it had called tools during the request, and is not asked "
                    f"again, since a second try could repeat those calls: {exc}"
                ) from None

        return await retrying(attempt, self._remote.retry, f"the agent service at {self.url}")

    async def _attempt(self, payload: bytes) -> bytes:
        async with self._limit:
            try:
                async with asyncio.timeout(self._remote.timeout):
                    async with self._client.stream("POST", self.url, content=payload) as response:
                        body = await _read(response, MAX_ANSWER_BYTES + 1 if response.is_success else ERROR_BYTES)
            except (TimeoutError, httpx2.TimeoutException):
                raise TransientError(f"no answer within {self._remote.timeout:g} s (--request-timeout)") from None
            except httpx2.TransportError as exc:  # refused, reset or closed connection, a broken HTTP answer
                raise TransientError(f"{type(exc).__name__}: {str(exc) or 'the connection failed'}") from None
        if not response.is_success:
            message = escape_text(body.decode("utf-8", "replace")) or response.reason_phrase
            failure = classify_status(
                response.status_code, message, None, retry_after_seconds(response.headers.get("retry-after"))
            )
            if isinstance(failure, ModelRequestError):
                raise AgentFailed(f"the agent service at {self.url} refused passhat's request: {failure}")
            raise failure
        return body

    async def aclose(self) -> None:
        await self._client.aclose()


async def _read(response: httpx2.Response, limit: int) -> bytes:
    """At most about ``limit`` bytes of the body: a service cannot make passhat hold more."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body)


@dataclasses.dataclass(frozen=True)
class HttpAgentFactory:
    """Makes one HttpAgent per trial. ``service`` is None only while a configuration is being checked."""

    url: str
    service: AgentService | None

    def __call__(self, setup: AgentSetup) -> HttpAgent:
        if self.service is None:
            raise RuntimeError(f"the agent service {self.url!r} was called without the run's client")
        return HttpAgent(setup, self.service)


class HttpAgent:
    """One trial of an agent service, as the orchestrator's Agent."""

    def __init__(self, setup: AgentSetup, service: AgentService):
        self._service = service
        self._transcript = Transcript()
        self._tools = function_schemas(setup.tool_schemas)
        self._trial = {"id": uuid.uuid4().hex, "seed": setup.rng.getrandbits(31)}

    async def act(self, events: list[Event]) -> AgentTurn:
        self._transcript.update(events)
        return self._answer(await self._service.post(self._request()))

    def _request(self, **extra: Any) -> bytes:
        """This turn's request: the conversation so far and the tools, and ``extra`` fields (the MCP way's ``mcp``)."""
        request = {"protocol": PROTOCOL, "trial": self._trial, "conversation": self._transcript.messages, "tools": self._tools}
        return json.dumps({**request, **extra}).encode()

    def _answer(self, body: bytes) -> AgentTurn:
        """The service's answer as its turn; one too large to read is a turn with a note."""
        if len(body) > MAX_ANSWER_BYTES:
            return self._transcript.note(f"the agent's answer is over {MAX_ANSWER_BYTES:,} bytes and was not read")
        return self._transcript.answer_json(body)
