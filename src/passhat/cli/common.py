"""What several `passhat` commands share: the consoles, the `friendly` error wrapper, the --out option,
finding a run's folder, the --gate checks, and a domain's tags and gated tasks for the reports."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from passhat.domains import load_domain
from passhat.errors import UserError
from passhat.metrics.gate import Gate, parse_gate
from passhat.report import print_report, write_json

# Logs and CI output are read later and wider than a terminal: do not wrap tables at 80 columns there.
console = Console(width=None if sys.stdout.isatty() else 130)
err = Console(stderr=True)

out_option = click.option(
    "--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path),
    help="Folder that holds run folders.",
)


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a UserError into a one-paragraph message and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except UserError as exc:
            err.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
            sys.exit(2)

    return wrapper


def checked_id(run_id: str, flag: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", run_id):
        raise UserError(f"{run_id!r} is not a run id ({flag}): use letters, digits, '.', '_' and '-' only.")
    return run_id


def existing_run_dir(out: Path, run_id: str, flag: str) -> Path:
    folder = out / checked_id(run_id, flag)
    if not folder.is_dir():
        raise UserError(f"there is no run {run_id!r} in {out} ({flag}); `passhat runs --out {out}` lists the runs.")
    return folder


def run_gate(spec: str | None, early_stop: bool) -> Gate | None:
    if early_stop and not spec:
        raise UserError("--early-stop needs a gate to stop against: add --gate \"k=8,min=0.9\".")
    if spec is None:
        return None
    try:
        return parse_gate(spec)
    except ValueError as exc:
        raise UserError(f"--gate {spec!r} is not a gate: {exc}.") from None


def check_gate(gate: Gate | None, config: dict[str, Any], flag: str) -> None:
    """A gate the run cannot answer is a user error before any trial runs."""
    if gate is None:
        return
    if gate.k > config["trials"]:
        raise UserError(f"the gate's k = {gate.k} ({flag}) exceeds the run's {config['trials']} trials per scenario; "
                        f"pass^k needs k <= n: lower k or run with --trials {gate.k} or more.")
    if gate.persona and gate.persona not in config["personas"]:
        raise UserError(f"the gate's persona {gate.persona!r} ({flag}) is not among the run's personas "
                        f"({', '.join(config['personas'])}).")


def tags(domain_name: str) -> dict[str, list[str]]:
    return {t.id: t.tags for t in load_domain(domain_name).tasks.values()}


def gated_tasks(domain_name: str) -> set[str]:
    """The tasks that declare a human gate of their own (``guards:`` in the task file)."""
    return {t.id for t in load_domain(domain_name).tasks.values() if t.guards}


def print_report_and_json(report: dict[str, Any], json_path: Path | None) -> None:
    print_report(report, console)
    if json_path:
        write_json(report, json_path)
        err.print(f"JSON report written to {json_path}")
