"""The web app of `passhat serve`: every page module's routes, the static files, the security middleware and
the error pages, over the stores of one runs folder."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from passhat.errors import UserError
from passhat.guard.audit import signing_key
from passhat.run.human import HumanRuns
from passhat.serve.web import pages_account, pages_inbox, pages_runs, pages_tester, trail
from passhat.serve.web.accounts import Accounts
from passhat.serve.web.security import CsrfMiddleware, SecurityHeadersMiddleware, add_security_headers, error_page

HERE = Path(__file__).parent

ERROR_MESSAGES = {
    404: "There is no page at this address.",
    405: "This page does not take that kind of request.",
}


def create_app(
    out: Path,
    *,
    secure_cookies: bool = False,
    clock: Callable[[], float] = time.time,
    agent: str | None = None,
    idle_timeout: float = 900.0,
) -> Starlette:
    """The app serving the runs folder ``out``. ``secure_cookies``: mark cookies Secure (behind HTTPS only);
    ``clock``: the time sessions and codes are judged by (tests move it); ``agent``: the agent people test on the
    tester page, each conversation ending as abandoned after ``idle_timeout`` seconds without the person's answer
    (None: no tester page)."""
    accounts = Accounts(out, clock)
    csrf_key = accounts.server_secret()
    audit_key = signing_key()
    record = functools.partial(trail.append, Path(out), audit_key)
    human = HumanRuns(Path(out), agent, idle_timeout, record) if agent else None
    app = Starlette(
        routes=[
            *pages_account.ROUTES,
            *pages_runs.ROUTES,
            *pages_inbox.ROUTES,
            *pages_tester.ROUTES,
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        middleware=[Middleware(SecurityHeadersMiddleware), Middleware(CsrfMiddleware, key=csrf_key)],
        exception_handlers={HTTPException: _http_error, UserError: _user_error, Exception: _server_error},
        lifespan=functools.partial(_lifespan, human),
    )
    app.state.out = Path(out)
    app.state.accounts = accounts
    app.state.csrf_key = csrf_key
    app.state.secure_cookies = secure_cookies
    app.state.audit_key = audit_key
    app.state.human = human
    app.state.templates = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
    return app


@contextlib.asynccontextmanager
async def _lifespan(human: HumanRuns | None, app: Starlette) -> AsyncIterator[None]:
    """The server's life: at its end, the human runs' stores are closed (and their locks released)."""
    try:
        yield
    finally:
        if human is not None:
            await human.aclose()


def web_server(app: Starlette, trusted_proxies: Sequence[str] = ()) -> uvicorn.Server:
    """The uvicorn server of ``app``. It reads no forwarding header (X-Forwarded-For, -Proto) unless the request
    comes from one of ``trusted_proxies`` (addresses or CIDR networks): uvicorn's own default trusts any local
    client, which could then forge the address the sign-in throttle counts and the audit trail records."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        server_header=False,
        proxy_headers=bool(trusted_proxies),
        forwarded_allow_ips=list(trusted_proxies),
    )
    return uvicorn.Server(config)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = ERROR_MESSAGES.get(exc.status_code) or str(exc.detail)
    return error_page(request, exc.status_code, message, dict(exc.headers or {}))


async def _user_error(request: Request, exc: Exception) -> Response:
    """A request the app cannot act on (a bad value in a form or the address): 400 with the reason."""
    return error_page(request, 400, str(exc))


async def _server_error(request: Request, exc: Exception) -> Response:
    """A bug: shown to the client as a page without its traceback. Starlette raises the exception again after
    this response, so the server (uvicorn) logs it with its traceback to stderr. The response leaves the app
    outside the middleware, so it gets the security headers here."""
    response = error_page(request, 500, "Something went wrong on the server; it has been logged.")
    add_security_headers(response.headers)
    return response
