"""The web app of `passhat serve`: every page module's routes, the static files, the security middleware and
the error pages, over the stores of one runs folder."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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
from passhat.serve.web import pages_account, pages_inbox, pages_runs
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
) -> Starlette:
    """The app serving the runs folder ``out``. ``secure_cookies``: mark cookies Secure (behind HTTPS only);
    ``clock``: the time sessions and codes are judged by (tests move it)."""
    accounts = Accounts(out, clock)
    csrf_key = accounts.server_secret()
    app = Starlette(
        routes=[
            *pages_account.ROUTES,
            *pages_runs.ROUTES,
            *pages_inbox.ROUTES,
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        middleware=[Middleware(SecurityHeadersMiddleware), Middleware(CsrfMiddleware, key=csrf_key)],
        exception_handlers={HTTPException: _http_error, UserError: _user_error, Exception: _server_error},
    )
    app.state.out = Path(out)
    app.state.accounts = accounts
    app.state.csrf_key = csrf_key
    app.state.secure_cookies = secure_cookies
    app.state.audit_key = signing_key()
    app.state.templates = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
    return app


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
