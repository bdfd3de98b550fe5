"""`passhat serve`: long-running servers. `serve` alone serves the web dashboard of a runs folder and its
operator inbox; `serve mcp` serves a domain's tools over MCP."""

from __future__ import annotations

import contextlib
import ipaddress
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import anyio
import click

from passhat.cli import main
from passhat.cli.common import FilePath, PlainText, domain_options, err, folder_problem, operator_options, out_option
from passhat.errors import UserError

if TYPE_CHECKING:
    from passhat.guard.inbox import InboxStore

HTTP_ONLY = ("host", "port", "session_idle_timeout", "max_sessions")  # the options only the http transport reads
INBOX_ONLY = ("out", "operator_timeout")  # the options that only the inbox operator reads


@main.group(invoke_without_command=True)
@out_option
@click.option("--host", default="127.0.0.1", show_default=True, type=PlainText(), help="Address the web app listens on.")
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port the web app listens on; 0 picks a free one.",
)
@click.option(
    "--secure-cookies",
    is_flag=True,
    help="Mark the session cookies Secure: browsers then send them over HTTPS only (behind a TLS proxy).",
)
@click.option(
    "--trusted-proxy",
    "trusted_proxies",
    multiple=True,
    type=PlainText(),
    help="Address (or CIDR network) of a reverse proxy whose X-Forwarded-For/-Proto headers are believed; repeatable. "
    "Without it no forwarding header is read.",
)
@click.option(
    "--agent",
    default=None,
    help="Agent people test on the tester page, as `passhat run --agent` takes it (e.g. reference:perfect); "
    "without it there is no tester page.",
)
@click.option(
    "--idle-timeout",
    default=900.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True, max=10**7),
    metavar="SECONDS",
    help="(with --agent) A tester's conversation left this long without the person's answer is abandoned: stored, not scored.",
)
@click.pass_context
def serve(
    ctx: click.Context, out: Path, host: str, port: int, secure_cookies: bool, trusted_proxies: tuple[str, ...],
    agent: str | None, idle_timeout: float,
) -> None:  # fmt: skip
    """Serve the web dashboard of the runs in --out, the operator inbox and, with --agent, the tester page (sign in
    with an account made by `passhat accounts add`) until Ctrl-C; `serve mcp` serves a domain's tools over MCP instead."""
    if ctx.invoked_subcommand is not None:
        return
    # imported here: the web stack is paid for by this command only
    from passhat.agents.mcp_wire import listening_socket
    from passhat.serve.web.app import create_app, web_server

    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is not a folder; give the folder that holds the run folders (default: runs).")
    proxies = [checked_proxy(address) for address in trusted_proxies]
    if agent is None and ctx.get_parameter_source("idle_timeout") is click.core.ParameterSource.COMMANDLINE:
        raise UserError("--idle-timeout applies to the tester page, which --agent turns on: add --agent, or drop it.")
    app = create_app(out, secure_cookies=secure_cookies, agent=agent, idle_timeout=idle_timeout)  # checks --agent
    sock = listening_socket(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    url = f"http://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{bound_port}/"
    err.print(f"passhat: serving the runs in {out} at {url} (Ctrl-C stops)", highlight=False, markup=False, soft_wrap=True)
    web_server(app, proxies).run(sockets=[sock])


def checked_proxy(address: str) -> str:
    """An address or network (CIDR) of a proxy to trust, as uvicorn reads it; a UserError naming the flag else."""
    try:
        return str(ipaddress.ip_network(address, strict=False))
    except ValueError:
        raise UserError(
            f"--trusted-proxy {address[:64]!r} is not an IP address or network (such as 127.0.0.1 or 10.0.0.0/8): "
            "give the address your reverse proxy connects from."
        ) from None


@serve.command("mcp")
@domain_options("whose tools to serve")
@click.option(
    "--transport",
    default="stdio",
    show_default=True,
    type=click.Choice(("stdio", "http")),
    help="stdio: one session on this process's stdin/stdout; http: streamable HTTP, one session per MCP session.",
)
@click.option("--host", default="127.0.0.1", show_default=True, type=PlainText(), help="Address to listen on (http).")
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on (http); 0 picks a free one."
)
@click.option(
    "--guard",
    default="off",
    show_default=True,
    help="Guards: off, all, or a comma list of idempotency,confirmation,policy,payments,human_gate,audit.",
)
@click.option("--faults", default="", help="Fault plan: class=rate,... (e.g. timeout=0.1,lost_response=0.2) or a YAML file.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the faults; session n's derives from it and n.")
@click.option(
    "--session-idle-timeout",
    default=1800.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True, max=10**9),
    metavar="SECONDS",
    help="(http) End a session that lists or calls no tool for this long, freeing its backend; its id then answers 404.",
)
@click.option(
    "--max-sessions",
    default=200,
    show_default=True,
    type=click.IntRange(min=1, max=10**6),
    help="(http) Sessions open at once (each holds a backend); one more initialize is answered 503 until one ends.",
)
@operator_options(
    "at each session's end",
    "their decisions carried out at the session's next call and awaited at its end",
    "a session's",
    "--guard human_gate",
)
@click.option(
    "--out",
    default="runs",
    show_default=True,
    type=FilePath(file_okay=False, path_type=Path),
    help="With --operator inbox: the runs folder whose inbox the tickets are filed into.",
)
@click.pass_context
def mcp(
    ctx: click.Context,
    domain: str,
    tasks_dir: str | None,
    transport: str,
    host: str,
    port: int,
    guard: str,
    faults: str,
    seed: int,
    session_idle_timeout: float,
    max_sessions: int,
    operator: str,
    out: Path,
    operator_timeout: float,
) -> None:
    """Serve a domain's tools over MCP, each session on a fresh fork of its backend, until the client leaves (stdio)
    or Ctrl-C (http)."""
    # imported here, not with the CLI: the MCP SDK and its web stack take half a second every other command would pay
    from passhat.agents.mcp_wire import listening_socket
    from passhat.faults import parse_faults
    from passhat.guard.inbox import Inbox
    from passhat.guard.options import parse_guards
    from passhat.run.preflight import load_checked_domain
    from passhat.serve.mcp_server import McpDomainServer, endpoint

    def given(names: tuple[str, ...]) -> list[str]:
        typed = click.core.ParameterSource.COMMANDLINE
        return [f"--{name.replace('_', '-')}" for name in names if ctx.get_parameter_source(name) is typed]

    if transport == "stdio" and given(HTTP_ONLY):
        raise UserError(f"{' and '.join(given(HTTP_ONLY))} apply to --transport http only; add --transport http, or drop them.")
    if operator != "inbox" and given(INBOX_ONLY):
        raise UserError(f"{' and '.join(given(INBOX_ONLY))} apply to --operator inbox only; add --operator inbox, or drop them.")
    guards = parse_guards(guard)
    if operator == "inbox" and "human_gate" not in guards:
        raise UserError(
            "--operator inbox decides the human gate's tickets, but --guard does not name human_gate: add --guard "
            "human_gate (or all), or drop --operator."
        )
    loaded = load_checked_domain(domain, tasks_dir)
    sock = listening_socket(host, port) if transport == "http" else None
    with contextlib.ExitStack() as stack:
        inbox = None
        if operator == "inbox":
            store = stack.enter_context(_inbox_store(out))
            inbox = Inbox(store, "mcp", f"mcp:{urlsplit(endpoint(sock)).netloc if sock else 'stdio'}", operator_timeout)
        server = McpDomainServer(
            loaded,
            guards=guards,
            faults=parse_faults(faults),
            seed=seed,
            inbox=inbox,
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions,
        )
        what = f"passhat: serving the tools of domain {loaded.name} over MCP" + (f", tickets to {out}" if inbox else "")
        if sock is None:
            err.print(f"{what} on stdio", highlight=False, markup=False, soft_wrap=True)
            anyio.run(server.serve_stdio)
            return
        err.print(f"{what} at {endpoint(sock)} (Ctrl-C stops)", highlight=False, markup=False, soft_wrap=True)
        anyio.run(server.serve_http, sock, host)


def _inbox_store(out: Path) -> InboxStore:
    """The inbox of --out, opened (created when new); a folder that cannot hold it is a UserError naming the flag."""
    from passhat.guard.inbox import InboxStore

    problem = folder_problem(out)
    if problem:
        raise UserError(f"--out {out}: {problem}.")
    try:
        return InboxStore.open(out)
    except (OSError, sqlite3.Error) as exc:
        raise UserError(f"--out {out}: cannot open its inbox ({exc}); choose another --out.") from None
