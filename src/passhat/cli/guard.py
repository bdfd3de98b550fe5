"""Guarded runs: `passhat audit verify` (the audit trail), `passhat guard compare` (what guards changed) and
`passhat guard ablate` (what each guard bought)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from passhat.cli import main
from passhat.cli.common import (
    OutputFile,
    PlainText,
    console,
    domain_options,
    err,
    existing_run_dir,
    folder_problem,
    out_option,
    parallel_options,
    tags,
)
from passhat.errors import UserError
from passhat.run.stored import gated_tasks
from passhat.store import ResultStore

if TYPE_CHECKING:
    from passhat.metrics.summary import Scenario
    from passhat.report.model import Report
    from passhat.run.ablation import AblationRun
    from passhat.run_config import RunConfig


@main.group()
def audit() -> None:
    """The audit trail of a guarded run (`--guard` with audit)."""


@audit.command("verify")
@click.argument("run_id")
@click.option(
    "--anchor",
    metavar="SEQ:HASH",
    help="A head recorded earlier (the `head` line this command prints): exit 1 unless the log still holds it.",
)
@out_option
def audit_verify(run_id: str, anchor: str | None, out: Path) -> None:
    """Prove with the audit key that no entry of a run's audit trail was edited, added, deleted, reordered
    or cut, and that each stored trial has all its entries (exit 1 if tampered, 2 if it cannot be proven)."""
    from passhat.guard.audit import load_key
    from passhat.run.audit_trail import verify_run

    folder = existing_run_dir(out, run_id, "RUN_ID")
    result = verify_run(folder, load_key(create=False), _anchor(anchor))
    for problem in result.problems:  # may quote what an attacker wrote: never read it as markup
        console.print(problem, style="red", highlight=False, markup=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    if result.problems:
        console.print(f"audit log of {run_id}: [red]TAMPERED[/] ({len(result.problems)} problems in {result.entries} entries)")
        sys.exit(1)
    if result.unproven:
        raise UserError(
            f"the audit log of run {run_id!r} cannot be proven intact: {result.unproven}. The checks that need no key "
            "passed, but a rewrite with passhat's own code passes them too."
        )
    sealed = f" sealed with audit key {result.key_id}" if result.key_id else ""
    trials = f"; each of its {result.trials} stored trials has all its entries and its sealed result" if result.trials else ""
    console.print(
        f"audit log of {run_id}: [green]intact[/] ({result.entries} entries{sealed}{trials})", highlight=False, soft_wrap=True
    )
    console.print(
        "proven: no entry edited, added, deleted, reordered or rewritten without the key. Not provable from the "
        "folder alone: its last entries cut together with their trials; record the head elsewhere and check it "
        "later with --anchor.",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"head {result.head[0]}:{result.head[1]}", highlight=False)


def _anchor(spec: str | None) -> tuple[int, str] | None:
    """--anchor SEQ:HASH as (seq, hash)."""
    if spec is None:
        return None
    seq, _, seal = spec.partition(":")
    if not (seq.isascii() and seq.isdigit() and len(seal) == 64 and all(c in "0123456789abcdef" for c in seal)):
        raise UserError(
            f"--anchor {spec!r} is not a head: write SEQ:HASH as `passhat audit verify` prints it "
            "(e.g. 24:9f86d0...; the hash has 64 hex digits)."
        )
    return int(seq), seal


@main.group("guard")
def guard_group() -> None:
    """Compare what guards (and faults) changed between runs."""


@guard_group.command("compare")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--intersection", is_flag=True, help="Compare only the scenarios every run has.")
@out_option
def guard_compare(run_ids: tuple[str, ...], intersection: bool, out: Path) -> None:
    """Show runs side by side, e.g. `--guard off` and `--guard all` on the same seeds: pass^k, helpfulness,
    unconfirmed and duplicate writes, policy violations, refusals, handoffs (counts and per 100 trials).
    The runs must share their seed and scenarios (or pass --intersection)."""
    from passhat.report.caveats import run_caveats
    from passhat.report.guard_section import comparison_table
    from passhat.report.terminal import print_warnings
    from passhat.run_config import stored_config

    with contextlib.ExitStack() as open_stores:  # each report reads its run's store as it is built
        stores = [open_stores.enter_context(ResultStore.open(existing_run_dir(out, r, "RUN_IDS"))) for r in run_ids]
        configs = [stored_config(store) for store in stores]
        reports, counts, left_out = _compared(run_ids, list(zip(stores, configs, strict=True)), intersection)
    for run_id, config, run_counts in zip(run_ids, configs, counts, strict=True):  # each whole run, not the shared part
        print_warnings(run_caveats(run_id, config, run_counts).warnings, console, prefix=f"{run_id}: ")
    console.print(comparison_table(reports))
    if left_out:
        console.print(f"{left_out} scenarios not in every run were left out (--intersection).", highlight=False)


def _compared(
    run_ids: tuple[str, ...], runs: list[tuple[ResultStore, RunConfig]], intersection: bool
) -> tuple[list[Report], list[dict[Scenario, tuple[int, int]]], int]:
    """Each run's report over the scenarios every run has, each whole run's scenario counts, and how many
    scenarios were left out (``runs``: each run's store and its configuration)."""
    from passhat.metrics.summary import scenario_counts
    from passhat.report import build_report

    counts = [scenario_counts(t.to_result() for t in store.trial_rows()) for store, _ in runs]
    seeds = {r: config.seed for r, (_, config) in zip(run_ids, runs, strict=True)}
    if len(set(map(repr, seeds.values()))) > 1:
        raise UserError(
            "`passhat guard compare` compares runs on the same seeds, so each figure differs only by the guards or "
            f"faults; these runs have different seeds ({', '.join(f'{r}: {v}' for r, v in seeds.items())}). "
            "Rerun them with the same --seed."
        )
    scenario_sets = [set(c) for c in counts]
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
        build_report(
            store,
            tags(config),
            gated_tasks=gated_tasks(config),
            scenarios=shared,
        )
        for store, config in runs
    ]
    return reports, counts, left_out


@guard_group.command("ablate")
@domain_options("to evaluate in")
@click.option(
    "--agent", default="reference:flaky", show_default=True, type=PlainText(), help="Agent under test, as `passhat run` takes it."
)
@click.option(
    "--faults",
    default="",
    help="Fault plan, as `passhat run` takes it (e.g. timeout=0.1,lost_response=0.1): without faults guards have little to catch.",
)
@click.option(
    "--trials", default=8, show_default=True, type=click.IntRange(1, 1000), help="Trials per scenario (n) of each configuration."
)
@click.option("--tasks", default="", help="Comma list of task ids (default: every task of the domain).")
@click.option("--personas", default="all", show_default=True, help="Comma list of personas, or 'all'.")
@click.option(
    "--seed", default=0, show_default=True, type=int, help="Run seed of every configuration: the same trial seeds in each."
)
@click.option(
    "--guards",
    "guards_spec",
    default="all",
    show_default=True,
    help="The guards to ablate: all, or a comma list of idempotency,confirmation,policy,payments,human_gate,audit.",
)
@click.option("--k", type=click.IntRange(1), help="pass^k's k (default: --trials).")
@parallel_options("Worker processes running each configuration's trials (1: in this process).")
@out_option
@click.option("--json", "json_path", type=OutputFile(), help="Also write the ablation as JSON.")
def guard_ablate(
    domain: str,
    tasks_dir: str | None,
    agent: str,
    faults: str,
    trials: int,
    tasks: str,
    personas: str,
    seed: int,
    guards_spec: str,
    k: int | None,
    concurrency: int,
    workers: int,
    out: Path,
    json_path: Path | None,
) -> None:
    """Run off, each guard alone, all but each guard, and all of them on the same seeds, each a stored run (a rerun
    resumes them), and print one table: pass^1, pass^k, duplicate / unconfirmed / policy-violating writes, refusals,
    handoffs and helpfulness, each with its interval and its paired difference to off."""
    from passhat.domains import domain_ref
    from passhat.guard.ablation import BASELINE, ablated_guards
    from passhat.metrics.ablation import NothingCompared, ablation_figures
    from passhat.report import write_json
    from passhat.report.ablation import ablation_document, ablation_table
    from passhat.run.ablation import ablation_id, ablation_runs, judged_trials
    from passhat.run.runner import new_config

    guards = ablated_guards(guards_spec)
    if k is not None and k > trials:
        raise UserError(f"--k {k} exceeds --trials {trials}: pass^k needs k trials of each scenario; give --k at most {trials}.")
    problem = folder_problem(out)
    if problem:
        raise UserError(f"--out {out}: {problem}.")
    options = {"domain": domain_ref(domain), "tasks_dir": str(Path(tasks_dir).resolve()) if tasks_dir else None}
    base = new_config(
        **options, agent=agent, user="scripted", personas=personas, tasks=tasks, trials=trials, seed=seed, faults=faults,
        guard=",".join(guards),  # checks what the guards need (the audit key) before any run folder is made
    ).model_copy(update={"guard": []})  # fmt: skip
    name = ablation_id(base, guards)
    with ablation_runs(base, guards, out) as runs:
        _execute_with_progress(name, runs, concurrency, workers)
        judged = {run.configuration.name: judged_trials(run.store) for run in runs}
    try:
        figures = ablation_figures(judged, BASELINE, k or trials)
    except NothingCompared:
        console.print(f"ablation {name}: no trial could be judged in every configuration; see `passhat report {runs[0].run_id}`.")
        sys.exit(1)
    document = ablation_document(name, base, guards, [run.configuration for run in runs], figures)
    console.print(ablation_table(document))
    if figures.left_out:
        console.print(f"{figures.left_out} trials judged in some configurations but not all were left out.", highlight=False)
    console.print(f"runs: {', '.join(c.run_id for c in document.configurations)} (each readable with `passhat report`)")
    if json_path:
        write_json(document.model_dump(mode="json"), json_path)
        err.print(f"JSON written to {json_path}", highlight=False, markup=False)


def _execute_with_progress(name: str, runs: list[AblationRun], concurrency: int, workers: int) -> None:
    """Every configuration's missing trials under one progress bar; interrupted, the stored trials stay for a rerun."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from passhat.cli.run import REDRAWS_PER_SECOND, Throttle
    from passhat.report.numbers import counted
    from passhat.run.ablation import execute_run, missing_trials

    total = missing_trials(runs)
    err.print(f"ablation {name}: {counted(len(runs), 'configuration')}, {counted(total, 'trial')} to run", highlight=False)
    columns = [TextColumn("{task.fields[configuration]}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=err, transient=True, auto_refresh=False) as progress:
        bar = progress.add_task("trials", total=total, configuration="")
        redraw = Throttle(progress.refresh, 1 / REDRAWS_PER_SECOND)

        def advance(_: object) -> None:
            progress.update(bar, advance=1)
            redraw()

        try:
            for run in runs:
                progress.update(bar, configuration=run.configuration.name)
                execute_run(run, concurrency, workers, advance)
        except KeyboardInterrupt:  # every stored trial is committed: the same command runs the rest
            err.print(f"interrupted: rerun the same command to finish ablation {name}", highlight=False, markup=False)
            sys.exit(130)
