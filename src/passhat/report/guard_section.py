"""The faults-and-guards part of a report: per-class recovery, guard figures, and guarded vs unguarded runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from passhat.metrics.faults import fault_metrics
from passhat.metrics.guard import guard_metrics
from passhat.report.model import GuardFigures, Metrics, Report
from passhat.report.numbers import num, per_100
from passhat.report.reading import RunReading
from passhat.run_config import RunConfig

COMPARED = ("unconfirmed_writes", "duplicate_writes", "policy_violations", "refusals", "handoffs")
UNITS = {
    "unconfirmed_writes": "writes",
    "duplicate_writes": "writes",
    "policy_violations": "writes",
    "refusals": "guard decisions",
    "handoffs": "tickets",
}


def safety_metrics(config: RunConfig, reading: RunReading, gated_tasks: Iterable[str] | None = None) -> dict[str, Any]:
    """``{"faults": ..., "guard": ...}`` for the JSON report's metrics, measured whether or not either is on."""
    return {
        "faults": fault_metrics(reading.faults),
        "guard": guard_metrics(config.guard, reading.guard, gated_tasks),
    }


def guard_line(g: GuardFigures) -> str:
    """The guard figures in one line, each with its unit: the write figures count writes, not trials
    (unlike the failure-signature table), and handoffs say how many a task's own gate made."""
    handoffs = f"handoffs {g.handoffs} tickets"
    declared = g.handoffs_task_declared
    if g.handoffs and declared:
        handoffs += (
            f" (all {declared} from task-declared human gates, which apply whatever --guard says)"
            if declared == g.handoffs
            else f" ({declared} of them from task-declared human gates)"
        )
    return (
        f"guards: {', '.join(g.enabled) or 'off'} — over {g.trials:,} judged trials, counted in writes "
        f"(a trial can hold several; the failure table counts trials): unconfirmed {g.unconfirmed_writes}, "
        f"duplicate {g.duplicate_writes}, policy-violating {g.policy_violations}; guard refusals "
        f"{g.refusals}, {handoffs}; helpfulness {num(g.helpfulness)} (trials of write tasks whose required "
        "writes all happened)"
    )


def print_safety(metrics: Metrics, console: Console) -> None:
    """The faults table when any fault was injected, then the guard figures."""
    if metrics.faults:
        table = Table(title="faults: injected, trials hit, and the share of those that still passed (recovery)")
        for col in ("fault", "injected", "trials hit", "passed", "recovery"):
            table.add_column(col, justify="left" if col == "fault" else "right")
        for name, f in metrics.faults.items():
            table.add_row(Text(name), str(f.injected), str(f.trials_affected), str(f.trials_passed), num(f.recovery))
        console.print(table)
    console.print(guard_line(metrics.guard), highlight=False, markup=False, soft_wrap=True)


def comparison_table(reports: Sequence[Report]) -> Table:
    """Runs side by side (same seeds, other guards or faults): pass^k next to what the guards changed,
    each count with its rate per 100 judged trials (runs can hold different numbers of judged trials)."""
    n = min(r.metrics.trials_per_scenario for r in reports)
    table = Table(title="guarded vs unguarded (same seeds): a guard that wins by refusing everything loses helpfulness")
    table.add_column("figure")
    for r in reports:
        cfg = r.run_config
        faults = ",".join(f"{k}={v}" for k, v in cfg.faults.items()) or "none"
        header = f"{r.run_id}\nguard {','.join(cfg.guard) or 'off'}\nfaults {faults}"
        table.add_column(escape(header), justify="right")
    guards = [r.metrics.guard for r in reports]
    table.add_row("judged trials", *(str(g.trials) for g in guards))
    for k in sorted({1, n}):
        table.add_row(f"pass^{k}", *(num(r.metrics.pass_hat_k.get(k)) for r in reports))
    table.add_row("helpfulness", *(num(g.helpfulness) for g in guards))
    for figure in COMPARED:
        counts = [(getattr(g, figure), g.trials) for g in guards]
        table.add_row(f"{figure.replace('_', ' ')} ({UNITS[figure]})", *(f"{c} ({per_100(c, t)})" for c, t in counts))
    return table
