"""Every domain gets the whole engine: a run under every fault class and every guard judges all its trials,
the MCP server serves its tools, and neither faults, guards nor servers hold a line of code for any one domain.

Parametrized over the built-in domains and the library test domain (a folder), so a domain added to the
registry is held to this without a test of its own."""

from __future__ import annotations

import ast
import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

import passhat
from passhat.cli import main
from passhat.domains import BUILT_IN, load_domain
from passhat.env import tool_registry
from passhat.faults import FAULT_CLASSES
from passhat.serve import McpDomainServer, listening_socket
from passhat.serve.mcp_server import endpoint

LIBRARY = str(Path(__file__).parent / "domains" / "library")
DOMAINS = [*BUILT_IN, LIBRARY]
ENGINE_PARTS = ("faults", "guard", "serve")
EVERY_FAULT = ",".join(f"{name}=0.05" for name in FAULT_CLASSES)


def _short(domain: str) -> str:
    return Path(domain).name


@pytest.mark.parametrize("domain", DOMAINS, ids=_short)
def test_a_run_under_every_fault_class_and_every_guard_judges_every_trial(domain: str, tmp_path: Path) -> None:
    tasks = load_domain(domain).tasks
    report_path = tmp_path / "report.json"
    args = ["run", "--domain", domain, "--agent", "reference:flaky", "--personas", "baseline,incoherent", "--trials", "1"]
    args += ["--faults", EVERY_FAULT, "--guard", "all", "--workers", "1", "--out", str(tmp_path), "--json", str(report_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output  # a verdict, not an error
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["stored_trials"] == 2 * len(tasks)
    assert report["metrics"]["infra_errors"] == 0, report.get("infra_error_example")
    assert report["metrics"]["user_simulator_errors"] == 0


@pytest.mark.parametrize("domain", DOMAINS, ids=_short)
def test_the_mcp_server_serves_every_tool_of_the_domain(domain: str) -> None:
    loaded = load_domain(domain)
    expected = set(tool_registry(loaded))

    async def session(url: str) -> set[str]:
        async with Client(url) as client:
            return {t.name for t in (await client.list_tools()).tools}

    with _serving(loaded) as url:
        assert anyio.run(session, url) == expected


def test_faults_guards_and_servers_import_no_domain() -> None:
    """What they know of a domain comes through the contract (passhat.domains.model and friends), never a
    domain's own package."""
    package = Path(passhat.__file__).parent
    offences = [
        f"{path.relative_to(package)} imports {name}"
        for part in ENGINE_PARTS
        for path in sorted((package / part).rglob("*.py"))
        for name in _imports(path)
        if any(name == f"passhat.domains.{d}" or name.startswith(f"passhat.domains.{d}.") for d in BUILT_IN)
    ]
    assert not offences


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return found


@contextlib.contextmanager
def _serving(domain: passhat.domains.model.Domain) -> Iterator[str]:
    server = McpDomainServer(domain)
    sock = listening_socket("127.0.0.1", 0)
    thread = threading.Thread(target=anyio.run, args=(server.serve_http, sock))
    thread.start()
    try:
        yield endpoint(sock)
    finally:
        server.stop()
        thread.join()
