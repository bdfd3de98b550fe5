"""`passhat export`: a stored run in another tool's format (an Inspect AI eval log, OpenTelemetry traces)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.text import Text

from passhat.cli import main
from passhat.cli.common import FilePath, err, existing_run_dir, is_folder, out_option, output_file_problem, shown
from passhat.errors import UserError
from passhat.store import ResultStore

if TYPE_CHECKING:  # a run configuration loads the model clients: imported by the command when it runs
    from passhat.run_config import RunConfig

INSPECT_SUFFIXES = (".json", ".eval")


@main.command()
@click.argument("run_id")
@click.option(
    "--format",
    "log_format",
    default="inspect",
    show_default=True,
    type=click.Choice(["inspect", "otel"]),
    help="inspect: an Inspect AI eval log (.json or .eval), which `inspect view` browses. "
    "otel: OpenTelemetry traces as OTLP JSON Lines (.json or .jsonl), a trace per trial.",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=FilePath(),
    help="The file to write (*.json; *.eval for an Inspect log, *.jsonl for traces), or for an Inspect log a folder "
    "to write it in under the name `inspect view` lists (an existing folder, or a name ending in /, made if missing).",
)
@click.option(
    "--otlp-endpoint",
    metavar="URL",
    help="--format otel: also post the traces to this OTLP/HTTP endpoint (protobuf; http://host:4318 posts to its "
    "/v1/traces), with the headers of OTEL_EXPORTER_OTLP_HEADERS. Needs pip install 'passhat[otel]'.",
)
@out_option
def export(run_id: str, log_format: str, output: str, otlp_endpoint: str | None, out: Path) -> None:
    """Write a stored run as an Inspect AI eval log (a sample per scenario, its trials as epochs) or as OpenTelemetry
    traces (a trace per trial)."""
    if otlp_endpoint is not None and log_format != "otel":
        raise UserError("--otlp-endpoint posts OpenTelemetry traces: use it with --format otel.")
    from passhat.run_config import stored_config

    with ResultStore.open(existing_run_dir(out, run_id, "RUN_ID")) as store:
        config = stored_config(store)
        if log_format == "otel":
            _export_otel(store, config, Path(output), otlp_endpoint)
        else:
            _export_inspect(store, config, output)


def _export_inspect(store: ResultStore, config: RunConfig, output: str) -> None:
    """``output`` as typed: a trailing slash names a folder that may not exist yet (`-o logs/` on a fresh clone), which
    the Path it becomes no longer shows."""
    from passhat.export.inspect_eval import write_inspect_eval
    from passhat.export.inspect_log import inspect_log_name, listed_by_inspect_view, write_inspect_log

    typed = Path(output)
    folder = output.endswith(("/", os.sep)) or is_folder(typed)
    path = typed / inspect_log_name(store.run_id, store.created, config) if folder else typed
    naming = "an Inspect eval log is a .json or .eval file; name it so, or give a folder (one that exists, or a name ending in /)"
    _check_path(path, typed, INSPECT_SUFFIXES, naming)
    write = write_inspect_eval if path.suffix == ".eval" else write_inspect_log
    written = _written(path, "eval log", lambda: write(path, store.run_id, store.created, config, store.iter_trials()))
    _done(f"Inspect eval log of run {store.run_id}", written, path)
    if not listed_by_inspect_view(path.name):
        err.print(
            Text.assemble(
                ("note:", "yellow"),
                f" `inspect view` lists a folder's .json logs only when their names start with a time, as Inspect "
                f"names them; `-o {path.parent}` writes it under such a name (any .eval log is listed).",
            ),
            soft_wrap=True,
        )


def _export_otel(store: ResultStore, config: RunConfig, output: Path, endpoint: str | None) -> None:
    from passhat.export.otel import otlp_headers, post_otel_traces, traces_url, write_otel_traces

    _check_path(output, output, (".json", ".jsonl"), "OTLP JSON traces are a .json or .jsonl file; name it so")
    url = traces_url(endpoint) if endpoint is not None else None
    if endpoint is not None and url is None:  # checked before any work, as the headers are
        raise UserError(f"--otlp-endpoint {shown(endpoint)}: give an http:// or https:// URL, such as http://127.0.0.1:4318.")
    headers = otlp_headers(os.environ) if url is not None else {}
    written = _written(output, "traces", lambda: write_otel_traces(output, store.run_id, config, store.iter_trials()))
    _done(f"OpenTelemetry traces of run {store.run_id}", written, output)
    if url is not None:
        sent = post_otel_traces(url, headers, output)
        from passhat.report.numbers import counted

        err.print(f"and posted to {url} ({counted(sent, 'OTLP request')})", highlight=False, markup=False, soft_wrap=True)


def _written(path: Path, what: str, write: Callable[[], int]) -> int:
    """Run ``write`` (which returns the trials written) in ``path``'s folder, made if missing; an OS error is the user's."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return write()
    except OSError as exc:
        raise UserError(f"cannot write the {what} {path} (-o): {exc.strerror or exc}.") from None


def _done(what: str, written: int, path: Path) -> None:
    from passhat.report.numbers import counted

    err.print(f"{what} ({counted(written, 'trial')}) written to {path}", highlight=False, markup=False, soft_wrap=True)


def _check_path(path: Path, output: Path, suffixes: tuple[str, ...], naming: str) -> None:
    """The format is read off the file's extension (by Inspect, by a collector's file receiver): it must be one
    passhat writes in that format."""
    if path.suffix not in suffixes:
        raise UserError(f"-o {shown(str(output))}: {naming}.")
    problem = output_file_problem(path, regular_only=True)
    if problem:
        raise UserError(f"-o {shown(str(output))}: {problem}.")
