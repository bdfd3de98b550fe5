"""The attack suite's report in the terminal: the clean baseline, then per attack and per goal with no defense,
then the defenses side by side (same seeds), each figure as pass^1 with its 95% interval and pass^k."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from passhat.attack.report import AttackReport, ConfigurationJson, FigureJson, UnderAttackJson
from passhat.report.numbers import counted, num, with_ci

LEGEND = "each figure: pass^1 [95% interval]; ^k: pass^k (all k trials pass or succeed); @k: pass@k (at least one of k)"


def print_attack_report(report: AttackReport, console: Console) -> None:
    k = report.trials_per_scenario
    scenarios = len(report.tasks) * len(report.personas)
    console.print(
        f"attack suite {report.run_id}: domain {report.domain}, agent {report.agent}, {counted(scenarios, 'scenario')} "
        f"(task × persona), {counted(k, 'trial')} each; {counted(report.judged_trials, 'judged trial')}"
        + (f", {counted(report.infra_errors, 'infra error')} left out" if report.infra_errors else ""),
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    undefended = report.configurations[0]
    baseline = share(undefended.utility_without_attack, k).replace("\n", ", ")
    console.print(f"utility without attack: {baseline}", highlight=False, markup=False)
    console.print(LEGEND, highlight=False, markup=False, soft_wrap=True)
    console.print(_breakdown("attack", {a.name: undefended.per_attack[a.name] for a in report.attacks}, k))
    console.print(_breakdown("goal", {g.name: undefended.per_goal[g.name] for g in report.goals}, k))
    if len(report.configurations) > 1:
        console.print(defenses_table(report.configurations, k))


def share(f: FigureJson | None, k: int, at_k: bool = False) -> str:
    """pass^1 [95% interval], then on a line of its own pass^k (and pass@k when asked); "—" without trials."""
    if f is None:
        return "—"
    top = str(min(k, max(map(int, f.pass_hat_k))))
    text = with_ci(f.pass_hat_k["1"], f.pass_hat_k_interval["1"])
    if top != "1":
        text += f"\n^{top} {num(f.pass_hat_k[top])}"
        if at_k:
            text += f"  @{top} {num(f.pass_at_k[top])}"
    return text


def _breakdown(kind: str, rows: dict[str, UnderAttackJson], k: int) -> Table:
    table = Table(title=f"per {kind}, no defense: utility under attack and targeted attack success")
    for column in (kind, "utility under attack", "attack success", "read the attack"):
        table.add_column(column, justify="left" if column == kind else "right")
    for name, u in rows.items():
        table.add_row(Text(name), share(u.utility_under_attack, k), share(u.attack_success, k, at_k=True), num(u.read_share))
    return table


def defenses_table(configurations: list[ConfigurationJson], k: int) -> Table:
    """Each defense configuration's utility and attack success side by side: a defense that wins by breaking the
    agent's work shows it in the utility columns."""
    table = Table(title="defenses (same seeds): utility without and under attack, and attack success")
    for column in ("defenses", "utility without attack", "utility under attack", "attack success", "refused calls", "withheld"):
        table.add_column(column, justify="left" if column == "defenses" else "right")
    for c in configurations:
        table.add_row(
            Text(c.label),
            share(c.utility_without_attack, k),
            share(c.under_attack.utility_under_attack, k),
            share(c.under_attack.attack_success, k, at_k=True),
            str(c.refused_calls),
            str(c.withheld_results),
        )
    return table
