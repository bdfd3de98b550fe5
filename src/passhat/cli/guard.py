"""Guarded runs: `passhat audit verify` (the audit trail) and `passhat guard compare` (what guards changed)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from passhat.cli import main
from passhat.cli.common import console, existing_run_dir, friendly, gated_tasks, out_option, tags
from passhat.errors import UserError
from passhat.guard import verify_folder
from passhat.guard.audit import AUDIT_FILE, HEAD_FILE
from passhat.metrics.summary import scenario_counts
from passhat.report import build_report
from passhat.report.caveats import run_caveats
from passhat.report.guard_section import comparison_table
from passhat.report.terminal import print_warnings
from passhat.store import ResultStore


@main.group()
def audit() -> None:
    """The audit trail of a guarded run (`--guard` with audit)."""


@audit.command("verify")
@click.argument("run_id")
@out_option
@friendly
def audit_verify(run_id: str, out: Path) -> None:
    """Check that no entry of a run's audit log was edited, deleted or reordered (exit 1 if one was)."""
    folder = existing_run_dir(out, run_id, "RUN_ID")
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
@out_option
@friendly
def guard_compare(run_ids: tuple[str, ...], intersection: bool, out: Path) -> None:
    """Show runs side by side, e.g. `--guard off` and `--guard all` on the same seeds: pass^k, helpfulness,
    unconfirmed and duplicate writes, policy violations, refusals, handoffs (counts and per 100 trials).
    The runs must share their seed and scenarios (or pass --intersection)."""
    stores, trials = [], []
    for run_id in run_ids:
        with ResultStore.open(existing_run_dir(out, run_id, "RUN_IDS")) as store:
            stores.append(store)
            trials.append(store.trials())
    seeds = {r: s.config.get("seed") for r, s in zip(run_ids, stores, strict=True)}
    if len(set(map(repr, seeds.values()))) > 1:
        raise UserError(
            "`passhat guard compare` compares runs on the same seeds, so each figure differs only by the guards or "
            f"faults; these runs have different seeds ({', '.join(f'{r}: {v}' for r, v in seeds.items())}). "
            "Rerun them with the same --seed."
        )
    counts = [scenario_counts(t.to_outcome() for t in ts) for ts in trials]
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
        build_report(store, tags(store.config["domain"]), [t for t in ts if (t.task_id, t.persona) in shared],
                     gated_tasks(store.config["domain"]))
        for store, ts in zip(stores, trials, strict=True)
    ]
    for run_id, store, run_counts in zip(run_ids, stores, counts, strict=True):  # each whole run, not the shared part
        print_warnings(run_caveats(run_id, store.config, run_counts).warnings, console, prefix=f"{run_id}: ")
    console.print(comparison_table(reports))
    if left_out:
        console.print(f"{left_out} scenarios not in every run were left out (--intersection).", highlight=False)
