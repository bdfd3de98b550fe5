"""Terminal views of the reliability statistics: intervals, extrapolation, partition, compounding,
the gate's verdict, the traffic view and run comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from passhat.metrics.compare import Comparison
from passhat.metrics.extrapolate import EXTRAPOLATE_KS
from passhat.metrics.gate import Decision
from passhat.metrics.traffic import TrafficView


def with_ci(value: float | None, ci: Sequence[float] | None) -> str:
    """0.726 [0.670, 0.783]: a figure with its 95% interval."""
    if value is None:
        return "—"
    return _num(value) if ci is None else f"{_num(value)} [{_num(ci[0])}, {_num(ci[1])}]"


def _num(x: float) -> str:
    """Three decimals, or two significant digits for the tiny figures extrapolation produces."""
    return f"{x:.1e}" if 0 < x < 0.0005 else f"{x:.3f}"


def print_reliability(m: dict[str, Any], console: Console) -> None:
    """Extrapolated pass^k, the partition by persona, and the compounding curve."""
    console.print(_extrapolated(m["extrapolated"], m["trials_per_scenario"]))
    console.print(_partition(m))
    if m["compounding"]:
        console.print(_compounding(m["compounding"]))


def _extrapolated(x: dict[str, Any], n: int) -> Table:
    agree = "agrees with" if all(x["agrees"].values()) else "departs from"
    table = Table(
        title=f"pass^k beyond n = {n} (model-based: {x['model']}, lowest BIC)",
        caption=f"For k <= n the fit {agree} the exact estimator (largest gap {x['max_gap']:.3f}). "
        "Assumptions: in the HTML report and metrics.extrapolated.assumptions.",
    )
    table.add_column("k", justify="right")
    table.add_column("predicted pass^k [95% CI]", justify="right")
    for k in EXTRAPOLATE_KS:
        table.add_row(str(k), with_ci(x["pass_hat_k"][str(k)], x["ci"][str(k)]))
    return table


def _partition(m: dict[str, Any]) -> Table:
    table = Table(title="partition: reliable (every trial passed) / unreliable (some) / out of reach (none)")
    for col in ("", "reliable", "unreliable", "out of reach"):
        table.add_column(col, justify="right" if col else "left")
    rows = [("all scenarios", m["partition"])] + [(f"persona {p}", v) for p, v in m["partition_by"]["persona"].items()]
    rows += [(f"tag {t}", v) for t, v in m["partition_by"]["tag"].items()]
    for label, part in rows:
        table.add_row(label, str(part["reliable"]), str(part["unreliable"]), str(part["out_of_reach"]))
    return table


def _compounding(points: list[dict[str, Any]]) -> Table:
    table = Table(title="compounding: success against the number of writes a task needs")
    for col in ("writes", "scenarios", "avg reward [95% CI]", "pass^k [95% CI]"):
        table.add_column(col, justify="right")
    for p in points:
        table.add_row(str(p["writes"]), str(p["scenarios"]), with_ci(p["avg_reward"], p["avg_reward_ci"]),
                      f"k={p['k']}: " + with_ci(p["pass_hat_k"], p["pass_hat_k_ci"]))
    return table


def print_gate(decision: Decision, console: Console, ci: Sequence[float] | None = None) -> None:
    verdict = {True: "[green]MEETS THE BAR[/]", False: "[red]DOES NOT MEET THE BAR[/]", None: "[yellow]UNDECIDED[/]"}
    interval = f" (95% CI [{ci[0]:.3f}, {ci[1]:.3f}])" if ci else ""
    console.print(f"gate {decision.gate}: {verdict[decision.meets]} — {decision.reason}{interval}", highlight=False)


def print_traffic(view: TrafficView, model: str, console: Console) -> None:
    table = Table(
        title=f"traffic: {view.per_day:g} conversations a day per task, split evenly over its personas "
        f"(model-based: {model} prior, each scenario's own trials update it)"
    )
    cols = ("task", "success", "failed / day", "P(no failure in a day)", f"P(none in {view.days} days)",
            f"success needed for P(clean day) >= {view.target:g}")
    for col in cols:
        table.add_column(col, justify="left" if col == "task" else "right")
    for t in view.tasks:
        needed = f"[green]{t.needed:.5f}[/]" if t.meets_target else f"[red]{t.needed:.5f}[/]"
        table.add_row(t.task_id, f"{t.success:.4f}", f"{t.expected_failures:.2f}", f"{t.clean_day:.3f}",
                      f"{t.clean_days:.3f}", needed)
    console.print(table)
    console.print(f"all {len(view.tasks)} tasks: {view.expected_failures:.1f} failed conversations a day expected; "
                  f"chance of a day with no failure {view.clean_day:.3g}", highlight=False)


def print_comparison(result: Comparison, names: tuple[str, str], console: Console, limit: int = 15) -> None:
    a, b = names
    table = Table(title=f"{b} against {a}, paired over {result.scenarios} scenarios (95% paired-bootstrap CI)")
    for col in ("metric", a, b, "change [95% CI]", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    for d in result.deltas:
        table.add_row(d.metric, f"{d.a:.3f}", f"{d.b:.3f}", f"{d.change:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]", d.verdict)
    console.print(table)
    if result.changes:
        changed = Table(title=f"scenarios whose success rate changed ({len(result.changes)}; worst first)")
        for col in ("task", "persona", a, b, "Fisher p"):
            changed.add_column(col)
        for ch in result.changes[:limit] + (result.changes[limit:][-limit:] if len(result.changes) > limit else []):
            task, persona = ch.scenario  # type: ignore[misc]
            changed.add_row(task, persona, f"{ch.a[0]}/{ch.a[1]}", f"{ch.b[0]}/{ch.b[1]}", f"{ch.p_value:.3f}")
        console.print(changed)
    if result.left_out:
        console.print(f"{result.left_out} scenarios present in only one run were left out (--intersection).")
    verdict = result.verdict
    if verdict == "within noise":
        console.print("[bold]verdict: within noise[/] — no figure changed by more than its 95% interval allows.")
    else:
        console.print(f"[bold]verdict: {verdict}[/]")
