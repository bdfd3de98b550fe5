"""The `passhat` command: parses, calls the library, prints. No evaluation logic lives here."""

from __future__ import annotations

import asyncio
import functools
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
from passhat.guard.audit import AUDIT_FILE
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
from passhat.run.config import RunConfig
from passhat.run.early_stop import EarlyStop
from passhat.run.runner import execute, new_config, plan_trials, select_tasks
from passhat.store import ResultStore, TrialRecord, list_runs

PRICES_META = "passhat.prices"  # where --config leaves the file's price table for the run command
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
@click.option("--agent-base-url", help="OpenAI-compatible server of an llm:openai/... agent (vLLM, Ollama, llama.cpp, OpenRouter).")
@click.option("--user-base-url", help="OpenAI-compatible server of an llm:openai/... customer.")
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
    gate = _run_gate(gate_spec, early_stop)
    if resume:
        overridden = [
            f"--{name.replace('_', '-')}" for name in options
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        ]
        if run_id:
            overridden.append("--run-id")
        if overridden:
            raise UserError(
                f"--resume reruns run {resume!r} with its stored configuration; drop {', '.join(overridden)} "
                "(only --out, --concurrency, --json, --gate and --early-stop apply to a resumed run)."
            )
        store = ResultStore.open(_existing_run_dir(out, resume, "--resume"))
        config = RunConfig.model_validate(store.config)
        _check_gate(gate, config.model_dump(), "--gate")
    else:
        config = new_config(**options, prices=ctx.meta.get(PRICES_META, {}))
        _check_gate(gate, config.model_dump(), "--gate")
        run_id = run_id or time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        store = ResultStore.create(out / _checked_id(run_id, "--run-id"), run_id, config.model_dump())
    with store:
        stopper = EarlyStop(gate, planned_trials(config.model_dump()), (t.to_outcome() for t in store.trials())) if gate and early_stop else None
        _execute_with_progress(config, store, concurrency, stopper)
        trials = store.trials()
        report = build_report(store, _tags(config.domain), trials)
    counts = scenario_counts(t.to_outcome() for t in trials)
    decision = decide(gate, counts, planned_trials(config.model_dump())) if gate else None
    if decision:
        report["gate"] = {**decision.to_json(), "trials_saved": stopper.skipped if stopper else 0}
    _print_report(report, json_path)
    if decision:
        print_gate(decision, console)
        if stopper:
            console.print(f"early stop: {stopper.skipped} of {config.trials * len(planned_trials(config.model_dump()))} planned trials saved")
    if report["metrics"]["scenarios"] == 0 or (decision and not decision.meets):
        sys.exit(1)


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
    except UserError as exc:
        raise click.BadParameter(str(exc)) from None
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


def _execute_with_progress(config: RunConfig, store: ResultStore, concurrency: int, stopper: EarlyStop | None = None) -> None:
    total = len(plan_trials(config, store.completed_keys()))
    err.print(f"run {store.run_id}: {total} trials to run → {store.path.parent}")
    columns = (TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task("trials", total=total, failed=0)

        def advance(record: TrialRecord) -> None:
            failed = progress.tasks[0].fields["failed"] + (record.reward != 1)
            progress.update(bar, advance=1, failed=failed)

        asyncio.run(execute(config, store, concurrency, advance, stopper))


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
    """Print the report of a stored run (and optionally write its JSON, HTML and JUnit reports)."""
    gate = _run_gate(gate_spec, early_stop=False)
    with ResultStore.open(_existing_run_dir(out, run_id, "RUN_ID")) as store:
        _check_gate(gate, store.config, "--gate")
        trials = store.trials()
        doc = build_report(store, _tags(store.config["domain"]), trials)
    if gate:
        doc["gate"] = decide(gate, scenario_counts(t.to_outcome() for t in trials), planned_trials(doc["config"])).to_json()
    _print_report(doc, json_path)
    if html_path:
        write_html(doc, trials, html_path, max_transcripts)
        err.print(f"HTML report written to {html_path}")
    if junit_path:
        write_junit(doc, junit_path)
        err.print(f"JUnit report written to {junit_path}")


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
    gated = [cn for s, cn in counts.items() if gate.covers(s)]
    ci = run_intervals(gated).pass_hat_k.get(k) if decision.value is not None else None
    print_gate(decision, console, ci)
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
    _, counts = _stored_counts(out, run_id, "RUN_ID")
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
    """List stored runs, newest first."""
    table = Table("run id", "created", "domain", "agent", "personas", "trials")
    for run_id, created, cfg in list_runs(out):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(created))
        table.add_row(run_id, when, cfg.get("domain", "?"), cfg.get("agent", "?"), ",".join(cfg.get("personas", [])), str(cfg.get("trials", "?")))
    console.print(table)


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
    if not (folder / AUDIT_FILE).is_file():
        raise UserError(f"run {run_id!r} has no audit log ({folder / AUDIT_FILE}); run with --guard all or --guard audit.")
    entries, problems = verify_folder(folder)
    for problem in problems:
        console.print(f"[red]{problem}[/]", highlight=False)
    if problems:
        console.print(f"audit log of {run_id}: [red]TAMPERED[/] ({len(problems)} problems in {entries} entries)")
        sys.exit(1)
    console.print(f"audit log of {run_id}: [green]intact[/] ({entries} entries, chain and head verified)")



@main.group("guard")
def guard_group() -> None:
    """Compare what guards (and faults) changed between runs."""


@guard_group.command("compare")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@friendly
def guard_compare(run_ids: tuple[str, ...], out: Path) -> None:
    """Show runs side by side, e.g. `--guard off` and `--guard all` on the same seeds: pass^k, helpfulness,
    unconfirmed and duplicate writes, policy violations, refusals, handoffs."""
    reports = []
    for run_id in run_ids:
        with ResultStore.open(_existing_run_dir(out, run_id, "RUN_IDS")) as store:
            reports.append(build_report(store, _tags(store.config["domain"])))
    if any(not r["metrics"]["scenarios"] for r in reports):
        raise UserError("a run given to `passhat guard compare` has no judged trial; compare finished runs.")
    console.print(comparison_table(reports))


if __name__ == "__main__":
    main()
