"""The `passhat` command: parses, calls the library, prints. No evaluation logic lives here."""

from __future__ import annotations

import functools
import os
import re
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from passhat.config_file import load_config_file
from passhat.domains import domain_names, load_domain
from passhat.errors import UserError
from passhat.grade import MODES, GroundTruthError
from passhat.grade.check import ANY_FAILURE, check_task
from passhat.guard import verify_folder
from passhat.guard.audit import AUDIT_FILE, HEAD_FILE
from passhat.report.guard_section import comparison_table
from passhat.report import build_report, print_report, write_json
from passhat.metrics.compare import ScenarioMismatch, compare_runs
from passhat.metrics.extrapolate import group_counts, select_model
from passhat.metrics.gate import Gate, decide, parse_gate, planned_trials
from passhat.metrics.intervals import run_intervals
from passhat.metrics.traffic import traffic as traffic_view
from passhat.metrics.summary import scenario_counts
from passhat.report.html import MAX_TRANSCRIPTS, write_html
from passhat.report.junit import write_junit
from passhat.report.terminal_stats import print_comparison, print_gate, print_traffic
from passhat.run.config import RunConfig, stored_config
from passhat.run.evaluate import Evaluation, evaluate, planned_total
from passhat.run.runner import new_config, plan_trials, resume_check, select_tasks
from passhat.store import ResultStore, TrialRecord, list_runs

PRICES_META = "passhat.prices"  # where --config leaves the file's price table for the run command
CONFIG_ERROR_META = "passhat.config_error"  # where --config leaves its UserError for the run command to raise
# Logs and CI output are read later and wider than a terminal: do not wrap tables at 80 columns there.
console = Console(width=None if sys.stdout.isatty() else 130)
err = Console(stderr=True)


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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="passhat")
def main() -> None:
    """passhat: will this agent do this job right every time a customer asks? (pass^k, not pass@1)"""


@main.command()
@click.option("--domain", default="retail", show_default=True, help="Domain to evaluate in.")
@click.option("--agent", default="reference:flaky", show_default=True, help="Agent under test: reference:perfect|flaky|hasty, or llm:<provider>/<model>.")
@click.option("--user", default="scripted", show_default=True, help="Customer simulator: scripted, or llm:<provider>/<model>.")
@click.option("--personas", default="all", show_default=True, help="Comma list of personas, or 'all'.")
@click.option("--tasks", default="", help="Comma list of task ids (default: every task of the domain).")
@click.option("--trials", default=8, show_default=True, type=click.IntRange(1, 1000), help="Trials per scenario (n).")
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed; each trial's seed derives from it.")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 256), help="Trials in flight at once.")
@click.option("--mode", default="strict", show_default=True, type=click.Choice(MODES), help="strict: state × output × trajectory; tau: state × output.")
@click.option("--max-turns", default=30, show_default=True, type=click.IntRange(1, 500), help="Agent messages before a trial stops.")
@click.option("--agent-base-url", help="Server of an llm: agent: OpenAI-compatible (vLLM, Ollama, llama.cpp, OpenRouter) for llm:openai/..., or an Anthropic endpoint (without /v1).")
@click.option("--user-base-url", help="Server of an llm: customer, as --agent-base-url.")
@click.option("--agent-temperature", type=click.FloatRange(0), help="Sampling temperature of the agent's model (default: the server's).")
@click.option("--user-temperature", type=click.FloatRange(0), help="Sampling temperature of the customer's model (default: the server's).")
@click.option("--no-policy", is_flag=True, help="Give an llm: agent no written policy (ablation: what the policy is worth).")
@click.option("--max-connections", default=8, show_default=True, type=click.IntRange(1, 1024), help="Model requests in flight per endpoint.")
@click.option("--request-timeout", default=120.0, show_default=True, type=click.FloatRange(0, min_open=True), help="Seconds before a model request is given up and retried.")
@click.option("--max-retries", default=5, show_default=True, type=click.IntRange(0, 100), help="Retries of a model request after a 429, 5xx, lost connection or timeout.")
@click.option("--retry-backoff", default=1.0, show_default=True, type=click.FloatRange(0), help="Base delay in seconds of the exponential backoff between retries.")
@click.option("--cache", type=click.Path(dir_okay=False), help="SQLite file of model answers: a rerun makes no new calls and replays the same trajectories.")
@click.option("--config", type=click.Path(exists=True, dir_okay=False, path_type=Path), is_eager=True, expose_value=False, callback=lambda ctx, _, path: _read_config_file(ctx, path), help="TOML file of these flags (and a [prices] table); flags given here win.")
@click.option("--faults", default="", help="Fault plan: class=rate,... (e.g. timeout=0.1,lost_response=0.2) or a YAML file.")
@click.option("--guard", default="off", show_default=True, help="Guards: off, all, or a comma list of idempotency,confirmation,policy,payments,human_gate,audit.")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the JSON report here.")
@click.option("--resume", metavar="RUN_ID", help="Finish an interrupted run: only its missing trials run.")
@click.option("--run-id", help="Name of the new run's folder (default: a timestamp).")
@click.option("--gate", "gate_spec", metavar="SPEC", help='Acceptance gate "k=8,min=0.9[,persona=P]": exit 1 unless the run meets it.')
@click.option("--early-stop", is_flag=True, help="With --gate: skip the trials that can no longer change the gate's decision.")
@click.pass_context
@friendly
def run(
    ctx: click.Context, out: Path, concurrency: int, json_path: Path | None, resume: str | None, run_id: str | None,
    gate_spec: str | None, early_stop: bool, **options: Any,
) -> None:
    """Run an evaluation and print its report."""
    if CONFIG_ERROR_META in ctx.meta:  # --config failed while click parsed the flags: say so as one paragraph
        raise ctx.meta[CONFIG_ERROR_META]
    gate = _run_gate(gate_spec, early_stop)
    if json_path:
        _check_output_file(json_path, "--json")
    if resume:
        typed = click.core.ParameterSource.COMMANDLINE  # a --config file's values are defaults, not overrides
        overridden = [f"--{name.replace('_', '-')}" for name in options if ctx.get_parameter_source(name) is typed]
        if run_id and ctx.get_parameter_source("run_id") is typed:
            overridden.append("--run-id")
        if overridden:
            raise UserError(
                f"--resume reruns run {resume!r} with its stored configuration; drop {', '.join(overridden)} "
                "(only --out, --concurrency, --json, --gate and --early-stop apply to a resumed run)."
            )
        store = ResultStore.open(_existing_run_dir(out, resume, "--resume"))
        try:
            config = stored_config(store)
            for warning in resume_check(config, resume):
                err.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
            _check_gate(gate, config.model_dump(), "--gate")
            if config.cache:
                _check_output_file(Path(config.cache), "--cache (stored with the run)")
        except BaseException:
            store.close()
            raise
    else:
        config = new_config(**options, prices=ctx.meta.get(PRICES_META, {}))
        _check_gate(gate, config.model_dump(), "--gate")
        if config.cache:
            _check_output_file(Path(config.cache), "--cache")
        run_id = _checked_id(run_id or time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2), "--run-id")
        _make_out_folder(out)
        store = ResultStore.create(out / run_id, run_id, config.model_dump())
    with store:
        try:
            result = _evaluate_with_progress(config, store, concurrency, gate, early_stop)
        except KeyboardInterrupt:  # every stored trial is committed; the rest is what --resume runs
            err.print(
                f"interrupted: {len(store.completed_keys())} of {planned_total(config)} trials stored; "
                f"finish with `passhat run --resume {store.path.parent.name} --out {out}`",
                highlight=False, markup=False, soft_wrap=True,
            )
            sys.exit(130)
        report = build_report(store, _tags(config.domain), result.trials, _gated_tasks(config.domain))
    if result.decision:
        report["gate"] = result.gate_json()
    _print_report(report, json_path)
    if result.decision:
        print_gate(result.decision, console)
        if early_stop:
            console.print(f"early stop: {result.skipped} of {result.planned} planned trials saved")
    if result.exit_code:
        sys.exit(result.exit_code)


def _run_gate(spec: str | None, early_stop: bool) -> Gate | None:
    if early_stop and not spec:
        raise UserError("--early-stop needs a gate to stop against: add --gate \"k=8,min=0.9\".")
    if spec is None:
        return None
    try:
        return parse_gate(spec)
    except ValueError as exc:
        raise UserError(f"--gate {spec!r} is not a gate: {exc}.") from None


def _check_gate(gate: Gate | None, config: dict[str, Any], flag: str) -> None:
    """A gate the run cannot answer is a user error before any trial runs."""
    if gate is None:
        return
    if gate.k > config["trials"]:
        raise UserError(f"the gate's k = {gate.k} ({flag}) exceeds the run's {config['trials']} trials per scenario; "
                        f"pass^k needs k <= n: lower k or run with --trials {gate.k} or more.")
    if gate.persona and gate.persona not in config["personas"]:
        raise UserError(f"the gate's persona {gate.persona!r} ({flag}) is not among the run's personas "
                        f"({', '.join(config['personas'])}).")


def _read_config_file(ctx: click.Context, path: Path | None) -> None:
    """--config: the file's values become the defaults, so flags on the command line override them."""
    if path is None:
        return
    try:
        values, prices = load_config_file(path, ctx.command.params)
    except UserError as exc:  # raised by the command itself, where `friendly` prints it as one paragraph
        ctx.meta[CONFIG_ERROR_META] = exc
        return
    ctx.default_map = {**(ctx.default_map or {}), **values}
    ctx.meta[PRICES_META] = prices


def _checked_id(run_id: str, flag: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", run_id):
        raise UserError(f"{run_id!r} is not a run id ({flag}): use letters, digits, '.', '_' and '-' only.")
    return run_id


def _existing_run_dir(out: Path, run_id: str, flag: str) -> Path:
    folder = out / _checked_id(run_id, flag)
    if not folder.is_dir():
        raise UserError(f"there is no run {run_id!r} in {out} ({flag}); `passhat runs --out {out}` lists the runs.")
    return folder


def _check_output_file(path: Path, flag: str) -> None:
    """A file the run writes (its report at the end, its cache as it goes) must be writable: checked before
    any trial runs and before the run folder is made, so a long run never ends in an error about a path."""
    if path.is_dir():
        raise UserError(f"{flag} {path} is a folder; give the path of a file.")
    _check_writable_folder(path.parent, f"{flag} {path}")


def _check_writable_folder(folder: Path, what: str) -> None:
    """folder exists and can be written in, or can be made: its nearest existing ancestor is a writable folder."""
    ancestor = folder
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UserError(f"{what}: {ancestor} is a file, not a folder; choose a path in a folder.")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UserError(f"{what}: cannot write in {ancestor} (permission denied); choose a folder you can write to.")


def _make_out_folder(out: Path) -> None:
    _check_writable_folder(out, f"--out {out}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder ({exc.strerror or exc}); choose another --out.") from None


def _evaluate_with_progress(
    config: RunConfig, store: ResultStore, concurrency: int, gate: Gate | None, early_stop: bool
) -> Evaluation:
    """evaluate() under a progress bar; trials early stop skips advance it too, so it ends full."""
    total = len(plan_trials(config, store.completed_keys()))
    err.print(f"run {store.run_id}: {total} trials to run → {store.path.parent}")
    columns = [TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}")]
    if early_stop:
        columns.append(TextColumn("skipped {task.fields[skipped]}"))
    with Progress(*columns, TimeElapsedColumn(), console=err, transient=True) as progress:
        bar = progress.add_task("trials", total=total, failed=0, skipped=0)

        def advance(record: TrialRecord) -> None:
            failed = progress.tasks[0].fields["failed"] + (record.reward != 1)
            progress.update(bar, advance=1, failed=failed)

        def skip() -> None:
            progress.update(bar, advance=1, skipped=progress.tasks[0].fields["skipped"] + 1)

        return evaluate(config, store, concurrency, gate, early_stop, advance, skip)


def _tags(domain_name: str) -> dict[str, list[str]]:
    return {t.id: t.tags for t in load_domain(domain_name).tasks.values()}


def _print_report(report: dict[str, Any], json_path: Path | None) -> None:
    print_report(report, console)
    if json_path:
        write_json(report, json_path)
        err.print(f"JSON report written to {json_path}")


@main.command()
@click.argument("run_id")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON report here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the self-contained HTML report here.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), help="Write JUnit XML (one test case per scenario) here.")
@click.option("--max-transcripts", default=MAX_TRANSCRIPTS, show_default=True, type=click.IntRange(0), help="Most trial transcripts the HTML report embeds (failures first).")
@click.option("--gate", "gate_spec", metavar="SPEC", help='Show the verdict of the gate "k=8,min=0.9[,persona=P]" in the reports.')
@friendly
def report(
    run_id: str, out: Path, json_path: Path | None, html_path: Path | None, junit_path: Path | None,
    max_transcripts: int, gate_spec: str | None,
) -> None:
    """Print the report of a stored run (and optionally write its JSON, HTML and JUnit reports).

    Exit status 1 when no trial could be judged or the --gate is not met, like `run`."""
    gate = _run_gate(gate_spec, early_stop=False)
    with ResultStore.open(_existing_run_dir(out, run_id, "RUN_ID")) as store:
        _check_gate(gate, store.config, "--gate")
        trials = store.trials()
        doc = build_report(store, _tags(store.config["domain"]), trials, _gated_tasks(store.config["domain"]))
    decision = None
    if gate:
        counts = scenario_counts(t.to_outcome() for t in trials)
        decision = decide(gate, counts, planned_trials(doc["config"]))
        doc["gate"] = {**decision.to_json(), "ci": _gate_ci(gate, counts, decision)}
    _print_report(doc, json_path)
    if decision:
        print_gate(decision, console, doc["gate"]["ci"])
    if html_path:
        write_html(doc, trials, html_path, max_transcripts)
        err.print(f"HTML report written to {html_path}")
    if junit_path:
        write_junit(doc, junit_path)
        err.print(f"JUnit report written to {junit_path}")
    if doc["metrics"]["scenarios"] == 0 or (decision and not decision.meets):
        sys.exit(1)


def _gated_tasks(domain_name: str) -> set[str]:
    """The tasks that declare a human gate of their own (``guards:`` in the task file)."""
    return {t.id for t in load_domain(domain_name).tasks.values() if t.guards}


def _gate_ci(gate: Gate, counts: dict[tuple[str, str], tuple[int, int]], decision: Any) -> list[float] | None:
    """The 95% bootstrap interval of the gate's pass^k over its scenarios, once the run is finished."""
    gated = [cn for s, cn in counts.items() if gate.covers(s)]
    if decision.value is None or not gated or min(n for _, n in gated) < gate.k:
        return None
    return list(run_intervals(gated).pass_hat_k[gate.k])


def _stored_counts(out: Path, run_id: str, flag: str) -> tuple[dict[str, Any], dict[tuple[str, str], tuple[int, int]]]:
    """A stored run's configuration and (successes, judged trials) per scenario; no judged trial is a user error."""
    with ResultStore.open(_existing_run_dir(out, run_id, flag)) as store:
        config, counts = store.config, scenario_counts(t.to_outcome() for t in store.trials())
    if not counts:
        raise UserError(f"run {run_id!r} ({flag}) has no judged trial: there is nothing to measure.")
    return config, counts


@main.command("gate")
@click.argument("run_id")
@click.option("--k", "k", required=True, type=click.IntRange(1), help="pass^k's k: how many trials in a row must succeed.")
@click.option("--min-pass-hat-k", "minimum", required=True, type=click.FloatRange(0, 1), help="The bar pass^k must reach.")
@click.option("--persona", help="Judge only this persona's scenarios.")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@friendly
def gate_command(run_id: str, k: int, minimum: float, persona: str | None, out: Path) -> None:
    """Exit 0 when the run meets pass^k >= the bar, 1 when it does not, with a short reason."""
    gate = Gate(k, minimum, persona)
    config, counts = _stored_counts(out, run_id, "RUN_ID")
    _check_gate(gate, config, "--k / --persona")
    decision = decide(gate, counts, planned_trials(config))
    print_gate(decision, console, _gate_ci(gate, counts, decision))
    sys.exit(0 if decision.meets else 1)


@main.command()
@click.argument("run_id")
@click.option("--per-day", required=True, type=click.FloatRange(0, min_open=True), help="Conversations a day of each task.")
@click.option("--k-days", "days", default=7, show_default=True, type=click.IntRange(1), help="Days for the chance of a failure-free stretch.")
@click.option("--target", default=0.9, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True), help="Wanted chance of a day with no failure.")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the traffic view as JSON.")
@friendly
def traffic(run_id: str, per_day: float, days: int, target: float, out: Path, json_path: Path | None) -> None:
    """What the run means at N conversations a day: failures a day, chance of a clean day, success needed."""
    if not float("-inf") < per_day < float("inf"):
        raise UserError(f"--per-day {per_day} is not a number of conversations a day: give a finite number above 0.")
    config, counts = _stored_counts(out, run_id, "RUN_ID")
    if config.get("early_stop"):
        console.print("[bold red]early-stopped run: the figures are not estimates of the agent, use this run for the "
                      "gate decision only[/]", highlight=False)
    model, _ = select_model(group_counts(list(counts.values())))
    view = traffic_view(counts, model, per_day, days, target)
    print_traffic(view, model.name, console)
    if json_path:
        write_json({"run_id": run_id, "model": model.name, **view.to_json()}, json_path)


@main.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--intersection", is_flag=True, help="Compare only the scenarios both runs have.")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the comparison as JSON.")
@friendly
def compare(run_a: str, run_b: str, intersection: bool, out: Path, json_path: Path | None) -> None:
    """Paired comparison of RUN_B against RUN_A: changes with intervals, and whether they are noise."""
    _, a = _stored_counts(out, run_a, "RUN_A")
    _, b = _stored_counts(out, run_b, "RUN_B")
    try:
        result = compare_runs(a, b, intersection)
    except ScenarioMismatch as exc:
        example = ", ".join("/".join(s) for s in (exc.only_a + exc.only_b)[:3])  # type: ignore[arg-type]
        raise UserError(
            f"runs {run_a!r} and {run_b!r} cover different scenarios ({exc}; e.g. {example}); pass --intersection "
            "to compare only the scenarios both have."
        ) from None
    print_comparison(result, (run_a, run_b), console)
    if json_path:
        write_json({"run_a": run_a, "run_b": run_b, **result.to_json()}, json_path)


@main.command()
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
def runs(out: Path) -> None:
    """List stored runs, newest first, with their judged and planned trials; unreadable stores last."""
    table = Table("run", "created", "domain", "agent", "personas", "trials", "done/planned")
    entries = list_runs(out)
    for entry in entries:
        if entry.error:
            table.add_row(entry.folder, "[red]unreadable[/]", *["-"] * 5)
            continue
        cfg = entry.config
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.created or 0))
        progress = f"{entry.done}/{_planned_count(cfg)}" + (" (early stop)" if cfg.get("early_stop") else "")
        personas = cfg.get("personas")
        table.add_row(
            entry.folder, when, str(cfg.get("domain", "?")), str(cfg.get("agent", "?")),
            ",".join(map(str, personas)) if isinstance(personas, list) else "?", str(cfg.get("trials", "?")), progress,
        )
    console.print(table)
    for entry in entries:
        if entry.error:
            err.print(f"{entry.folder}: {entry.error}", highlight=False, markup=False, soft_wrap=True)


def _planned_count(config: dict[str, Any]) -> str:
    """tasks × personas × trials of a stored configuration, or "?" when it does not say."""
    tasks, personas, trials = config.get("tasks"), config.get("personas"), config.get("trials")
    if not (isinstance(tasks, list) and isinstance(personas, list) and isinstance(trials, int)):
        return "?"
    return str(len(set(map(str, tasks))) * len(set(map(str, personas))) * trials)


@main.command()
def domains() -> None:
    """List the domains."""
    table = Table("domain", "tasks", "tools", "rules", "description")
    for name in domain_names():
        d = load_domain(name)
        table.add_row(name, str(len(d.tasks)), str(len(d.tools)), str(len(d.rules)), d.description)
    console.print(table)


@main.group(invoke_without_command=True)
@click.option("--domain", default="retail", show_default=True, help="Domain whose tasks to list.")
@click.pass_context
@friendly
def tasks(ctx: click.Context, domain: str) -> None:
    """List a domain's tasks (`passhat tasks show ID` for one)."""
    ctx.obj = domain
    if ctx.invoked_subcommand:
        return
    table = Table("id", "writes", "tags", "summary")
    for t in load_domain(domain).tasks.values():
        table.add_row(t.id, str(len(t.actions)), ", ".join(t.tags), t.summary)
    console.print(table)


@tasks.command("show")
@click.argument("task_id")
@click.pass_context
@friendly
def tasks_show(ctx: click.Context, task_id: str) -> None:
    """Show one task in full."""
    (task,) = select_tasks(load_domain(ctx.obj), [task_id])
    console.print(yaml.safe_dump(task.model_dump(exclude_defaults=True), sort_keys=False, allow_unicode=True), highlight=False)


@main.command()
@click.option("--domain", default="retail", show_default=True, help="Domain whose tasks to prove.")
@click.option("--tasks", "task_ids", default="", help="Comma list of task ids (default: all).")
@click.option("-v", "--verbose", is_flag=True, help="Show every case, not only the ones that do not hold.")
@friendly
def check(domain: str, task_ids: str, verbose: bool) -> None:
    """Prove each task: its ground truth earns reward 1 and each near miss of it fails for the right reason."""
    d = load_domain(domain)
    chosen = select_tasks(d, [t.strip() for t in task_ids.split(",") if t.strip()])
    broken = 0
    for task in chosen:
        try:
            results = check_task(d, task)
        except GroundTruthError as exc:
            broken += 1
            console.print(f"{task.id}: [red]DOES NOT HOLD[/] {exc}", highlight=False)
            continue
        bad = [r for r in results if not r.holds]
        broken += bool(bad)
        status = "[green]ok[/]" if not bad else "[red]DOES NOT HOLD[/]"
        console.print(f"{task.id}: {status} ({len(results)} cases)")
        for r in results if verbose else bad:
            expect = "any signature" if r.case.expect == ANY_FAILURE else r.case.expect
            want = "reward 1" if expect is None else f"reward 0 / {expect}"
            got = f"reward {r.grade.reward} / {r.grade.signature}" if r.applied else "skipped: the backend rejects this near miss"
            console.print(f"    {r.case.label} [{r.case.mode}]: want {want}, got {got}", highlight=False, markup=False)
    console.print(f"{len(chosen) - broken} of {len(chosen)} tasks hold.")
    if broken:
        sys.exit(1)



@main.group()
def audit() -> None:
    """The audit trail of a guarded run (`--guard` with audit)."""


@audit.command("verify")
@click.argument("run_id")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@friendly
def audit_verify(run_id: str, out: Path) -> None:
    """Check that no entry of a run's audit log was edited, deleted or reordered (exit 1 if one was)."""
    folder = _existing_run_dir(out, run_id, "RUN_ID")
    if not (folder / AUDIT_FILE).exists() and not (folder / HEAD_FILE).exists():
        raise UserError(f"run {run_id!r} has no audit log ({folder / AUDIT_FILE}); run with --guard all or --guard audit.")
    entries, problems = verify_folder(folder)
    for problem in problems:  # may quote what an attacker wrote: never read it as markup
        console.print(problem, style="red", highlight=False, markup=False, soft_wrap=True)
    if problems:
        console.print(f"audit log of {run_id}: [red]TAMPERED[/] ({len(problems)} problems in {entries} entries)")
        sys.exit(1)
    console.print(f"audit log of {run_id}: [green]intact[/] ({entries} entries, chain and head verified)")



@main.group("guard")
def guard_group() -> None:
    """Compare what guards (and faults) changed between runs."""


@guard_group.command("compare")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--intersection", is_flag=True, help="Compare only the scenarios every run has.")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@friendly
def guard_compare(run_ids: tuple[str, ...], intersection: bool, out: Path) -> None:
    """Show runs side by side, e.g. `--guard off` and `--guard all` on the same seeds: pass^k, helpfulness,
    unconfirmed and duplicate writes, policy violations, refusals, handoffs (counts and per 100 trials).
    The runs must share their seed and scenarios (or pass --intersection)."""
    stores, trials = [], []
    for run_id in run_ids:
        with ResultStore.open(_existing_run_dir(out, run_id, "RUN_IDS")) as store:
            stores.append(store)
            trials.append(store.trials())
    seeds = {r: s.config.get("seed") for r, s in zip(run_ids, stores, strict=True)}
    if len(set(map(repr, seeds.values()))) > 1:
        raise UserError(
            "`passhat guard compare` compares runs on the same seeds, so each figure differs only by the guards or "
            f"faults; these runs have different seeds ({', '.join(f'{r}: {v}' for r, v in seeds.items())}). "
            "Rerun them with the same --seed."
        )
    scenario_sets = [set(scenario_counts(t.to_outcome() for t in ts)) for ts in trials]
    if any(not s for s in scenario_sets):
        raise UserError("a run given to `passhat guard compare` has no judged trial; compare finished runs.")
    shared = set.intersection(*scenario_sets)
    left_out = len(set.union(*scenario_sets) - shared)
    if left_out and not intersection:
        differ = [r for r, s in zip(run_ids, scenario_sets, strict=True) if s != shared]
        raise UserError(
            f"runs {', '.join(map(repr, run_ids))} cover different scenarios ({left_out} are not in every run, e.g. in "
            f"{differ[0]!r}); pass --intersection to compare only the {len(shared)} scenarios all of them have."
        )
    if not shared:
        raise UserError("the runs given to `passhat guard compare` share no scenario: there is nothing to compare.")
    reports = [
        build_report(store, _tags(store.config["domain"]), [t for t in ts if (t.task_id, t.persona) in shared],
                     _gated_tasks(store.config["domain"]))
        for store, ts in zip(stores, trials, strict=True)
    ]
    console.print(comparison_table(reports))
    if left_out:
        console.print(f"{left_out} scenarios not in every run were left out (--intersection).", highlight=False)


if __name__ == "__main__":
    main()
