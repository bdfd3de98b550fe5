"""`passhat run` (an evaluation, new or resumed) and `passhat runs` (the stored runs)."""

from __future__ import annotations

import math
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table
from rich.text import Text

from passhat.cli import main
from passhat.cli.common import (
    BaseUrl,
    FiniteFloat,
    InputFile,
    OutputFile,
    PlainText,
    checked_id,
    console,
    customer_option,
    domain_options,
    err,
    existing_run_dir,
    folder_problem,
    full_option,
    is_folder,
    operator_options,
    out_option,
    output_file_problem,
    parallel_options,
    print_report_and_json,
    renamed_option,
    run_gate,
    tags,
)
from passhat.domains import domain_ref
from passhat.errors import UserError
from passhat.grade.modes import MODES
from passhat.openings import MAX_PARAPHRASES
from passhat.run.executors import EXECUTORS, Executor, check_executor
from passhat.run.stored import check_gate, gated_tasks
from passhat.store import STORE_FILE, EncodedTrial, ResultStore, RunEntry, list_runs

if TYPE_CHECKING:  # the run machinery loads the model clients, numpy and scipy: imported by `run` when it runs
    from passhat.metrics.gate import Gate
    from passhat.run.evaluate import Evaluation
    from passhat.run_config import RunConfig

PRICES_META = "passhat.prices"  # where --config leaves the file's price table for the run command
REDRAWS_PER_SECOND = 4  # of the progress bar: often enough to look alive, rarely enough to cost nothing


@main.command()
@domain_options("to evaluate in")
@click.option(
    "--agent",
    default="reference:flaky",
    show_default=True,
    type=PlainText(),
    help="Agent under test: reference:perfect|flaky|hasty|refuser|injectable, llm:<provider>/<model>, python:<module>:<factory> "
    "(your agent as Python code), http(s)://host:port/path (your agent as a service), or mcp+http(s)://host:port/path "
    "(a service that calls the tools itself through passhat's MCP server); see docs/agents.md.",
)
@customer_option
@click.option("--personas", default="all", show_default=True, help="Comma list of personas, or 'all'.")
@click.option(
    "--paraphrase",
    default=0,
    show_default=True,
    type=click.IntRange(0, MAX_PARAPHRASES),
    metavar="N",
    help="Prompt robustness: trial i's scripted customer says its request in paraphrase i mod (N+1) of it (0: the "
    "task's own words), and the report sets the paraphrased trials against the others; 0: off.",
)
@click.option("--tasks", default="", help="Comma list of task ids (default: every task of the domain).")
@click.option("--trials", default=8, show_default=True, type=click.IntRange(1, 1000), help="Trials per scenario (n).")
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed; each trial's seed derives from it.")
@parallel_options(
    "Worker processes running the trials (1: in this process); --concurrency and --max-connections are split between them."
)
@click.option(
    "--executor",
    default="local",
    show_default=True,
    type=click.Choice(EXECUTORS),
    help="Where the trials run: local (this machine, in --workers processes) or ray (--workers Ray actors on a Ray "
    "cluster; needs pip install 'passhat[ray]').",
)
@click.option(
    "--ray-address",
    metavar="ADDR",
    type=PlainText(),
    help="With --executor ray: the address of an existing Ray cluster (e.g. 127.0.0.1:6379 of `ray start --head`); "
    "default: Ray's own (RAY_ADDRESS, or a new local instance).",
)
@click.option(
    "--mode",
    default="strict",
    show_default=True,
    type=click.Choice(MODES),
    help="strict: state × output × trajectory; tau: state × output.",
)
@click.option(
    "--max-turns", default=30, show_default=True, type=click.IntRange(1, 500), help="Agent messages before a trial stops."
)
@click.option(
    "--max-tool-calls-per-turn",
    default=32,
    show_default=True,
    type=click.IntRange(1),
    help="Tool calls of one agent answer carried out; the rest get a too_many_tool_calls error.",
)
@click.option(
    "--max-argument-bytes",
    default=64 * 1024,
    show_default=True,
    type=click.IntRange(1),
    help="Largest arguments (JSON bytes) of one tool call; larger ones get an arguments_too_large error.",
)
@click.option(
    "--max-message-bytes",
    default=64 * 1024,
    show_default=True,
    type=click.IntRange(1),
    help="Longest agent message in bytes; a longer one is cut, with its size noted.",
)
@click.option(
    "--agent-base-url",
    type=BaseUrl(),
    help="Server of an llm: agent: OpenAI-compatible (vLLM, Ollama, llama.cpp, OpenRouter) for llm:openai/..., an Anthropic "
    "endpoint (without /v1), or litellm's api_base for llm:litellm/....",
)
@renamed_option(
    "--customer-base-url",
    "--user-base-url",
    "user_base_url",
    type=BaseUrl(),
    help="Server of an llm: customer, as --agent-base-url.",
)
@click.option(
    "--agent-temperature", type=FiniteFloat(0), help="Sampling temperature of the agent's model (default: the server's)."
)
@renamed_option(
    "--customer-temperature",
    "--user-temperature",
    "user_temperature",
    type=FiniteFloat(0),
    help="Sampling temperature of the customer's model (default: the server's).",
)
@click.option("--no-policy", is_flag=True, help="Give an llm: agent no written policy (ablation: what the policy is worth).")
@click.option(
    "--max-connections", default=8, show_default=True, type=click.IntRange(1, 1024), help="Model requests in flight per endpoint."
)
@click.option(
    "--request-timeout",
    default=120.0,
    show_default=True,
    type=FiniteFloat(0, min_open=True),
    help="Seconds before a model request is given up and retried.",
)
@click.option(
    "--max-retries",
    default=5,
    show_default=True,
    type=click.IntRange(0, 100),
    help="Retries of a model request after a 429, 5xx, lost connection or timeout.",
)
@click.option(
    "--retry-backoff",
    default=1.0,
    show_default=True,
    type=FiniteFloat(0),
    help="Base delay in seconds of the exponential backoff between retries.",
)
@click.option(
    "--cache",
    type=OutputFile(regular_only=True, path_type=str),
    help="SQLite file of model answers: a rerun makes no new calls and replays the same trajectories.",
)
@click.option(
    "--config",
    type=InputFile(),
    is_eager=True,
    expose_value=False,
    callback=lambda ctx, _, path: _read_config_file(ctx, path),
    help="TOML file of these flags (and a [prices] table); flags given here win.",
)
@click.option("--faults", default="", help="Fault plan: class=rate,... (e.g. timeout=0.1,lost_response=0.2) or a YAML file.")
@click.option(
    "--guard",
    default="off",
    show_default=True,
    help="Guards: off, all, or a comma list of idempotency,confirmation,policy,payments,human_gate,audit.",
)
@operator_options(
    "at once, by the policy", "each trial waiting for their decisions", "a trial's", "--guard human_gate, or tasks with their own"
)
@out_option
@click.option("--json", "json_path", type=OutputFile(), help="Also write the JSON report here.")
@click.option("--resume", metavar="RUN_ID", help="Finish an interrupted run: only its missing trials run.")
@click.option("--run-id", help="Name of the new run's folder (default: a timestamp).")
@click.option(
    "--gate",
    "gate_spec",
    metavar="SPEC",
    help='Acceptance gate "k=8,min=0.9[,persona=P]": exit 1 unless the run meets it. Without it the report judges the '
    "run against a default bar, pass^k at k = --trials >= 0.9, as advice (exit 0); none: no verdict.",
)
@click.option("--early-stop", is_flag=True, help="With --gate: skip the trials that can no longer change the gate's decision.")
@full_option
@click.pass_context
def run(
    ctx: click.Context,
    out: Path,
    concurrency: int,
    workers: int,
    executor: Executor,
    ray_address: str | None,
    json_path: Path | None,
    resume: str | None,
    run_id: str | None,
    gate_spec: str | None,
    early_stop: bool,
    full: bool,
    **options: Any,
) -> None:
    """Run an evaluation and print its report."""
    from passhat.report import build_report
    from passhat.run.evaluate import planned_total
    from passhat.run.runner import new_config, resume_check
    from passhat.run_config import stored_config

    gate = run_gate(gate_spec, early_stop)
    check_executor(executor, ray_address)
    if resume:
        typed = click.core.ParameterSource.COMMANDLINE  # a --config file's values are defaults, not overrides
        overridden = [f"--{name.replace('_', '-')}" for name in options if ctx.get_parameter_source(name) is typed]
        if run_id and ctx.get_parameter_source("run_id") is typed:
            overridden.append("--run-id")
        if overridden:
            raise UserError(
                f"--resume reruns run {resume!r} with its stored configuration; drop {', '.join(overridden)} "
                "(only --out, --concurrency, --workers, --executor, --ray-address, --json, --gate and --early-stop apply "
                "to a resumed run)."
            )
        store = ResultStore.resume(existing_run_dir(out, resume, "--resume"))  # the run's one writer
        try:
            config = stored_config(store)
            _check_operator(config, executor)
            for warning in resume_check(config, resume):
                err.print(Text.assemble(("warning:", "yellow"), " ", warning), soft_wrap=True)
            check_gate(gate, config, "--gate")
            problem = config.cache and output_file_problem(Path(config.cache), regular_only=True)
            if problem:
                raise UserError(f"--cache {config.cache} (stored with the run): {problem}.")
        except BaseException:
            store.close()
            raise
    else:
        if options["paraphrase"] and options["user"].strip() != "scripted":
            raise UserError(
                f"--paraphrase rewords the scripted customer's request; --customer {options['user']} words its own. "
                "Drop --paraphrase, or use --customer scripted."
            )
        timeout_given = ctx.get_parameter_source("operator_timeout") is click.core.ParameterSource.COMMANDLINE
        if timeout_given and options["operator"] != "inbox":
            raise UserError(
                "--operator-timeout is how long trials wait for people's decisions: add --operator inbox, or drop it."
            )
        config = new_config(**_as_stored(options), prices=ctx.meta.get(PRICES_META, {}))
        _check_operator(config, executor)
        check_gate(gate, config, "--gate")
        run_id = checked_id(run_id or time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2), "--run-id")
        _make_out_folder(out)
        store = ResultStore.create(out / run_id, run_id, config.model_dump())
        for note in store.notes:
            err.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    with store:
        try:
            result = _evaluate_with_progress(config, store, concurrency, gate, early_stop, workers, executor, ray_address)
        except KeyboardInterrupt:  # every stored trial is committed; the rest is what --resume runs
            err.print(
                f"interrupted: {len(store.completed_keys())} of {planned_total(config)} trials stored; "
                f"finish with `passhat run --resume {store.path.parent.name} --out {out}`",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            sys.exit(130)
        report = build_report(store, tags(config), None, gated_tasks(config), result.gate_json())
    if early_stop:  # a note on the run, like its start's: the report after it leads with the verdict
        err.print(f"early stop: {result.skipped} of {result.planned} planned trials saved", highlight=False)
    print_report_and_json(report, json_path, full, bar=gate_spec is None, out=out)
    if result.exit_code:
        sys.exit(result.exit_code)


def _check_operator(config: RunConfig, executor: Executor) -> None:
    """Refuse (UserError) the inbox operator where it would decide nothing (no human gate) or could not be reached
    (Ray actors on other machines do not share the runs folder's SQLite inbox)."""
    if config.operator != "inbox":
        return
    if executor == "ray":
        raise UserError(
            "--operator inbox files tickets into the SQLite inbox of --out, which Ray actors on other machines cannot "
            "share; run with --executor local (--workers N for several processes)."
        )
    from passhat.domains import load_domain
    from passhat.run.runner import select_tasks

    if "human_gate" not in config.guard and not any(
        t.guards for t in select_tasks(load_domain(config.domain, config.tasks_dir), config.tasks)
    ):
        raise UserError(
            "--operator inbox decides the human gate's tickets, but no human gate is on: none of the selected tasks "
            "declares one and --guard does not name human_gate; add --guard human_gate (or all), or drop --operator."
        )


def _as_stored(options: dict[str, Any]) -> dict[str, Any]:
    """The options with --domain and --tasks-dir as the run stores them, so that resume and the reports find the
    same domain and tasks from any folder: a domain folder and a tasks folder by their absolute paths."""
    tasks_dir = options.get("tasks_dir")
    return {
        **options,
        "domain": domain_ref(options["domain"]),
        "tasks_dir": str(Path(tasks_dir).resolve()) if tasks_dir else None,
    }


def _read_config_file(ctx: click.Context, path: Path | None) -> None:
    """--config: the file's values become the defaults, so flags on the command line override them."""
    if path is None:
        return
    from passhat.config_file import load_config_file  # it loads the model clients' price table

    values, prices = load_config_file(path, ctx.command.params)
    ctx.default_map = {**(ctx.default_map or {}), **values}
    ctx.meta[PRICES_META] = prices


def _make_out_folder(out: Path) -> None:
    """Checked before the run folder is made, like the files the run writes (their types check them)."""
    problem = folder_problem(out)
    if problem:
        raise UserError(f"--out {out}: {problem}.")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder ({exc.strerror or exc}); choose another --out.") from None


def _evaluate_with_progress(
    config: RunConfig,
    store: ResultStore,
    concurrency: int,
    gate: Gate | None,
    early_stop: bool,
    workers: int,
    executor: Executor,
    ray_address: str | None,
) -> Evaluation:
    """evaluate() under a progress bar; trials early stop skips advance it too, so it ends full.

    The bar is redrawn by the run's own loop as trials are stored, at most REDRAWS_PER_SECOND times a second:
    no refresh thread competes with the trials for the interpreter.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from passhat.report.numbers import counted
    from passhat.run.evaluate import evaluate
    from passhat.run.runner import plan_trials

    total = len(plan_trials(config, store.completed_keys()))
    err.print(f"run {store.run_id}: {counted(total, 'trial')} to run → {store.path.parent}", highlight=False, markup=False)
    columns = [TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}")]
    if early_stop:
        columns.append(TextColumn("skipped {task.fields[skipped]}"))
    with Progress(*columns, TimeElapsedColumn(), console=err, transient=True, auto_refresh=False) as progress:
        bar = progress.add_task("trials", total=total, failed=0, skipped=0)
        redraw = Throttle(progress.refresh, 1 / REDRAWS_PER_SECOND)

        def advance(record: EncodedTrial) -> None:
            failed = progress.tasks[0].fields["failed"] + (record.reward != 1)
            progress.update(bar, advance=1, failed=failed)
            redraw()

        def skip() -> None:
            progress.update(bar, advance=1, skipped=progress.tasks[0].fields["skipped"] + 1)
            redraw()

        return evaluate(config, store, concurrency, gate, early_stop, advance, skip, workers, executor, ray_address)


class Throttle:
    """Calls ``action`` at most once per ``interval`` seconds, dropping the calls in between (the last state
    is drawn by the next call, or when the bar closes)."""

    def __init__(self, action: Callable[[], object], interval: float):
        self._action, self._interval = action, interval
        self._last = -math.inf

    def __call__(self) -> None:
        now = time.monotonic()
        if now - self._last >= self._interval:
            self._last = now
            self._action()


@main.command()
@out_option
def runs(out: Path) -> None:
    """List stored runs, newest first, with their judged and planned trials; unreadable stores last."""
    if not is_folder(out):
        raise UserError(
            f"--out {out} is not a folder: there are no runs in it; give the folder `passhat run --out` wrote to (default: runs)."
        )
    entries = list_runs(out)
    if not entries:
        err.print(
            f"no runs in {out} (--out); `passhat run --out {out}` makes one.", highlight=False, markup=False, soft_wrap=True
        )
        return
    readable, unreadable = _read_entries(out, entries)
    # Names and counts are folded or kept whole, never cut short: a cut name or "(early stop)" misleads.
    table = Table()
    for name in ("run", "created", "domain", "agent", "personas"):
        table.add_column(name, overflow="fold")
    table.add_column("trials", justify="right", no_wrap=True)
    table.add_column("done/planned", no_wrap=True)
    for entry, cfg in readable:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.created or 0))
        planned = len(set(cfg.tasks)) * len(set(cfg.personas)) * cfg.trials
        progress = f"{entry.done}/{planned}" + ("\n(early stop)" if cfg.early_stop else "")
        cells = (entry.folder, when, cfg.domain, cfg.agent, ", ".join(cfg.personas), cfg.trials, progress)
        table.add_row(*(Text(str(cell)) for cell in cells))
    for folder in unreadable:
        table.add_row(Text(folder), Text("unreadable", style="red"), *["-"] * 5)
    console.print(table)
    for folder, error in unreadable.items():
        err.print(f"{folder}: {error}", highlight=False, markup=False, soft_wrap=True)


def _read_entries(out: Path, entries: list[RunEntry]) -> tuple[list[tuple[RunEntry, RunConfig]], dict[str, str]]:
    """The listed runs with their configurations, in list order, and each unreadable one's error by folder: a store
    that cannot be opened, or one whose configuration is damaged."""
    from passhat.run_config import parse_config

    readable: list[tuple[RunEntry, RunConfig]] = []
    unreadable: dict[str, str] = {}
    for entry in entries:
        if entry.error:
            unreadable[entry.folder] = entry.error
            continue
        try:
            readable.append((entry, parse_config(entry.config, out / entry.folder / STORE_FILE)))
        except UserError as exc:
            unreadable[entry.folder] = str(exc)
    return readable, unreadable
