"""What every page of the web app relies on: who is signed in (sessions), what they may do (roles), that a
form was sent by the app's own page (CSRF), the headers every response carries, and how a page is rendered and
an action audited.

CSRF tokens follow the synchronizer pattern without a table: a token is the HMAC, under a key kept in the
accounts file, of what the browser is bound by — its session (the stored id, so a new session means new
tokens), or, before sign-in, a random ``passhat_form`` cookie set with the first page. A forged cross-site
request carries the cookies but cannot read a page to learn the token. Middleware checks it on every unsafe
method of every route, before any endpoint runs.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from passhat.serve.web import trail
from passhat.serve.web.accounts import ROLES, Accounts, Role, Session, role_includes

__all__ = ["ROLES", "Operator", "Role", "audit", "csrf_token", "current_session", "render", "requires"]

SESSION_COOKIE = "passhat_session"
FORM_COOKIE = "passhat_form"  # binds the CSRF token of the sign-in forms, before there is a session
CSRF_FIELD, CSRF_HEADER = "csrf_token", "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_FORM_BYTES = 1 << 20
STATIC_PREFIX = "/static/"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Operator:
    """Who made the request: ``request.state.operator`` once ``requires`` let it through."""

    name: str
    role: Role


# sessions


def accounts(request: Request) -> Accounts:
    return request.app.state.accounts


def current_session(request: Request) -> Session | None:
    """The live session of the request's cookie (looked up once per request), at either stage."""
    if not hasattr(request.state, "session"):
        token = request.cookies.get(SESSION_COOKIE)
        request.state.session = accounts(request).session(token) if token else None
    return request.state.session


def set_session_cookie(request: Request, response: Response, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE, token, httponly=True, samesite="strict", secure=request.app.state.secure_cookies, path="/"
    )


def clear_session_cookie(request: Request, response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, httponly=True, samesite="strict", secure=request.app.state.secure_cookies, path="/")


def signed_in_operator(request: Request) -> Operator | None:
    """The operator of a fully signed-in session (password and code), or None."""
    session = current_session(request)
    if session is None or session.stage != "signed_in":
        return None
    return Operator(session.account.name, session.account.role)


def requires(role: Role) -> Callable[[Endpoint], Endpoint]:
    """Let a request reach the endpoint only from a signed-in account of ``role`` or above (read afresh on each
    request, so a role change or a disabled account counts at once). Without a session, GET and HEAD are sent to
    /login and come back after it; other methods get 401. The decorated endpoint's ``required_role`` says which
    role it needs (the security tests read it)."""

    def decorate(endpoint: Endpoint) -> Endpoint:
        @functools.wraps(endpoint)
        async def guarded(request: Request) -> Response:
            operator = signed_in_operator(request)
            if operator is None:
                if request.method in ("GET", "HEAD"):
                    wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                    return RedirectResponse(f"/login?next={quote(wanted, safe='')}", status_code=303)
                return error_page(request, 401, "Sign in first: this action needs a signed-in account.")
            request.state.operator = operator
            if not role_includes(operator.role, role):
                return error_page(
                    request, 403, f"This needs the {role} role (or above); your account {operator.name} is {operator.role}."
                )
            return await endpoint(request)

        guarded.required_role = role  # type: ignore[attr-defined]
        return guarded

    return decorate


def required_role(endpoint: object) -> Role | None:
    """The role an endpoint was decorated with by ``requires``; None for the public pages."""
    return getattr(endpoint, "required_role", None)


# CSRF


def _binding(cookies: dict[str, str], form_nonce: str | None = None) -> str | None:
    """What the request's CSRF token is tied to: its session cookie, else its sign-in form cookie."""
    if session := cookies.get(SESSION_COOKIE):
        return "session:" + hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()
    nonce = cookies.get(FORM_COOKIE) or form_nonce
    return "form:" + nonce if nonce else None


def _token_for(key: bytes, binding: str) -> str:
    return hmac.new(key, binding.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def csrf_token(request: Request) -> str:
    """The token the request's forms must send back; before sign-in it makes the form cookie that ``render``
    then sets."""
    binding = _binding(request.cookies, getattr(request.state, "new_form_nonce", None))
    if binding is None:
        request.state.new_form_nonce = secrets.token_urlsafe(32)
        binding = _binding(request.cookies, request.state.new_form_nonce)
    assert binding is not None
    return _token_for(request.app.state.csrf_key, binding)


class CsrfMiddleware:
    """Refuses (403) every unsafe request whose ``csrf_token`` form field or X-CSRF-Token header is not the token
    of its cookies. The body is read here (at most MAX_FORM_BYTES) and handed on unchanged."""

    def __init__(self, app: ASGIApp, key: bytes):
        self.app, self.key = app, key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        body = await _read_body(receive)
        if body is None:
            await error_page(request, 413, f"A request body may hold at most {MAX_FORM_BYTES} bytes.")(scope, receive, send)
            return
        replay = _replaying(body, receive)
        sent = request.headers.get(CSRF_HEADER) or await _form_token(Request(scope, _replaying(body, receive)))
        binding = _binding(request.cookies)
        if not sent or binding is None or not hmac.compare_digest(sent.encode(), _token_for(self.key, binding).encode()):
            await error_page(
                request, 403, "This form has expired or did not come from this site: reload the page and try again."
            )(scope, receive, send)
            return
        await self.app(scope, replay, send)


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None when it is larger than MAX_FORM_BYTES."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > MAX_FORM_BYTES:
            return None
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A receive that gives ``body`` once, then whatever the client sends next (its disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _form_token(request: Request) -> str | None:
    if Headers(scope=request.scope).get("content-type", "").split(";")[0].strip() not in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        return None
    try:
        async with request.form() as form:
            value = form.get(CSRF_FIELD)
    except (HTTPException, ValueError, UnicodeDecodeError):  # a malformed body carries no token
        return None
    return value if isinstance(value, str) else None


# headers


class SecurityHeadersMiddleware:
    """Adds SECURITY_HEADERS to every response, and Cache-Control: no-store to every one but the static files
    (pages show what only a signed-in account may see)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith(STATIC_PREFIX)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                add_security_headers(MutableHeaders(scope=message), static)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def add_security_headers(headers: MutableHeaders, static: bool = False) -> None:
    for name, value in SECURITY_HEADERS.items():
        headers[name] = value
    if not static:
        headers["Cache-Control"] = "no-store"


# rendering and auditing


def render(request: Request, template: str, context: dict[str, Any] | None = None, status_code: int = 200) -> HTMLResponse:
    """``template`` rendered with ``operator``, ``csrf_token`` and ``request`` added to ``context``."""
    token = csrf_token(request)
    operator = getattr(request.state, "operator", None)
    html = request.app.state.templates.get_template(template).render(
        {**(context or {}), "request": request, "operator": operator, "csrf_token": token, "roles": ROLES}
    )
    response = HTMLResponse(html, status_code=status_code)
    if nonce := getattr(request.state, "new_form_nonce", None):
        response.set_cookie(
            FORM_COOKIE, nonce, httponly=True, samesite="strict", secure=request.app.state.secure_cookies, path="/"
        )
    return response


def error_page(request: Request, status_code: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """The app's page for an error: rendered with the navigation of whoever is signed in, or plain text when
    even that fails (a broken template must not hide the error it reports)."""
    try:
        if not hasattr(request.state, "operator"):
            request.state.operator = signed_in_operator(request)
        response: Response = render(request, "error.html", {"status_code": status_code, "message": message}, status_code)
    except Exception:  # the last resort of the error handler itself
        response = PlainTextResponse(f"{status_code}: {message}", status_code=status_code)
    response.headers.update(headers or {})
    return response


async def audit(request: Request, action: str, **details: Any) -> None:
    """Append ``{"action", "by", "at", **details}`` to the runs folder's audit trail; ``by`` is the signed-in
    operator's name, or "anonymous" (a failed sign-in names the account tried in ``details``). In a worker thread:
    the trail's lock may be held by a request waiting for the event loop (a tester's message, handed to its trial)."""

    def append() -> None:
        with audited(request, action, **details):
            pass

    await run_in_threadpool(append)


def audited(request: Request, action: str, **details: Any) -> AbstractContextManager[dict[str, Any]]:
    """Make, inside, a change the trail records as audit() does: refused (UserError) before it is made when the
    trail cannot be continued, recorded once it is made (``passhat.serve.web.trail.recorded``). Blocking: call it
    from a worker thread."""
    operator = getattr(request.state, "operator", None)
    by = operator.name if operator is not None else "anonymous"
    return trail.recorded(request.app.state.out, request.app.state.audit_key, action, by, **details)
