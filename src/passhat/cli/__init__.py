"""The `passhat` command: parses, calls the library, prints. No evaluation logic lives here.

The click group `main` is defined here; each concern's commands live in one module and register on it:

    run.py      run, runs
    reports.py  report, gate, traffic, compare
    certify.py  certify, verify (signed acceptance records)
    importing.py  import (another harness's results as a run)
    tasks.py    tasks (and tasks show), domains, check
    guard.py    audit verify, guard compare, guard ablate
    schema.py   schema report
    serve.py    serve (the web dashboard and operator inbox), serve mcp
    accounts.py accounts add, list, role, remove, reset-2fa, password (the web app's accounts; `users` is its old,
                hidden name)
    common.py   the consoles, the group that turns every failure into a message and exit code (0 and 1 are
                verdicts, 2 every error, 130 Ctrl-C), the parameter types, and helpers several commands share
"""

from __future__ import annotations

import click

from passhat.cli.common import CommandGroup


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="passhat")
def main() -> None:
    """passhat: will this agent do this job right every time a customer asks? (pass^k, not pass@1)"""


# Imported for their side effect: each module registers its commands on `main` (which must exist first).
from passhat.cli import (  # noqa: E402, F401
    accounts,
    attack,
    certify,
    export,
    guard,
    importing,
    reports,
    run,
    scaffold,
    schema,
    serve,
    tasks,
)

__all__ = ["main"]
