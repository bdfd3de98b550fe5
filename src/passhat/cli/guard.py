"""Guarded runs: `passhat audit verify` (the audit trail) and `passhat guard compare` (what guards changed)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from passhat.cli import main
from passhat.cli.common import console, existing_run_dir, gated_tasks, out_option, tags
from passhat.errors import UserError
from passhat.store import ResultStore

if TYPE_CHECKING:
    from passhat.metrics.summary import Scenario
    from passhat.report.model import Report


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

    with contextlib.ExitStack() as open_stores:  # each report reads its run's store as it is built
        stores = [open_stores.enter_context(ResultStore.open(existing_run_dir(out, r, "RUN_IDS"))) for r in run_ids]
        reports, counts, left_out = _compared(run_ids, stores, intersection)
    for run_id, store, run_counts in zip(run_ids, stores, counts, strict=True):  # each whole run, not the shared part
        print_warnings(run_caveats(run_id, store.config, run_counts).warnings, console, prefix=f"{run_id}: ")
    console.print(comparison_table(reports))
    if left_out:
        console.print(f"{left_out} scenarios not in every run were left out (--intersection).", highlight=False)


def _compared(
    run_ids: tuple[str, ...], stores: list[ResultStore], intersection: bool
) -> tuple[list[Report], list[dict[Scenario, tuple[int, int]]], int]:
    """Each run's report over the scenarios every run has, each whole run's scenario counts, and how many
    scenarios were left out."""
    from passhat.metrics.summary import scenario_counts
    from passhat.report import build_report

    counts = [scenario_counts(t.to_outcome() for t in store.trial_rows()) for store in stores]
    seeds = {r: s.config.get("seed") for r, s in zip(run_ids, stores, strict=True)}
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
            tags(store.config["domain"], store.config.get("tasks_dir")),
            gated_tasks=gated_tasks(store.config["domain"], store.config.get("tasks_dir")),
            scenarios=shared,
        )
        for store in stores
    ]
    return reports, counts, left_out
