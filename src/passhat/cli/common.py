"""What several `passhat` commands share: the consoles, the group that turns every failure into a message and an
exit code, the parameter types that refuse what would otherwise surface as a traceback, the --out option, finding
a run's folder, the --gate option, the --domain and --tasks-dir options, and a domain's tags for the reports (with a
note when the domain is gone; what a stored run is read for beside its trials is passhat.run.stored's)."""

from __future__ import annotations

import importlib.metadata
import io
import math
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import click
from rich.console import Console
from rich.text import Text

from passhat.domains import DEFAULT_DOMAIN
from passhat.errors import UserError
from passhat.run.stored import task_tags

if TYPE_CHECKING:  # the metrics and reports load numpy and scipy: imported by the commands that use them
    from passhat.metrics.gate import Gate
    from passhat.report.model import Report
    from passhat.run_config import RunConfig

# Logs and CI output are read later and wider than a terminal: do not wrap tables at 80 columns there.
console = Console(width=None if sys.stdout.isatty() else 130)
err = Console(stderr=True)

DEBUG_VARIABLE = "PASSHAT_DEBUG"  # set (to anything but "" or "0") to see the traceback of an unexpected error
NAME_MAX = 255  # bytes in one file or folder name: the limit of ext4, XFS, btrfs, APFS and NTFS alike
PATH_MAX = 4096  # bytes in a whole path (Linux)
SHOWN_CHARS = 400  # how much of a value an error message repeats (an absurd one is shortened in the middle)


def shown(value: object) -> str:
    """A value as an error message quotes it: repr (which writes out bytes that were not UTF-8, as \\udcff),
    shortened in the middle when long."""
    text = repr(os.fsdecode(value) if isinstance(value, bytes | os.PathLike) else str(value))
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS // 2]}…{text[-SHOWN_CHARS // 2 :]}"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print message as the one paragraph of an error (never read as markup) and exit."""
    err.print(Text.assemble(("error:", "red"), " ", message), soft_wrap=True)
    sys.exit(code)


class CommandGroup(click.Group):
    """The `passhat` group: the one place where a failure becomes a message and an exit code. Exit codes 0 and 1
    are verdicts, so every error exits 2: a UserError with its message, an OS refusal naming its file, and
    anything unexpected as a bug to report. Ctrl-C exits 130."""

    def invoke(self, ctx: click.Context) -> Any:
        for stream in (sys.stdout, sys.stderr):  # a name that was not UTF-8 (a lone surrogate) prints as \udcff
            if isinstance(stream, io.TextIOWrapper):
                stream.reconfigure(errors="backslashreplace")
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):
            raise  # click's own answers: usage errors, --help, a closed pipe
        except UserError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            err.print("interrupted", highlight=False, markup=False)
            sys.exit(130)
        except Exception as exc:  # the top of the program: nothing above it can do better
            if os.environ.get(DEBUG_VARIABLE, "0") not in ("", "0"):
                raise
            if isinstance(exc, OSError) and exc.filename is not None:  # the system refused a file: not a bug
                fail(f"cannot use {os.fsdecode(exc.filename)}: {exc.strerror or exc}.")
            fail(bug_message(exc, f"passhat {ctx.invoked_subcommand or ''}".strip()))


def bug_message(exc: BaseException, command: str) -> str:
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(detail) > SHOWN_CHARS:
        detail = detail[:SHOWN_CHARS] + "…"
    return (
        f"`{command}` failed unexpectedly ({detail}). This is a bug in passhat, not an answer about your agent: "
        f"please report it {issue_tracker()} with the command you ran and its traceback, which "
        f"`{DEBUG_VARIABLE}=1 {command} ...` shows."
    )


def issue_tracker() -> str:
    """Where the package metadata says bugs go (a Project-URL labelled Issues or Bug Tracker)."""
    try:
        urls = importlib.metadata.metadata("passhat").get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("issues", "bug tracker", "bugs"):
            return f"at {url.strip()}"
    return "to passhat's maintainers"


class FiniteFloat(click.FloatRange):
    """A float range that refuses nan and ±inf: click's bounds let nan through (every comparison with it is
    false), and an infinite timeout or temperature is no setting."""

    name = "finite number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{shown(value)} is not a finite number.", param, ctx)
        return number


def text_problem(text: str) -> str | None:
    """Why text cannot be a name sent to a server or stored: bytes that are not UTF-8, control characters."""
    if any(not c.isprintable() for c in text):
        return "it holds a control character or bytes that are not UTF-8 text"
    return None


class PlainText(click.ParamType):
    """Text that is sent to a server or stored as is (a model name): printable UTF-8, nothing else."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        problem = text_problem(str(value))
        if problem:
            self.fail(f"{shown(value)}: {problem}.", param, ctx)
        return str(value)


class BaseUrl(click.ParamType):
    """An http(s) URL with a host, parsed as the model client will parse it: refused here, not in every trial."""

    name = "url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        url = str(value)
        if text_problem(url) or any(c.isspace() for c in url):
            self.fail(f"{shown(url)} is not a URL: it holds a space, a control character or bytes that are not text.", param, ctx)
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - parsing the port is what refuses "http://h:99999" or "http://[::1"
        except ValueError as exc:
            self.fail(f"{shown(url)} is not a URL ({exc}).", param, ctx)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self.fail(f"{shown(url)} is not an http(s) URL with a host; write e.g. http://localhost:8000/v1.", param, ctx)
        return url


def path_problem(path: str) -> str | None:
    """What the OS refuses in a path whatever the files are (a name over NAME_MAX bytes, a NUL), in words."""
    if "\0" in path:
        return "it holds a NUL character"
    try:
        raw = os.fsencode(path)
    except UnicodeError:
        return "it holds characters this system cannot use in a file name"
    if len(raw) >= PATH_MAX:
        return f"it is {len(raw)} bytes long; a path can have at most {PATH_MAX - 1}"
    longest = max(map(len, raw.split(b"/")))
    if longest > NAME_MAX:
        return f"a name in it is {longest} bytes long; a file or folder name can have at most {NAME_MAX}"
    return None


def _mode(path: Path) -> int | None:
    """The file's mode, or None when it cannot be seen (missing, or a folder on the way cannot be searched)."""
    try:
        return path.stat().st_mode
    except (OSError, ValueError):
        return None


def is_folder(path: Path) -> bool:
    """path is a folder passhat can see (Path.is_dir raises when a folder on the way cannot be searched)."""
    mode = _mode(path)
    return mode is not None and stat.S_ISDIR(mode)


def folder_problem(folder: Path) -> str | None:
    """Why folder cannot be written in, or made: its nearest existing ancestor must be a writable folder."""
    ancestor = folder
    while (mode := _mode(ancestor)) is None and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if mode is not None and not stat.S_ISDIR(mode):
        return f"{ancestor} is a file, not a folder; choose a path in a folder"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"cannot write in {ancestor} (permission denied); choose a folder you can write to"
    return None


def output_file_problem(path: Path, regular_only: bool = False) -> str | None:
    """Why a file cannot be written at path. Checked before any work, so a long run or a printed report never ends
    in an error about a path. A FIFO or device is a place to write (a reader may hold it) unless regular_only."""
    problem = path_problem(str(path))
    if problem:
        return problem
    if is_folder(path):
        return "it is a folder; give the path of a file"
    mode = _mode(path)
    if regular_only and mode is not None and not stat.S_ISREG(mode):
        return "it is not a regular file (a FIFO, a device or a socket); give the path of a file"
    return folder_problem(path.parent)


class FilePath(click.Path):
    """click.Path that also refuses, as a usage error naming the flag, a path the OS would refuse with a traceback
    (a name over 255 bytes, a NUL) whatever the command does with it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        problem = path_problem(os.fsdecode(value))
        if problem:
            self.fail(f"{shown(value)}: {problem}.", param, ctx)
        return super().convert(value, param, ctx)


class InputFile(FilePath):
    """A file read whole: it must exist and be a regular file, so a FIFO or a device cannot hang the read."""

    def __init__(self) -> None:
        super().__init__(exists=True, dir_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = super().convert(value, param, ctx)
        if not path.is_file():
            self.fail(f"{shown(value)} is not a regular file (a FIFO, a device or a socket); give a file.", param, ctx)
        return path


class OutputFile(FilePath):
    """A file a command writes: see output_file_problem."""

    def __init__(self, regular_only: bool = False, path_type: type[str | Path] = Path) -> None:
        super().__init__(dir_okay=False, readable=False, path_type=path_type)
        self.regular_only = regular_only

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        problem = output_file_problem(Path(path), self.regular_only)
        if problem:
            self.fail(f"{shown(value)}: {problem}.", param, ctx)
        return path


full_option = click.option(
    "--full", is_flag=True, help="Print every table: which scenarios fail and their backends, steps, consistency, guards, harm."
)
DEFAULT_OUT = Path("runs")
out_option = click.option(
    "--out",
    default=str(DEFAULT_OUT),
    show_default=True,
    type=FilePath(file_okay=False, path_type=Path),
    help="Folder that holds run folders.",
)


def checked_id(run_id: str, flag: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", run_id) or path_problem(run_id):
        raise UserError(
            f"{shown(run_id)} is not a run id ({flag}): use letters, digits, '.', '_' and '-' only, at most {NAME_MAX} bytes."
        )
    return run_id


def existing_run_dir(out: Path, run_id: str, flag: str) -> Path:
    folder = out / checked_id(run_id, flag)
    if not is_folder(folder):
        where = "" if is_folder(out) else f" (--out {out} is not a folder)"
        raise UserError(f"there is no run {shown(run_id)} in {out}{where} ({flag}); `passhat runs --out {out}` lists the runs.")
    return folder


NO_GATE = "none"  # --gate none: no gate, and no default bar either


def run_gate(spec: str | None, early_stop: bool) -> Gate | None:
    """The --gate given (None for none); with no --gate the report judges the run against the default bar."""
    if early_stop and (not spec or spec.strip() == NO_GATE):
        raise UserError('--early-stop needs a gate to stop against: add --gate "k=8,min=0.9".')
    if spec is None or spec.strip() == NO_GATE:
        return None
    from passhat.metrics.gate import parse_gate

    try:
        return parse_gate(spec)
    except ValueError as exc:
        raise UserError(f"--gate {shown(spec)} is not a gate: {exc}.") from None


Command = TypeVar("Command", bound=Callable[..., Any])


class OldName(click.Option):
    """A renamed option's old spelling, hidden. It sets the same variable, yet is parsed under a key of its own: click
    reads the options of one variable as one, so without it neither could tell which spelling was typed."""

    def _key(self) -> str:
        return f"{self.name} (old name)"

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        name, self.name = self.name, self._key()
        try:
            super().add_to_parser(parser, ctx)
        finally:
            self.name = name

    def consume_value(self, ctx: click.Context, opts: Any) -> Any:
        mine = {k: v for k, v in opts.items() if k != self.name}
        if self._key() in opts:
            mine[str(self.name)] = opts[self._key()]
        return super().consume_value(ctx, mine)


def renamed_option(names: str | tuple[str, ...], old: str, dest: str, **settings: Any) -> Callable[[Command], Command]:
    """An option under its new ``names`` ("--customer", or ("-o", "--output")), with its old name kept hidden for a
    release (both set ``dest``): scripts that still say ``--user`` keep working, told on stderr what the name is now,
    while help and docs say ``--customer``. The name given on the command line wins over the other's default; both
    given is a usage error (exit 2), as neither would be the one meant."""
    names = (names,) if isinstance(names, str) else names
    new = "/".join(names)

    def given(flag: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
        def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
            if ctx.get_parameter_source(dest) is not click.core.ParameterSource.COMMANDLINE:
                return value  # this spelling was not typed (the source is the one just read for it)
            if ctx.meta.setdefault(f"passhat.renamed.{dest}", flag) != flag:
                raise click.UsageError(f"give {new} once ({old} is its old name).", ctx)
            if flag == old:
                note = f" {old} is now {new}; the old name still works for now."
                err.print(Text.assemble(("note:", "yellow"), note), soft_wrap=True)
            return value

        return check

    def add(command: Command) -> Command:
        hidden = {k: v for k, v in settings.items() if k not in ("help", "show_default")}
        command = click.option(old, dest, cls=OldName, hidden=True, callback=given(old), **hidden)(command)
        return click.option(*names, dest, callback=given(new), **settings)(command)

    return add


customer_option = renamed_option(
    "--customer",
    "--user",
    "user",
    default="scripted",
    show_default=True,
    type=PlainText(),
    help="Customer simulator: scripted, or llm:<provider>/<model>.",
)


def parallel_options(workers_help: str) -> Callable[[Command], Command]:
    """--concurrency and --workers, as every command that runs trials takes them."""

    def add(command: Command) -> Command:
        concurrency = click.option(
            "--concurrency",
            default=4,
            show_default=True,
            type=click.IntRange(1, 256),
            help="Conversations in flight at once, over all workers.",
        )
        workers = click.option(
            "--workers",
            default=lambda: os.cpu_count() or 1,
            show_default="the machine's cores",
            type=click.IntRange(1, 256),
            help=workers_help,
        )
        return concurrency(workers(command))

    return add


def operator_options(simulated: str, inbox: str, waiter: str, gate: str) -> Callable[[Command], Command]:
    """--operator and --operator-timeout, as `run` and `serve mcp` take them: the words say when the simulated
    operator decides, what the inbox's decisions do, whose end waits for them and which gate they need."""
    from passhat.guard.operators import OPERATORS

    def add(command: Command) -> Command:
        timeout = click.option(
            "--operator-timeout",
            default=600.0,
            show_default=True,
            type=FiniteFloat(0, min_open=True),
            metavar="SECONDS",
            help=f"With --operator inbox: how long {waiter} end waits for the decisions on its tickets; one not decided "
            "in time expires, and counts as a rejection.",
        )
        operator = click.option(
            "--operator",
            default="simulated",
            show_default=True,
            type=click.Choice(OPERATORS),
            help=f"Who decides the human gate's tickets: simulated ({simulated}), or inbox: people in the inbox of --out "
            f"(`passhat serve`), {inbox}; needs a human gate ({gate}).",
        )
        return operator(timeout(command))

    return add


def domain_options(purpose: str) -> Callable[[Command], Command]:
    """--domain and --tasks-dir, as every command that selects tasks takes them; ``purpose`` ends --domain's help."""

    def add(command: Command) -> Command:
        command = click.option(
            "--tasks-dir",
            type=FilePath(exists=True, file_okay=False, path_type=str),
            help="Folder of task files (*.yaml) added to the domain's own tasks.",
        )(command)
        return click.option(
            "--domain",
            default=DEFAULT_DOMAIN,
            show_default=True,
            help=f"Domain {purpose}: a built-in or installed domain's name, or the path of a domain folder.",
        )(command)

    return add


def tags(config: RunConfig) -> dict[str, list[str]]:
    """Each task's tags of a stored run (its ``config``), with a note on stderr when its domain cannot be loaded any more."""
    return task_tags(config, gone=lambda why: err.print(Text.assemble(("note:", "yellow"), f" {why}"), soft_wrap=True))


def print_report_and_json(report: Report, json_path: Path | None, full: bool, bar: bool, out: Path) -> None:
    """The terminal report (full: with its long tables; bar: judged against the default bar when no gate was
    given; out: the runs folder, named in the commands it suggests unless the default), and the JSON report when
    asked for."""
    from passhat.report import print_report, write_json

    print_report(report, console, full, bar, None if out == DEFAULT_OUT else out)
    if json_path:
        write_json(report, json_path)
        err.print(f"JSON report written to {json_path}", highlight=False, markup=False)
