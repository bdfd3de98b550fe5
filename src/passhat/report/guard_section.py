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
from passhat.report.numbers import num, per_100
from passhat.store import TrialRecord

COMPARED = ("unconfirmed_writes", "duplicate_writes", "policy_violations", "refusals", "handoffs")
UNITS = {
    "unconfirmed_writes": "writes",
    "duplicate_writes": "writes",
    "policy_violations": "writes",
    "refusals": "guard decisions",
    "handoffs": "tickets",
}


def safety_metrics(
    config: dict[str, Any], trials: Sequence[TrialRecord], gated_tasks: Iterable[str] | None = None
) -> dict[str, Any]:
    """``{"faults": ..., "guard": ...}`` for the JSON report's metrics, measured whether or not either is on."""
    return {
        "faults": fault_metrics((t.reward, t.events) for t in trials),
        "guard": guard_metrics(config.get("guard", []), ((t.task_id, t.reward, t.grade, t.events) for t in trials), gated_tasks),
    }


def guard_line(g: dict[str, Any]) -> str:
    """The guard figures in one line, each with its unit: the write figures count writes, not trials
    (unlike the failure-signature table), and handoffs say how many a task's own gate made."""
    handoffs = f"handoffs {g['handoffs']} tickets"
    declared = g.get("handoffs_task_declared")
    if g["handoffs"] and declared:
        handoffs += (
            f" (all {declared} from task-declared human gates, which apply whatever --guard says)"
            if declared == g["handoffs"]
            else f" ({declared} of them from task-declared human gates)"
        )
    return (
        f"guards: {', '.join(g['enabled']) or 'off'} — over {g.get('trials', 0):,} judged trials, counted in writes "
        f"(a trial can hold several; the failure table counts trials): unconfirmed {g['unconfirmed_writes']}, "
        f"duplicate {g['duplicate_writes']}, policy-violating {g['policy_violations']}; guard refusals "
        f"{g['refusals']}, {handoffs}; helpfulness {num(g['helpfulness'])} (trials of write tasks whose required "
        "writes all happened)"
    )


def print_safety(metrics: dict[str, Any], console: Console) -> None:
    """The faults table when any fault was injected, then the guard figures."""
    if metrics.get("faults"):
        table = Table(title="faults: injected, trials hit, and the share of those that still passed (recovery)")
        for col in ("fault", "injected", "trials hit", "passed", "recovery"):
            table.add_column(col, justify="left" if col == "fault" else "right")
        for name, f in metrics["faults"].items():
            rate = f["trials_passed"] / f["trials_affected"] if f["trials_affected"] else None
            table.add_row(Text(name), str(f["injected"]), str(f["trials_affected"]), str(f["trials_passed"]), num(rate))
        console.print(table)
    g = metrics.get("guard")
    if g:
        console.print(guard_line(g), highlight=False, markup=False, soft_wrap=True)


def comparison_table(reports: Sequence[dict[str, Any]]) -> Table:
    """Runs side by side (same seeds, other guards or faults): pass^k next to what the guards changed,
    each count with its rate per 100 judged trials (runs can hold different numbers of judged trials)."""
    n = min(r["metrics"]["trials_per_scenario"] for r in reports)
    table = Table(title="guarded vs unguarded (same seeds): a guard that wins by refusing everything loses helpfulness")
    table.add_column("figure")
    for r in reports:
        cfg = r["config"]
        faults = ",".join(f"{k}={v}" for k, v in cfg.get("faults", {}).items()) or "none"
        header = f"{r['run_id']}\nguard {','.join(cfg.get('guard', [])) or 'off'}\nfaults {faults}"
        table.add_column(escape(header), justify="right")
    table.add_row("judged trials", *(str(r["metrics"]["guard"]["trials"]) for r in reports))
    for k in sorted({1, n}):
        table.add_row(f"pass^{k}", *(num(r["metrics"]["pass_hat_k"].get(str(k))) for r in reports))
    table.add_row("helpfulness", *(num(r["metrics"]["guard"]["helpfulness"]) for r in reports))
    for figure in COMPARED:
        table.add_row(
            f"{figure.replace('_', ' ')} ({UNITS[figure]})",
            *(
                f"{r['metrics']['guard'][figure]} ({per_100(r['metrics']['guard'][figure], r['metrics']['guard']['trials'])})"
                for r in reports
            ),
        )
    return table
