"""The terminal view of per-step reliability: the predicted rate beside the observed one, where trials go wrong
first, and the worst steps of the run's plans."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from passhat.report.model import ScenarioReport, StepFigures, StepReliability, TaskSteps
from passhat.report.numbers import counted, num, with_ci

WORST_STEPS = 8  # rows of the worst-steps table


def print_steps(steps: StepReliability, console: Console) -> None:
    """One line of the run's figures, then its worst steps (none when every step of every trial was right)."""
    line = (
        f"per step: predicted {num(steps.predicted)} (each step kind's reliability, multiplied along each plan) vs observed "
        f"{with_ci(steps.observed, steps.observed_ci)} over {counted(steps.trials, 'trial')}"
    )
    if steps.first_wrong:
        w = steps.first_wrong
        line += f"; trials most often go wrong first at {w.tool} ({w.trials} of {counted(steps.trials, 'trial')}, {w.share:.0%})"
    console.print(Text(line + "."), soft_wrap=True)
    if table := worst_steps(steps.tasks):
        console.print(table)


def worst_steps(tasks: list[TaskSteps], limit: int = WORST_STEPS) -> Table | None:
    """The steps least reliable along the chain (lowest rate given every earlier step right, then lowest rate), each
    with how often trials went wrong first there."""
    rows = [(t, i, s) for t in tasks for i, s in enumerate(t.steps) if s.right < t.trials]
    if not rows:
        return None
    rows.sort(key=lambda r: (1.0 if r[2].conditional is None else r[2].conditional, r[2].rate, r[0].task_id, r[1]))
    table = Table(title=f"worst steps ({len(rows)} of {sum(len(t.steps) for t in tasks)} steps not always right)")
    for col in ("task", "step", "call", "right [95% CI]", "given earlier right", "first wrong here"):
        table.add_column(col, justify="right" if col not in ("task", "call") else "left")
    for task, i, s in rows[:limit]:
        table.add_row(
            Text(task.task_id if task.outcome == "primary" else f"{task.task_id} ({task.outcome})"),
            f"{i + 1}/{len(task.steps)}",
            Text(call_label(s)),
            with_ci(s.rate, s.ci),
            num(s.conditional),
            f"{s.first_wrong}/{task.trials}" if s.first_wrong else "",
        )
    return table


def call_label(s: StepFigures) -> str:
    """A step as a person reads it: "write cancel_order #W1"."""
    return f"{'write' if s.write else 'read'} {s.tool} {s.entity}".rstrip()


def outcomes_table(scenarios: list[ScenarioReport]) -> Table | None:
    """Which acceptable outcome each scenario's passes took, for the tasks whose passes took more than one."""
    several = [s for s in scenarios if s.outcomes]
    if not several:
        return None
    table = Table(title="acceptable outcomes the passes took")
    for col in ("task", "persona", "passes by outcome"):
        table.add_column(col)
    for s in several:
        table.add_row(
            Text(s.task_id), Text(s.persona), Text(", ".join(f"{label} {n}" for label, n in (s.outcomes or {}).items()))
        )
    return table
