"""`passhat export`: a stored run in another tool's format (today: an Inspect AI eval log)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from passhat.cli import main
from passhat.cli.common import FilePath, err, existing_run_dir, is_folder, out_option, output_file_problem, shown
from passhat.errors import UserError
from passhat.store import ResultStore


@main.command()
@click.argument("run_id")
@click.option(
    "--format",
    "log_format",
    default="inspect",
    show_default=True,
    type=click.Choice(["inspect"]),
    help="inspect: an Inspect AI eval log (.json), which `inspect view` browses.",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=FilePath(path_type=Path),
    help="The log file (*.json), or a folder to write it in under the name `inspect view` lists.",
)
@out_option
def export(run_id: str, log_format: str, output: Path, out: Path) -> None:
    """Write a stored run as an Inspect AI eval log: a sample per scenario, its trials as epochs."""
    from passhat.export.inspect_log import inspect_log_name, listed_by_inspect_view, write_inspect_log
    from passhat.report.numbers import counted

    with ResultStore.open(existing_run_dir(out, run_id, "RUN_ID")) as store:
        path = output / inspect_log_name(store.run_id, store.created, store.config) if is_folder(output) else output
        _check_log_path(path, output)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            written = write_inspect_log(path, store.run_id, store.created, store.config, store.iter_trials())
        except OSError as exc:
            raise UserError(f"cannot write the eval log {path} (-o): {exc.strerror or exc}.") from None
    err.print(
        f"Inspect eval log of run {run_id} ({counted(written, 'trial')}) written to {path}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    if not listed_by_inspect_view(path.name):
        err.print(
            Text.assemble(
                ("note:", "yellow"),
                f" `inspect view` lists a folder's .json logs only when their names start with a time, as Inspect "
                f"names them; `-o {path.parent}` writes it under such a name.",
            ),
            soft_wrap=True,
        )


def _check_log_path(path: Path, output: Path) -> None:
    """Inspect picks a log's reader by its extension; the file must be one passhat can write."""
    if path.suffix != ".json":
        raise UserError(f"-o {shown(str(output))}: an Inspect eval log is a .json file; name it *.json, or give a folder.")
    problem = output_file_problem(path, regular_only=True)
    if problem:
        raise UserError(f"-o {shown(str(output))}: {problem}.")
