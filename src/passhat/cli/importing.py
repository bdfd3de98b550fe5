"""`passhat import`: another harness's stored results as a passhat run, for every command that reads runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from passhat.cli import main
from passhat.cli.common import DEFAULT_OUT, FilePath, checked_id, err, out_option, shown
from passhat.errors import UserError

if TYPE_CHECKING:  # the importers load pydantic models and inspect-ai: not for `--help`
    from passhat.importers.common import Imported

FORMATS = ("jsonl", "tau2", "inspect")


@main.command("import")
@click.argument("source", type=FilePath(exists=True, path_type=Path))
@click.option(
    "--format",
    "source_format",
    required=True,
    type=click.Choice(FORMATS),
    help="jsonl: passhat's JSONL of {task, trial, reward, ...} rows; tau2: a τ²-bench results.json or `tau2 run "
    "--save-to` folder; inspect: an Inspect AI eval log (.eval or .json).",
)
@click.option("--run-id", required=True, help="Name of the new run's folder.")
@click.option("--score", "score", metavar="NAME", help="inspect: the score read as the reward (default: the log's only one).")
@out_option
def import_command(source: Path, source_format: str, run_id: str, score: str | None, out: Path) -> None:
    """Import SOURCE as a stored run: report, compare, gate, traffic and export then read it like any run."""
    from passhat.importers.common import write_run
    from passhat.report.numbers import counted

    checked_id(run_id, "--run-id")
    if score is not None and source_format != "inspect":
        raise UserError(f"--score {shown(score)} chooses among an Inspect log's scores; --format {source_format} has one reward.")
    imported = _read(source, source_format, score)
    folder = write_run(out, run_id, imported)
    infra = sum(t.infra_error is not None for t in imported.trials)
    scenarios = len(imported.config.imported.plan) if imported.config.imported else 0
    where = "" if out == DEFAULT_OUT else f" --out {out}"
    err.print(
        f"imported {counted(len(imported.trials), 'trial')} of {counted(scenarios, 'scenario')} "
        f"({infra} infra errors, counted apart) from {source} as run {run_id} → {folder}; "
        f"`passhat report {run_id}{where}` reads it.",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def _read(source: Path, source_format: str, score: str | None) -> Imported:
    """The importer of the format, run on the source."""
    if source_format == "jsonl":
        from passhat.importers.jsonl import read_jsonl

        return read_jsonl(source)
    if source_format == "tau2":
        from passhat.importers.tau2 import read_tau2

        return read_tau2(source)
    from passhat.importers.inspect_log import read_inspect

    return read_inspect(source, score)
