"""Test support for the web app: an app over a runs folder, a client signed in through the real sign-in
routes (password, then a TOTP code computed from the stored secret, enrolling the account the first time), and
`passhat serve` as a process of its own, for the browser tests."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.testclient import TestClient

from passhat.agents.mcp_wire import listening_socket
from passhat.serve.web.accounts import Accounts, Role
from passhat.serve.web.app import create_app, web_server

PASSWORD = "correct horse battery staple"
CSRF_META = re.compile(r'<meta name="csrf-token" content="([0-9a-f]+)">')


def make_app(out: Path) -> Starlette:
    return create_app(out)


def code_for(accounts: Accounts, name: str) -> str:
    """A code the account accepts now: the current step's, or the next one's when the current one was used
    (a code signs in once; one step ahead is within the window)."""
    account = accounts.require(name)
    now = accounts.clock()
    with accounts._db() as db:
        last = db.execute("SELECT last_totp_step FROM accounts WHERE name = ?", (name,)).fetchone()[0]
    offset = 1 if last >= account.totp.timecode(now) else 0
    return account.totp.at(now, counter_offset=offset)


def sign_in(client: httpx.Client, name: str, password: str = PASSWORD, accounts: Accounts | None = None) -> None:
    """Sign ``client`` in as ``name`` through /login and /login/totp (or /enrol the first time); ``accounts``: the
    server's, needed when ``client`` talks to a served app (a TestClient knows its app's)."""
    accounts = accounts or client.app.state.accounts  # type: ignore[attr-defined]
    page = client.get("/login")
    response = client.post(
        "/login", data={"name": name, "password": password, "csrf_token": form_token(page.text)}, follow_redirects=False
    )
    assert response.status_code == 303, response.text
    second = client.get(response.headers["location"])
    step = "/enrol" if "/enrol" in response.headers["location"] else "/login/totp"
    done = client.post(
        step, data={"code": code_for(accounts, name), "csrf_token": form_token(second.text)}, follow_redirects=False
    )
    assert done.status_code == 303, done.text


def signed_in(app: Starlette, out: Path, role: Role, name: str | None = None) -> TestClient:
    """A client signed in as ``name`` (default: the role's name, e.g. "admin"), an account of ``role`` made
    first when there is none."""
    name = name or role
    accounts: Accounts = app.state.accounts
    if accounts.get(name) is None:
        accounts.add(name, role, PASSWORD)
    client = TestClient(app)
    sign_in(client, name)
    return client


def form_token(html: str) -> str:
    match = CSRF_META.search(html)
    assert match, "the page has no CSRF token"
    return match.group(1)


def csrf(client: TestClient) -> str:
    """A valid CSRF token for the client's session, read from a page as a browser would."""
    return form_token(client.get("/account").text)


@contextmanager
def served(app: Starlette, trusted_proxies: tuple[str, ...] = ()) -> Iterator[str]:
    """``app`` served on a free port of 127.0.0.1 in a thread, by the server `passhat serve` runs; yields its base
    URL. For what only a real server shows: concurrent requests (the TestClient sends one at a time), headers."""
    sock = listening_socket("127.0.0.1", 0)
    server = web_server(app, trusted_proxies)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def parallel_sign_ins(base: str, names: list[str], password: str) -> list[int]:
    """The statuses of one sign-in per name, each from its own browser (a form fetched first), all posted at
    the same moment."""
    clients = [httpx.Client(base_url=base, timeout=120) for _ in names]
    forms = [client.get("/login") for client in clients]
    start = threading.Barrier(len(names))

    def post(client: httpx.Client, form: httpx.Response, name: str) -> int:
        start.wait()
        data = {"name": name, "password": password, "csrf_token": form_token(form.text)}
        return client.post("/login", data=data).status_code

    with ThreadPoolExecutor(len(names)) as pool:
        statuses = list(pool.map(post, clients, forms, names))
    for client in clients:
        client.close()
    return statuses


SERVER_START = 60.0  # seconds `passhat serve` may take to print its address on a loaded machine


@contextmanager
def serving(out: Path, log: Path, *flags: str) -> Iterator[str]:
    """`passhat serve --port 0 [flags]` over ``out`` while the block runs; yields its address as the command prints it."""
    with log.open("w") as stderr:
        command = [sys.executable, "-m", "passhat.cli", "serve", "--out", str(out), "--port", "0", *flags]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + SERVER_START
        while not (address := re.search(r" at (http://\S+/) ", log.read_text())):
            assert server.poll() is None and time.monotonic() < deadline, f"passhat serve did not start: {log.read_text()}"
            time.sleep(0.05)
        yield address[1]
    finally:
        server.terminate()
        server.wait(timeout=30)
