"""The faults-and-guards part of a report: per-class recovery, guard figures, and guarded vs unguarded runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from passhat.faults.measure import fault_metrics
from passhat.guard.measure import guard_metrics
from passhat.store import TrialRecord

COMPARED = ("unconfirmed_writes", "duplicate_writes", "policy_violations", "refusals", "handoffs")


def safety_metrics(config: dict[str, Any], trials: Sequence[TrialRecord]) -> dict[str, Any]:
    """``{"faults": ..., "guard": ...}`` for the JSON report's metrics, measured whether or not either is on."""
    return {
        "faults": fault_metrics((t.reward, t.events) for t in trials),
        "guard": guard_metrics(config.get("guard", []), ((t.reward, t.grade, t.events) for t in trials)),
    }


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def print_safety(metrics: dict[str, Any], console: Console) -> None:
    """The faults table when any fault was injected, then the guard figures."""
    if metrics.get("faults"):
        table = Table(title="faults: injected, trials hit, and the share of those that still passed (recovery)")
        for col in ("fault", "injected", "trials hit", "passed", "recovery"):
            table.add_column(col, justify="left" if col == "fault" else "right")
        for name, f in metrics["faults"].items():
            rate = f["trials_passed"] / f["trials_affected"] if f["trials_affected"] else None
            table.add_row(name, str(f["injected"]), str(f["trials_affected"]), str(f["trials_passed"]), _fmt(rate))
        console.print(table)
    g = metrics.get("guard")
    if g:
        console.print(
            f"guards: {', '.join(g['enabled']) or 'off'} — unconfirmed writes {g['unconfirmed_writes']}, duplicate writes "
            f"{g['duplicate_writes']}, policy violations {g['policy_violations']}, refusals {g['refusals']}, handoffs "
            f"{g['handoffs']}, helpfulness {_fmt(g['helpfulness'])}",
            highlight=False,
        )


def comparison_table(reports: Sequence[dict[str, Any]]) -> Table:
    """Runs side by side (same seeds, other guards or faults): pass^k next to what the guards changed."""
    n = min(r["metrics"]["trials_per_scenario"] for r in reports)
    table = Table(title="guarded vs unguarded (same seeds): a guard that wins by refusing everything loses helpfulness")
    table.add_column("figure")
    for r in reports:
        cfg = r["config"]
        faults = ",".join(f"{k}={v}" for k, v in cfg.get("faults", {}).items()) or "none"
        table.add_column(f"{r['run_id']}\nguard {','.join(cfg.get('guard', [])) or 'off'}\nfaults {faults}", justify="right")
    for k in sorted({1, n}):
        table.add_row(f"pass^{k}", *(_fmt(r["metrics"]["pass_hat_k"].get(str(k))) for r in reports))
    table.add_row("helpfulness", *(_fmt(r["metrics"]["guard"]["helpfulness"]) for r in reports))
    for figure in COMPARED:
        table.add_row(figure.replace("_", " "), *(str(r["metrics"]["guard"][figure]) for r in reports))
    return table
