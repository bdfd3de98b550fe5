"""The terminal summary: pass^k next to pass@k, by persona, why trials failed, which scenarios fail."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from passhat.metrics import headline_ks
from passhat.report.caveats import stop_verdict, trials_scope
from passhat.report.consistency import print_consistency
from passhat.report.guard_section import print_safety
from passhat.report.harm_section import print_risky_actions
from passhat.report.model import Metrics, Report, ScenarioReport
from passhat.report.numbers import counted, num, with_ci
from passhat.report.state_diff import ROW_WORDS, RowChange, value
from passhat.report.terminal_stats import print_reliability
from passhat.report.terminal_steps import outcomes_table, print_steps
from passhat.report.terminal_usage import nothing_judged, print_plumbing


def print_report(report: Report, console: Console) -> None:
    """Every name and message that came from a user, a task file or a model is printed as text, never as markup."""
    cfg, m = report.config, report.metrics
    console.print(
        Text.assemble(
            (f"run {report.run_id}", "bold"),
            f"  domain={cfg['domain']} agent={cfg['agent']} user={cfg['user']} mode={cfg['mode']} seed={cfg['seed']}",
        )
    )
    print_warnings(report.caveats, console)
    if m.scenarios:
        console.print(headline(report), highlight=False, soft_wrap=True)
    console.print(
        f"{counted(m.scenarios, 'scenario')} (tasks × personas) × {trials_scope(report)}; "
        f"average reward {num(m.avg_reward)}; infra errors {m.infra_errors}"
        + (f"; user-simulator errors {m.user_simulator_errors}" if m.user_simulator_errors else ""),
        highlight=False,
        markup=False,
    )
    print_plumbing(report, console)
    if not m.scenarios:
        console.print(nothing_judged(report), style="red", highlight=False, markup=False)
        return
    ks = headline_ks(m.trials_per_scenario)
    console.print(_headline(m, ks))
    console.print(_by_persona(m, ks))
    print_reliability(m, console)
    if m.steps:
        print_steps(m.steps, console)
    print_consistency(m, console)
    if m.failure_signatures:
        console.print(_signatures(m))
    if m.suspected_simulator_errors.trials:
        console.print(_suspects(m), highlight=False)
    worst = _worst_scenarios(report.scenarios)
    if worst:
        console.print(worst)
    if outcomes := outcomes_table(report.scenarios):
        console.print(outcomes)
    print_safety(m, console)
    if m.risky_actions:
        print_risky_actions(m.risky_actions, console)


def print_warnings(warnings: list[str], console: Console, prefix: str = "") -> None:
    """A run's caveats (see report.caveats), first and in bold red; prefix names the run when several are read."""
    for warning in warnings:
        console.print(f"[bold red]{escape(prefix + warning)}[/]", highlight=False, soft_wrap=True)


def headline(report: Report) -> str:
    """The one line to read first: one try against every one of n tries, with their intervals; for an
    early-stopped run, the verdict of the gate it stopped against (its figures are no estimate to headline)."""
    verdict = stop_verdict(report)
    if verdict:
        return f"[bold]{escape(verdict)}[/]"
    m = report.metrics
    n, scope = m.trials_per_scenario, f"{counted(m.scenarios, 'scenario')} × {trials_scope(report)}"
    if n == 1:
        return (
            f"[bold]pass^1 {with_ci(m.avg_reward, m.ci.avg_reward)}[/]: a request succeeds on one try "
            f"{m.avg_reward:.1%} of the time; some scenario has only 1 judged trial, so no pass^k with k > 1 "
            f"({scope}, 95% bootstrap interval)"
        )
    return (
        f"[bold]pass^1 {with_ci(m.avg_reward, m.ci.avg_reward)} vs pass^{n} "
        f"{with_ci(m.pass_hat_k[n], m.ci.pass_hat_k[n])}[/]: a request succeeds on one try "
        f"{m.avg_reward:.1%} of the time, on all {n} tries {m.pass_hat_k[n]:.1%} "
        f"({scope}, 95% bootstrap intervals)"
    )


def _headline(m: Metrics, ks: list[int]) -> Table:
    table = Table(title="pass^k (all k trials succeed) vs pass@k (at least one does)")
    table.add_column("k", justify="right")
    table.add_column("pass^k [95% CI]", justify="right")
    table.add_column("pass@k [95% CI]", justify="right")
    for k in ks:
        table.add_row(
            str(k),
            with_ci(m.pass_hat_k[k], m.ci.pass_hat_k[k]),
            with_ci(m.pass_at_k[k], m.ci.pass_at_k[k]),
        )
    return table


def _by_persona(m: Metrics, ks: list[int]) -> Table:
    table = Table(title="by persona (pass^1 is the average reward)")
    table.add_column("persona", no_wrap=True)
    table.add_column("n", justify="right")
    for k in ks:
        table.add_column(f"pass^{k}", justify="right")
    for name, g in m.by_persona.items():
        hat, ci = g.pass_hat_k, g.ci.pass_hat_k
        table.add_row(Text(name), str(g.scenarios), *(with_ci(hat.get(k), ci.get(k)) for k in ks))
    return table


def _signatures(m: Metrics) -> Table:
    total = sum(m.failure_signatures.values())
    table = Table(title="why trials failed (failure signatures)")
    table.add_column("signature")
    table.add_column("trials", justify="right")
    table.add_column("share", justify="right")
    for sig, count in sorted(m.failure_signatures.items(), key=lambda kv: -kv[1]):
        table.add_row(Text(sig), str(count), f"{count / total:.0%}")
    return table


def _suspects(m: Metrics, limit: int = 10) -> Table:
    """The failed trials that may be the customer's failure, not the agent's (``report --json`` lists them all)."""
    noise = m.suspected_simulator_errors
    kinds = ", ".join(f"{kind} {count}" for kind, count in noise.by_kind.items())
    table = Table(
        title=f"suspected simulator errors: {counted(noise.trials, 'failed trial')} where the customer may have "
        f"gone wrong ({kinds}); read these transcripts before blaming the agent"
    )
    for col in ("task", "persona", "trial", "signs (event: why)"):
        table.add_column(col)
    for s in noise.suspects[:limit]:
        signs = "; ".join(f"{sign.event}: {sign.note}" for sign in s.signs)
        table.add_row(Text(s.task_id), Text(s.persona), str(s.trial), Text(signs))
    return table


def _worst_scenarios(scenarios: list[ScenarioReport], limit: int = 10) -> Table | None:
    failing = [s for s in scenarios if s.passed < s.judged]
    if not failing:
        return None
    failing.sort(key=lambda s: (s.passed / s.judged, s.task_id, s.persona))
    table = Table(title=f"scenarios that fail most ({len(failing)} of {len(scenarios)} fail at least once)")
    for col in ("task", "persona", "passed", "signatures", "backend of its first failure (expected → actual)"):
        table.add_column(col)
    for s in failing[:limit]:
        backend = Text("matches the expected state", style="dim")
        if s.state_diff:
            backend = Text(f"trial {s.state_diff.trial}\n").append_text(diff_text(s.state_diff.rows))
        table.add_row(Text(s.task_id), Text(s.persona), f"{s.passed}/{s.judged}", Text(", ".join(s.failure_names)), backend)
    return table


MARK = "bold yellow"  # a differing column


def diff_text(changes: list[RowChange]) -> Text:
    """One line per differing backend row: a changed row names only its differing columns, marked, expected →
    actual; an extra row starts with +, a missing one with −. Built as Text, so stored values are never markup."""
    text = Text()
    for i, c in enumerate(changes):
        if i:
            text.append("\n")
        if c.kind == "changed":
            text.append(f"{c.table} {c.label}: ")
            for j, f in enumerate(c.fields):
                text.append("; " if j else "").append(f.column, style=MARK)
                text.append(f" {value(f.expected)} → {value(f.actual)}")
        else:
            sign, style = ("+", "green") if c.kind == "extra" else ("−", "red")
            text.append(f"{sign} {c.table} {c.label}: {ROW_WORDS[c.kind]}", style=style)
    return text
