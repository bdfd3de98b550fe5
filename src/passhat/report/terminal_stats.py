"""Terminal views of the reliability statistics: intervals, extrapolation, partition, compounding,
the gate's verdict, the traffic view and run comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from passhat.metrics.compare import Comparison
from passhat.metrics.customers import CustomerGap
from passhat.metrics.extrapolate import EXTRAPOLATE_KS
from passhat.metrics.gate import Decision
from passhat.metrics.intervals import wilson
from passhat.report.model import Extrapolation, Metrics, WritesPoint
from passhat.report.numbers import num, with_ci
from passhat.report.reliability import not_predicted, partition_rows

if TYPE_CHECKING:  # the traffic view loads scipy.stats (half a second, 40 MiB): `traffic` imports it, not every report
    from passhat.metrics.traffic import TrafficView

__all__ = ["gate_verdict", "print_comparison", "print_gate", "print_reliability", "print_traffic"]

SIGNIFICANT = 0.05  # Fisher p below which `compare` lists a scenario's change by default
SHOWN_CHANGES = 10  # how many changed scenarios `compare` lists when none is significant


def print_reliability(m: Metrics, console: Console) -> None:
    """Extrapolated pass^k (or why it is not predicted), the partition by persona, and the compounding curve."""
    n = m.trials_per_scenario
    reason = not_predicted(m)
    if reason is not None:
        console.print(f"pass^k beyond n = {n}: not predicted — {reason}.", highlight=False, soft_wrap=True)
    else:
        x = m.extrapolated
        console.print(_extrapolated(x, n))
        for k, why in x.not_predicted.items():
            console.print(f"pass^{k}: not predicted — {why}.", highlight=False, soft_wrap=True)
        agree = "agrees with" if all(x.agrees.values()) else "departs from"
        console.print(
            f"For k <= n the fit {agree} the exact estimator (largest gap {x.max_gap:.3f}).", highlight=False, soft_wrap=True
        )
        console.print("Assumptions: in the HTML report and metrics.extrapolated.assumptions.", highlight=False)
    console.print(_partition(m))
    console.print(partition_note(n), highlight=False, soft_wrap=True)
    if m.compounding:
        console.print(_compounding(m.compounding))


def partition_note(n: int) -> str:
    """What "passed all n" is worth: the Wilson lower bound of n/n, so 8/8 is not read as proven reliability."""
    lo = wilson(n, n)[0]
    return (
        f"passed all {n} is not proof of reliability: a scenario that passed {n}/{n} has a 95% Wilson lower bound "
        f"of {lo:.2f} on its success rate."
    )


def _extrapolated(x: Extrapolation, n: int) -> Table:
    table = Table(title=f"pass^k beyond n = {n} (model-based: {x.model}, lowest AIC)")
    table.add_column("k", justify="right")
    table.add_column("predicted pass^k [95% CI]", justify="right")
    for k in EXTRAPOLATE_KS:
        shown = x.pass_hat_k[k] is not None
        table.add_row(str(k), with_ci(x.pass_hat_k[k], x.ci[k]) if shown else "not predicted (below)")
    return table


def _partition(m: Metrics) -> Table:
    n = m.trials_per_scenario
    lo = wilson(n, n)[0]
    table = Table(title=f"partition of scenarios by how many of their (at least {n}) trials passed")
    for col in ("", f"passed all (Wilson ≥ {lo:.2f})", "passed some", "passed none"):
        table.add_column(col, justify="right" if col else "left")
    for label, part in partition_rows(m):
        table.add_row(label, str(part.reliable), str(part.unreliable), str(part.out_of_reach))
    return table


def _compounding(points: list[WritesPoint]) -> Table:
    table = Table(title="compounding: success against the number of writes a task needs")
    for col in ("writes", "scenarios", "avg reward [95% CI]", "pass^k [95% CI]"):
        table.add_column(col, justify="right")
    for p in points:
        table.add_row(
            str(p.writes),
            str(p.scenarios),
            with_ci(p.avg_reward, p.avg_reward_ci),
            f"k={p.k}: " + with_ci(p.pass_hat_k, p.pass_hat_k_ci),
        )
    return table


def print_gate(decision: Decision, console: Console, ci: Sequence[float] | None = None) -> None:
    console.print(gate_verdict(f"gate {decision.gate}", decision.meets, decision.reason, ci), highlight=False)


def gate_verdict(label: str, meets: bool | None, reason: str, ci: Sequence[float] | None = None) -> str:
    """A gate's verdict in one line of markup: the gate (label), its decision in colour, why, and its interval."""
    verdict = {True: "[green]MEETS THE BAR[/]", False: "[red]DOES NOT MEET THE BAR[/]", None: "[yellow]UNDECIDED[/]"}
    interval = f" (95% CI [{num(ci[0])}, {num(ci[1])}])" if ci else ""
    return f"{escape(label)}: {verdict[meets]} — {escape(reason)}{interval}"


def print_traffic(view: TrafficView, model: str, console: Console) -> None:
    how = (
        "the fitted model has one component: one success rate for every scenario, which no scenario's own trials "
        "move, so the model columns are the same for every task; the 'own' columns are each task's record (red: "
        "below what the model credits it with)"
        if view.pooled
        else "each scenario's posterior under the fitted distribution, given its own c of n"
    )
    table = Table(
        title=f"traffic: {view.per_day:g} conversations a day per task, split evenly over its personas (model-based: {model})"
    )
    cols = (
        "task",
        "own c/n",
        "own [95% CI]",
        "model",
        "failed/day",
        "P(clean day)",
        f"P(clean {view.days}d)",
        f"needed ({view.target:g})",
    )
    for col in cols:
        table.add_column(col, justify="left" if col == "task" else "right", no_wrap=True)
    for t in view.tasks:
        needed = f"[green]{t.needed:.5f}[/]" if t.meets_target else f"[red]{t.needed:.5f}[/]"
        # red: the task's own record says it does worse than the model credits it with
        own = f"[red]{t.successes}/{t.trials}[/]" if t.own_ci[1] < t.success else f"{t.successes}/{t.trials}"
        table.add_row(
            Text(t.task_id),
            own,
            f"{t.own_mean:.3f} [{t.own_ci[0]:.3f}, {t.own_ci[1]:.3f}]",
            f"{t.success:.4f}",
            f"{t.expected_failures:.2f}",
            _clean_cell(t.clean_day, t.clean_day_ci),
            _clean_cell(t.clean_days, t.clean_days_ci),
            needed,
        )
    console.print(table)
    console.print(
        f"model: expected per-attempt success, failed conversations a day, chance of a day (of {view.days} days) "
        "with no failure (beside it, the range the scenarios' own trials cannot rule out, whatever the model), and "
        f"the success needed for a clean day with chance {view.target:g} (green: met).",
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"model columns: {how}. Own: the task's c/n over its personas, and the mean and 95% interval of "
        "Beta(1 + c, 1 + n − c), its trials alone under a uniform prior.",
        highlight=False,
        soft_wrap=True,
    )
    clean = _clean_cell(view.clean_day, view.clean_day_ci)
    console.print(
        f"all {len(view.tasks)} tasks: {view.expected_failures:.1f} failed conversations a day expected; "
        f"chance of a day with no failure {clean}",
        highlight=False,
    )
    if view.not_predicted:
        console.print(
            f"not predicted: a clean day is pass^x with x the conversations a scenario meets, and `passhat report` "
            f"does not predict pass^k that far: {escape(view.not_predicted)}.",
            highlight=False,
            soft_wrap=True,
        )


def _clean_cell(value: float | None, interval: Sequence[float] | None) -> str:
    """A clean-day chance with the range its scenarios' trials cannot rule out, or why there is none."""
    return "not predicted" if value is None else with_ci(value, interval)


def changes_to_show(result: Comparison) -> tuple[list[Any], str]:
    """The changed scenarios worth a line: those with Fisher p < SIGNIFICANT, or, when none is, the
    SHOWN_CHANGES with the smallest p; each list by p, then by change (worst first)."""
    by_p = sorted(result.changes, key=lambda ch: (ch.p_value, ch.change))
    significant = [ch for ch in by_p if ch.p_value < SIGNIFICANT]
    total = len(result.changes)
    if significant:
        return significant, (
            f"scenarios whose success rate changed significantly (Fisher p < {SIGNIFICANT:g}): "
            f"{len(significant)} of {total} that changed"
        )
    return by_p[:SHOWN_CHANGES], (
        f"no scenario's change is significant (Fisher p < {SIGNIFICANT:g}); the "
        f"{min(SHOWN_CHANGES, total)} smallest p of {total} that changed"
    )


def _p_floor(shown: list[Any]) -> str:
    return f"{SIGNIFICANT:g}" if shown[-1].p_value < SIGNIFICANT else f"{shown[-1].p_value:.3f}"


def print_customer_gap(gap: CustomerGap, console: Console) -> None:
    """Simulated against human customers beyond the figures: trials behind them, abandonment, turns, and the failure
    signatures only one kind of customer brought out."""
    table = Table(title=f"Simulated and human customers over the {gap.scenarios} scenarios people played")
    for col in ("", "simulated", "human"):
        table.add_column(col, justify="left" if not col else "right")
    sides = (gap.simulated, gap.human)
    table.add_row("judged trials", *(str(s.judged) for s in sides))
    table.add_row("not judged (human: abandoned)", *(str(s.unjudged) for s in sides))
    table.add_row("median turns", *("—" if s.median_turns is None else f"{s.median_turns:g}" for s in sides))
    for signature in sorted(set(gap.simulated.signatures) | set(gap.human.signatures)):
        table.add_row(Text(signature), *(str(s.signatures.get(signature, 0)) for s in sides))
    console.print(table)
    console.print(
        f"Every human figure rests on {gap.human.judged} judged human trial{'s' if gap.human.judged != 1 else ''} "
        f"({gap.human.unjudged} abandoned, not scored). Only people triggered: {', '.join(gap.only_human) or 'none'}; "
        f"only the simulator: {', '.join(gap.only_simulated) or 'none'}.",
        highlight=False,
    )


def print_comparison(result: Comparison, names: tuple[str, str], console: Console) -> None:
    a, b = escape(names[0]), escape(names[1])  # run ids, in titles and headers (which rich reads as markup)
    table = Table(title=f"{b} against {a}, paired over {result.scenarios} scenarios (95% paired-bootstrap CI)")
    for col in ("metric", a, b, "change [95% CI]", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    for d in result.deltas:
        table.add_row(d.metric, f"{d.a:.3f}", f"{d.b:.3f}", f"{d.change:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}]", d.verdict)
    console.print(table)
    if result.changes:
        shown, title = changes_to_show(result)
        changed = Table(title=title)
        for col in ("task", "persona", a, b, "Fisher p"):
            changed.add_column(col)
        for ch in shown:
            task, persona = ch.scenario  # type: ignore[misc]
            changed.add_row(Text(task), Text(persona), f"{ch.a[0]}/{ch.a[1]}", f"{ch.b[0]}/{ch.b[1]}", f"{ch.p_value:.3f}")
        console.print(changed)
        rest = len(result.changes) - len(shown)
        if rest:
            console.print(
                f"{rest} more scenario{'s' if rest != 1 else ''} changed with Fisher p >= "
                f"{_p_floor(shown)}; every one is in --json.",
                highlight=False,
            )
    if result.left_out:
        console.print(f"{result.left_out} scenarios present in only one run were left out (--intersection).")
    verdict = result.verdict
    if verdict == "within noise":
        console.print("[bold]verdict: within noise[/] — no figure changed by more than its 95% interval allows.")
    else:
        console.print(f"[bold]verdict: {verdict}[/]")
