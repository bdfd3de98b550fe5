"""`passhat serve`: long-running servers. `serve mcp` serves a domain's tools over MCP."""

from __future__ import annotations

import anyio
import click

from passhat.cli import main
from passhat.cli.common import PlainText, domain_options, err
from passhat.errors import UserError

HTTP_ONLY = ("host", "port")  # the options that only the http transport reads


@main.group()
def serve() -> None:
    """Long-running servers (`serve mcp`: a domain's tools over MCP)."""


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
) -> None:
    """Serve a domain's tools over MCP, each session on a fresh fork of its backend, until the client leaves (stdio)
    or Ctrl-C (http)."""
    # imported here, not with the CLI: the MCP SDK and its web stack take half a second every other command would pay
    from passhat.faults import parse_faults
    from passhat.guard.options import parse_guards
    from passhat.run.preflight import load_checked_domain
    from passhat.serve.mcp_server import McpDomainServer, endpoint, listening_socket

    given = [f"--{name}" for name in HTTP_ONLY if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if transport == "stdio" and given:
        raise UserError(f"{' and '.join(given)} apply to --transport http only; add --transport http, or drop them.")
    server = McpDomainServer(
        load_checked_domain(domain, tasks_dir), guards=parse_guards(guard), faults=parse_faults(faults), seed=seed
    )
    what = f"passhat: serving the tools of domain {server.domain.name} over MCP"
    if transport == "stdio":
        err.print(f"{what} on stdio", highlight=False, markup=False, soft_wrap=True)
        anyio.run(server.serve_stdio)
        return
    sock = listening_socket(host, port)
    err.print(f"{what} at {endpoint(sock)} (Ctrl-C stops)", highlight=False, markup=False, soft_wrap=True)
    anyio.run(server.serve_http, sock, host)
