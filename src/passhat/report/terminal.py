"""The terminal summary: a verdict first, pass^k next to pass@k, by persona, why trials failed, and what to read next;
`--full` adds the long tables (which scenarios fail, steps, consistency, guards, harm)."""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from passhat.metrics import headline_ks
from passhat.metrics.gate import Decision, Gate, decide
from passhat.metrics.intervals import wilson
from passhat.report.caveats import imported_source, stop_verdict, trials_scope
from passhat.report.consistency import print_consistency
from passhat.report.guard_section import print_safety
from passhat.report.harm_section import print_risky_actions
from passhat.report.model import Metrics, Report, ScenarioReport
from passhat.report.numbers import counted, num, with_ci
from passhat.report.state_diff import ROW_WORDS, RowChange, value
from passhat.report.terminal_stats import gate_verdict, print_reliability
from passhat.report.terminal_steps import outcomes_table, print_steps
from passhat.report.terminal_usage import nothing_judged, print_plumbing

BAR = 0.9  # the default bar, advice only: pass^k at k = the run's trials per scenario


def print_report(report: Report, console: Console, full: bool = False, bar: bool = True, out: Path | None = None) -> None:
    """The verdict first, the figures that answer it, and last the headline again with what to look at next; the
    long tables only when full (the HTML and JSON reports always hold them). bar: judge a run given no gate
    against the default bar (advice); out: the runs folder to name in the commands it suggests (None: the default).
    Names and messages from users, task files or models print as text."""
    cfg, m = report.run_config, report.metrics
    verdict = lead(report, bar)
    for line in verdict:
        console.print(line, highlight=False, soft_wrap=True)
    console.print(
        Text.assemble(
            (f"run {report.run_id}", "bold"),
            f"  domain={cfg.domain} agent={cfg.agent} user={cfg.user} mode={cfg.mode} seed={cfg.seed}",
        )
    )
    if cfg.imported is not None:  # another harness judged the trials: say whose figures these are
        source, writer = imported_source(cfg), cfg.imported.writer
        console.print(f"imported from {source}" + (f", written by {writer}" if writer else ""), highlight=False, markup=False)
    print_warnings(report.caveats, console)
    if m.scenarios and not stop_verdict(report):  # an early stop's verdict is its headline, printed first
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
    if m.failure_signatures:
        console.print(_signatures(m))
    if m.suspected_simulator_errors.trials:
        console.print(_suspects(m), highlight=False)
    if full:
        _print_details(report, console)
    else:
        if m.faults or m.guard.enabled:  # what the run was asked to measure stays in view
            print_safety(m, console)
        console.print(f"more with --full: {HIDDEN} (the HTML and JSON reports hold them all)", highlight=False, soft_wrap=True)
    console.print(headline(report), highlight=False, soft_wrap=True)
    console.print(f"next: {escape(next_step(report, out))}", highlight=False, soft_wrap=True)


HIDDEN = (
    "pass^k beyond n, the partition of scenarios, compounding, per-step reliability, consistency, the scenarios that "
    "fail most with their backends, acceptable outcomes, guards and harm"
)


def _print_details(report: Report, console: Console) -> None:
    """The long tables of --full, in the order of HIDDEN."""
    m = report.metrics
    print_reliability(m, console)
    if m.steps:
        print_steps(m.steps, console)
    print_consistency(m, console)
    worst = _worst_scenarios(report.scenarios)
    if worst:
        console.print(worst)
    if outcomes := outcomes_table(report.scenarios):
        console.print(outcomes)
    print_safety(m, console)
    if m.risky_actions:
        print_risky_actions(m.risky_actions, console)


def lead(report: Report, bar: bool) -> list[str]:
    """The verdict lines (markup) the report starts with: an early stop's, the given gate's, or else (when bar)
    the default bar's, which is advice: it never sets the exit status."""
    lines = [headline(report)] if stop_verdict(report) else []  # an early stop's headline is its verdict
    g = report.gate
    stopped_against = report.early_stop_decision.gate if report.early_stop_decision else None
    if g and g.gate != stopped_against:
        lines.append(gate_verdict(f"gate {g.gate}", g.meets, g.reason, g.ci))
    if not lines and bar and report.metrics.scenarios:
        d = default_decision(report)
        lines.append(
            gate_verdict(f"default bar {d.gate}", d.meets, d.reason)
            + f' (advice, exit status 0: --gate "k={d.gate.k},min={BAR:g}" enforces a bar, --gate none drops it)'
        )
    return lines


def default_decision(report: Report) -> Decision:
    """The run against the default bar, pass^k >= BAR at k = its planned trials per scenario, as a gate decides
    (a store without a plan: its judged trials, each scenario counted as finished)."""
    counts = {(s.task_id, s.persona): (s.passed, s.judged) for s in report.scenarios}
    if report.planned_trials is None:
        return decide(Gate(report.metrics.trials_per_scenario, BAR), counts)
    return decide(Gate(report.run_config.trials, BAR), counts, report.run_config.planned_trials())


def next_step(report: Report, out: Path | None = None) -> str:
    """What to look at next, in one sentence: the customer's suspected errors first (they may not be the agent's),
    then the failures most common and the scenarios that fail most, or, when all passed, what n/n is worth. The
    commands it suggests name ``out`` when given (a runs folder other than the default), so they work as printed."""
    m = report.metrics
    run = report.run_id + (f" --out {shlex.quote(str(out))}" if out is not None else "")
    noise = m.suspected_simulator_errors.trials
    if noise:
        return (
            f"read the transcripts of the {counted(noise, 'failed trial')} the customer may have got wrong before "
            f"blaming the agent: `passhat report {run} --html report.html`"
        )
    if not m.failure_signatures:
        n = m.trials_per_scenario
        return (
            f"every scenario passed all its trials; {n}/{n} is a 95% Wilson lower bound of {wilson(n, n)[0]:.2f} on a "
            "scenario's success rate: run more trials (--trials) for a stronger claim"
        )
    top, count = max(m.failure_signatures.items(), key=lambda kv: kv[1])
    worst = ", ".join(f"{s.task_id} {s.persona} {s.passed}/{s.judged}" for s in failing(report.scenarios)[:3])
    return (
        f"{top} is the most common failure ({count} of {sum(m.failure_signatures.values())} failed trials); the "
        f"scenarios that fail most ({worst}) with their backends: `passhat report {run} --full`, their transcripts: "
        f"`passhat report {run} --html report.html`"
    )


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
        f"({scope}, 95% intervals)"
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


def failing(scenarios: list[ScenarioReport]) -> list[ScenarioReport]:
    """The scenarios that failed at least once, those that fail most first."""
    return sorted((s for s in scenarios if s.passed < s.judged), key=lambda s: (s.passed / s.judged, s.task_id, s.persona))


def _worst_scenarios(scenarios: list[ScenarioReport], limit: int = 10) -> Table | None:
    worst = failing(scenarios)
    if not worst:
        return None
    table = Table(title=f"scenarios that fail most ({len(worst)} of {len(scenarios)} fail at least once)")
    for col in ("task", "persona", "passed", "signatures", "backend of its first failure (expected → actual)"):
        table.add_column(col)
    for s in worst[:limit]:
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
