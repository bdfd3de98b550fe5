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

from passhat.domains import domain_names, load_domain
from passhat.errors import UserError
from passhat.grade import MODES, GroundTruthError
from passhat.grade.check import check_task
from passhat.report import build_report, print_report, write_json
from passhat.run.config import RunConfig
from passhat.run.runner import execute, new_config, plan_trials, select_tasks
from passhat.store import ResultStore, TrialRecord, list_runs

console = Console()
err = Console(stderr=True)


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a UserError into a one-paragraph message and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except UserError as exc:
            err.print(f"[red]error:[/] {exc}", highlight=False)
            sys.exit(2)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="passhat")
def main() -> None:
    """passhat: will this agent do this job right every time a customer asks? (pass^k, not pass@1)"""


@main.command()
@click.option("--domain", default="retail", show_default=True, help="Domain to evaluate in.")
@click.option("--agent", default="reference:flaky", show_default=True, help="Agent under test: reference:perfect|flaky|hasty.")
@click.option("--user", default="scripted", show_default=True, help="Customer simulator.")
@click.option("--personas", default="all", show_default=True, help="Comma list of personas, or 'all'.")
@click.option("--tasks", default="", help="Comma list of task ids (default: every task of the domain).")
@click.option("--trials", default=8, show_default=True, type=click.IntRange(1, 1000), help="Trials per scenario (n).")
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed; each trial's seed derives from it.")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 256), help="Trials in flight at once.")
@click.option("--mode", default="strict", show_default=True, type=click.Choice(MODES), help="strict: state × output × trajectory; tau: state × output.")
@click.option("--max-turns", default=30, show_default=True, type=click.IntRange(1, 500), help="Agent messages before a trial stops.")
@click.option("--out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path), help="Folder that holds run folders.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the JSON report here.")
@click.option("--resume", metavar="RUN_ID", help="Finish an interrupted run: only its missing trials run.")
@click.option("--run-id", help="Name of the new run's folder (default: a timestamp).")
@click.pass_context
@friendly
def run(
    ctx: click.Context, out: Path, concurrency: int, json_path: Path | None, resume: str | None, run_id: str | None,
    **options: Any,
) -> None:
    """Run an evaluation and print its report."""
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
                "(only --out, --concurrency and --json apply to a resumed run)."
            )
        store = ResultStore.open(_existing_run_dir(out, resume, "--resume"))
        config = RunConfig.model_validate(store.config)
    else:
        config = new_config(**options)
        run_id = run_id or time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        store = ResultStore.create(out / _checked_id(run_id, "--run-id"), run_id, config.model_dump())
    with store:
        _execute_with_progress(config, store, concurrency)
        report = build_report(store, _tags(config.domain))
    _print_report(report, json_path)
    if report["metrics"]["scenarios"] == 0:
        sys.exit(1)


def _checked_id(run_id: str, flag: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", run_id):
        raise UserError(f"{run_id!r} is not a run id ({flag}): use letters, digits, '.', '_' and '-' only.")
    return run_id


def _existing_run_dir(out: Path, run_id: str, flag: str) -> Path:
    folder = out / _checked_id(run_id, flag)
    if not folder.is_dir():
        raise UserError(f"there is no run {run_id!r} in {out} ({flag}); `passhat runs --out {out}` lists the runs.")
    return folder


def _execute_with_progress(config: RunConfig, store: ResultStore, concurrency: int) -> None:
    total = len(plan_trials(config, store.completed_keys()))
    err.print(f"run {store.run_id}: {total} trials to run → {store.path.parent}")
    columns = (TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task("trials", total=total, failed=0)

        def advance(record: TrialRecord) -> None:
            failed = progress.tasks[0].fields["failed"] + (record.reward != 1)
            progress.update(bar, advance=1, failed=failed)

        asyncio.run(execute(config, store, concurrency, advance))


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
@friendly
def report(run_id: str, out: Path, json_path: Path | None) -> None:
    """Print the report of a stored run (and optionally write its JSON)."""
    with ResultStore.open(_existing_run_dir(out, run_id, "RUN_ID")) as store:
        doc = build_report(store, _tags(store.config["domain"]))
    _print_report(doc, json_path)


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
            want = "reward 1" if r.case.expect is None else f"reward 0 / {r.case.expect}"
            got = f"reward {r.grade.reward} / {r.grade.signature}" if r.applied else "skipped: the backend rejects this near miss"
            console.print(f"    {r.case.label} [{r.case.mode}]: want {want}, got {got}", highlight=False)
    console.print(f"{len(chosen) - broken} of {len(chosen)} tasks hold.")
    if broken:
        sys.exit(1)


if __name__ == "__main__":
    main()
