"""Sign-in (password, then a TOTP code; enrolment by QR code the first time), sign-out, one's own account, the
admin's account management and the audit trail page.

A password alone never makes a session that pages accept: it makes a session at the "password" stage, good for
a few minutes and for the code (or enrolment) pages only; the code replaces it with a new, signed-in session
(a new token, so a token seen before sign-in is worth nothing after it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote

import segno
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from passhat.errors import UserError
from passhat.serve.web import trail
from passhat.serve.web.accounts import Account, checked_role
from passhat.serve.web.security import (
    Operator,
    accounts,
    audit,
    audited,
    clear_session_cookie,
    current_session,
    error_page,
    render,
    requires,
    set_session_cookie,
    signed_in_operator,
)

AUDIT_PER_PAGE = 50
MAX_NEXT = 2000


def field(form: FormData, name: str) -> str:
    """A text field of a form; "" when missing (or a file where text belongs)."""
    value = form.get(name)
    return value if isinstance(value, str) else ""


def safe_next(value: str | None) -> str:
    """Where to go after sign-in: a path of this site only (never another site, which ``//host`` would be)."""
    if not value or len(value) > MAX_NEXT or not value.startswith("/") or value.startswith(("//", "/\\")):
        return "/"
    return value if value.isprintable() else "/"


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def password_stage(request: Request) -> Account | None:
    """The account of a session that has passed the password but not yet the code."""
    session = current_session(request)
    return session.account if session is not None and session.stage == "password" else None


# sign-in


async def login_page(request: Request) -> Response:
    next_url = safe_next(request.query_params.get("next"))
    if signed_in_operator(request) is not None:
        return redirect(next_url)
    return render(request, "account_login.html", {"next": next_url, "error": None, "name": ""})


async def login(request: Request) -> Response:
    form = await request.form()
    name, password, next_url = field(form, "name").strip(), field(form, "password"), safe_next(field(form, "next"))
    attempt = accounts(request).reserve_attempt(name, client_address(request))
    if attempt is None:
        return await throttled(request, name)
    account = await run_in_threadpool(accounts(request).check_password, name, password)
    if account is None:
        await failed(request, name, "password")
        context = {"next": next_url, "error": "Wrong name or password (or the account is disabled).", "name": name}
        return render(request, "account_login.html", context, 401)
    accounts(request).attempt_succeeded(attempt)
    if old := request.cookies.get("passhat_session"):
        accounts(request).end_session(old)
    step = "/login/totp" if account.enrolled else "/enrol"
    response = redirect(f"{step}?next={quote(next_url, safe='/')}")
    set_session_cookie(request, response, accounts(request).start_session(account.name, "password"))
    return response


async def throttled(request: Request, name: str) -> Response:
    """The 429 page of an attempt the throttle refused: too many sign-ins failed lately for ``name`` or from this
    address (audited)."""
    now = accounts(request).clock()
    until = accounts(request).refused_until(name, client_address(request)) or now  # the window may just have ended
    await audit(request, "sign-in refused (throttled)", name=name[:64], address=client_address(request))
    when = datetime.fromtimestamp(until, UTC).strftime("%H:%M:%S UTC")
    message = f"Too many failed sign-ins for this account or from this address. Try again after {when}."
    return error_page(request, 429, message, {"Retry-After": str(max(1, int(until - now)))})


async def failed(request: Request, name: str, factor: str) -> None:
    """Audit a failed factor; its reserved attempt stays counted as a failure."""
    await audit(request, "sign-in failed", name=name[:64], factor=factor, address=client_address(request))


async def totp_page(request: Request) -> Response:
    account = password_stage(request)
    if account is None:
        return redirect("/login")
    if not account.enrolled:
        return redirect("/enrol")
    return render(request, "account_totp.html", {"next": safe_next(request.query_params.get("next")), "error": None})


async def totp(request: Request) -> Response:
    return await second_factor(request, "account_totp.html", enrolling=False)


async def enrol_page(request: Request) -> Response:
    account = password_stage(request)
    if account is None:
        return redirect("/login")
    if account.enrolled:
        return redirect("/login/totp")
    return render(request, "account_enrol.html", enrolment(account) | {"next": safe_next(request.query_params.get("next"))})


async def enrol(request: Request) -> Response:
    return await second_factor(request, "account_enrol.html", enrolling=True)


def enrolment(account: Account) -> dict[str, object]:
    """What the enrolment pages show: the QR code (inline SVG) of the account's TOTP URI, and its secret as text."""
    qr = segno.make(account.enrolment_uri, error="m").svg_inline(scale=4, dark="#1d232b", light="#ffffff")
    return {"account": account, "qr_svg": qr, "secret": account.totp_secret, "error": None}


async def second_factor(request: Request, template: str, enrolling: bool) -> Response:
    """Check the code of a session at the password stage; on success, enrol if ``enrolling`` and start the
    signed-in session."""
    account = password_stage(request)
    if account is None or account.enrolled == enrolling:
        return redirect("/login")
    form = await request.form()
    next_url = safe_next(field(form, "next"))
    attempt = accounts(request).reserve_attempt(account.name, client_address(request))
    if attempt is None:
        return await throttled(request, account.name)
    if not accounts(request).check_code(account.name, field(form, "code").strip()):
        await failed(request, account.name, "code")
        context = (enrolment(account) if enrolling else {}) | {"next": next_url, "error": "Wrong or already used code."}
        return render(request, template, context, 401)
    if enrolling:
        accounts(request).confirm_enrolment(account.name)
    accounts(request).attempt_succeeded(attempt)
    accounts(request).end_session(request.cookies["passhat_session"])
    response = redirect(next_url)
    set_session_cookie(request, response, accounts(request).start_session(account.name, "signed_in"))
    request.state.operator = Operator(account.name, account.role)
    await audit(request, "signed in", enrolled_now=enrolling, address=client_address(request))
    return response


@requires("viewer")
async def logout(request: Request) -> Response:
    accounts(request).end_session(request.cookies["passhat_session"])
    await audit(request, "signed out")
    response = redirect("/login")
    clear_session_cookie(request, response)
    return response


# one's own account


@requires("viewer")
async def account_page(request: Request) -> Response:
    return render(request, "account_settings.html", {"error": None, "done": False})


@requires("viewer")
async def change_password(request: Request) -> Response:
    """A new password ends every session of the account, this one too: the response carries a fresh one."""
    form = await request.form()
    name, new = request.state.operator.name, field(form, "new_password")
    if await run_in_threadpool(accounts(request).check_password, name, field(form, "current_password")) is None:
        return render(request, "account_settings.html", {"error": "The current password is wrong.", "done": False}, 400)
    if new != field(form, "repeat_password"):
        return render(request, "account_settings.html", {"error": "The two new passwords differ.", "done": False}, 400)

    def change() -> None:
        with audited(request, "password changed", name=name):
            accounts(request).set_password(name, new)

    try:
        await run_in_threadpool(change)
    except UserError as exc:
        return render(request, "account_settings.html", {"error": str(exc), "done": False}, 400)
    response = render(request, "account_settings.html", {"error": None, "done": True})
    set_session_cookie(request, response, accounts(request).start_session(name, "signed_in"))
    return response


# the admin's account management


def users_page(request: Request, error: str | None = None, status_code: int = 200) -> Response:
    return render(request, "account_users.html", {"accounts": accounts(request).all(), "error": error}, status_code)


@requires("admin")
async def users_elsewhere(request: Request) -> Response:
    """/users, where people look first (the CLI command is `passhat accounts`): the accounts page is /admin/users."""
    return RedirectResponse("/admin/users", status_code=308)


@requires("admin")
async def users(request: Request) -> Response:
    return users_page(request)


@requires("admin")
async def add_user(request: Request) -> Response:
    """Add an account and show its enrolment QR code, this once (its owner sees it again at first sign-in)."""
    form = await request.form()

    def add() -> Account:
        name, role = field(form, "name").strip(), checked_role(field(form, "role"), "role")
        with audited(request, "account added", name=name, role=role):
            return accounts(request).add(name, role, field(form, "password"))

    try:
        account = await run_in_threadpool(add)
    except UserError as exc:
        return users_page(request, str(exc), 400)
    return render(request, "account_user_added.html", enrolment(account))


def others_account(request: Request) -> str:
    """The account named in the address, which must not be the admin's own: an admin cannot lock themself out."""
    name = request.path_params["name"]
    if name == request.state.operator.name:
        raise UserError("you cannot change your own role, disable your own account or reset your own two-factor here.")
    accounts(request).require(name)
    return name


async def account_change(request: Request, action: str, change: str) -> Response:
    form = await request.form()

    def made() -> None:
        name = others_account(request)
        role = checked_role(field(form, "role"), "role") if change == "role" else None
        with audited(request, action, name=name, **({"role": role} if role else {})):
            if role:
                accounts(request).set_role(name, role)
            elif change == "reset-2fa":
                accounts(request).reset_2fa(name)
            else:
                accounts(request).set_disabled(name, change == "disable")

    try:
        await run_in_threadpool(made)
    except UserError as exc:
        return users_page(request, str(exc), 400)
    return redirect("/admin/users")


@requires("admin")
async def set_role(request: Request) -> Response:
    return await account_change(request, "account role changed", "role")


@requires("admin")
async def disable(request: Request) -> Response:
    return await account_change(request, "account disabled", "disable")


@requires("admin")
async def enable(request: Request) -> Response:
    return await account_change(request, "account enabled", "enable")


@requires("admin")
async def reset_2fa(request: Request) -> Response:
    return await account_change(request, "account two-factor reset", "reset-2fa")


# the audit trail


@requires("viewer")
async def audit_page(request: Request) -> Response:
    raw = request.query_params.get("page", "1")
    page = int(raw) if raw.isascii() and raw.isdigit() and 0 < len(raw) < 10 and int(raw) > 0 else 1
    entries = await run_in_threadpool(trail.read_page, request.app.state.out, page, AUDIT_PER_PAGE)
    verification = await run_in_threadpool(trail.verify, request.app.state.out, request.app.state.audit_key)
    pages = max(1, -(-entries.total // AUDIT_PER_PAGE))
    rows = [(entry, trail.entry_details(entry)) for entry in entries.entries]
    context = {"rows": rows, "total": entries.total, "page": page, "pages": pages, "verification": verification}
    return render(request, "account_audit.html", context)


ROUTES = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/login/totp", totp_page, methods=["GET"]),
    Route("/login/totp", totp, methods=["POST"]),
    Route("/enrol", enrol_page, methods=["GET"]),
    Route("/enrol", enrol, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/account", account_page, methods=["GET"]),
    Route("/account/password", change_password, methods=["POST"]),
    Route("/users", users_elsewhere, methods=["GET"]),
    Route("/admin/users", users, methods=["GET"]),
    Route("/admin/users", add_user, methods=["POST"]),
    Route("/admin/users/{name}/role", set_role, methods=["POST"]),
    Route("/admin/users/{name}/disable", disable, methods=["POST"]),
    Route("/admin/users/{name}/enable", enable, methods=["POST"]),
    Route("/admin/users/{name}/reset-2fa", reset_2fa, methods=["POST"]),
    Route("/audit", audit_page, methods=["GET"]),
]
