"""`passhat schema report`: the JSON Schema of the report that `passhat report --json` and `run --json` write,
so a consumer can validate a report or generate its types from it."""

from __future__ import annotations

import json
from pathlib import Path

import click

from passhat.cli import main
from passhat.cli.common import OutputFile, err, renamed_option
from passhat.errors import UserError
from passhat.file_writes import write_atomically


@main.group()
def schema() -> None:
    """JSON Schemas of the documents passhat writes."""


@schema.command("report")
# --out names the runs folder on every other command; here it was the file, and is kept hidden for a release
@renamed_option(
    ("-o", "--output"), "--out", "out_path", type=OutputFile(), help="Write the schema to this file instead of printing it."
)
def schema_report(out_path: Path | None) -> None:
    """The JSON Schema of the JSON report (`report --json`, `run --json`); docs/report-json.md explains each field."""
    from passhat.report.model import report_schema  # the report's pydantic models: built only for this command

    text = json.dumps(report_schema(), indent=2) + "\n"
    if out_path is None:
        click.echo(text, nl=False)
        return
    try:
        write_atomically(out_path, text)
    except OSError as exc:
        raise UserError(f"cannot write the schema to {out_path} (-o/--output): {exc.strerror}.") from None
    err.print(f"schema written to {out_path}", highlight=False, markup=False)
