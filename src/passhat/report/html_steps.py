"""The HTML report's per-step reliability: the compounding curve over steps (SVG), the step kinds, and every
task's plan step by step; and which acceptable outcome a scenario's passes took."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from html import escape

from passhat.report.model import ScenarioReport, StepReliability, TaskSteps
from passhat.report.numbers import html_figure as _fmt
from passhat.report.svg import COLORS, Series, line_chart

PLANS_IN_VIEW = 10  # the plans gone wrong a reader sees unfolded: the worst, a screen or two of the table


def steps_section(steps: StepReliability | None) -> Iterator[str]:
    """The section in pieces, a task's plan at a time (a large run has thousands), or a note that no trial recorded
    its steps (a store from before steps were recorded)."""
    if steps is None:
        yield "<h2>Per-step reliability</h2><p>No trial of this run recorded its steps.</p>"
        return
    first = ""
    if w := steps.first_wrong:
        first = f" Trials most often go wrong first at <b>{escape(w.tool)}</b> ({w.trials} trials, {w.share:.0%})."
    yield (
        "<h2>Per-step reliability</h2>"
        f"<p>Every task's ground-truth plan as steps (reads, then writes). Over {steps.trials} trials: predicted "
        f"end-to-end rate {_fmt(steps.predicted)} (each step kind's rate given earlier right, over the domain, multiplied along each plan, weighed by its trials) "
        f"against observed {_fmt(steps.observed, steps.observed_ci)}.{first} A step is right when a call of it "
        "succeeded with its arguments; <i>given earlier right</i> is its rate among the trials whose every earlier "
        "step was right, which leaves out the steps missed only because an earlier one went wrong.</p>"
        f"{_curve(steps)}{_kinds(steps)}"
    )
    yield from _plans(steps.tasks)


def _curve(steps: StepReliability) -> str:
    points = steps.compounding
    xs = [p.steps for p in points]
    series = [
        Series("observed", [(p.steps, p.observed) for p in points], [(p.steps, *p.observed_ci) for p in points], COLORS[0]),
        Series("predicted", [(p.steps, p.predicted) for p in points if p.predicted is not None], color=COLORS[1], dashed=True),
    ]
    ticks = list(range(min(xs), max(xs) + 1)) if len(xs) > 1 else [xs[0] - 1, xs[0], xs[0] + 1]
    chart = line_chart("success against the number of steps", series, ticks, "steps in the task's plan", "probability")
    counts = ", ".join(f"{p.steps} steps: {p.tasks} tasks, {p.trials} trials" for p in points)
    return f"<h3>Compounding over steps</h3><p>Tasks grouped by the length of their plan ({escape(counts)}).</p>{chart}"


def _kinds(steps: StepReliability) -> str:
    rows = "".join(
        f"<tr><td>{escape(k.tool)}</td><td>{'write' if k.write else 'read'}</td><td class=num>{k.right}/{k.steps}</td>"
        f"<td class=num>{_fmt(k.rate, k.ci)}</td><td class=num>{_fmt(k.conditional)}</td></tr>"
        for k in steps.by_kind
    )
    return (
        "<h3>By step kind</h3><table><tr><th>tool</th><th>kind</th><th>right</th><th>rate [95% Wilson]</th>"
        f"<th>given earlier right</th></tr>{rows}</table>"
    )


def _plans(tasks: Sequence[TaskSteps]) -> Iterator[str]:
    """The PLANS_IN_VIEW least observed plans where some step went wrong first, in view; the other plans that went
    wrong, and those right at every step of every trial, each folded away under one line (a large run's table was
    most of its page: 11,500 of the default run's 19,700 px, with 30 plans gone wrong)."""
    wrong = sorted((t for t in tasks if t.first_wrong), key=lambda t: t.observed)
    right = [t for t in tasks if not t.first_wrong]
    yield (
        f"<h3>Each task's plan</h3><p>{len(wrong)} of {len(tasks)} plans went wrong at some step, the least observed first.</p>"
    )
    if wrong:
        yield from _plan_table(wrong[:PLANS_IN_VIEW])
    yield from _folded(wrong[PLANS_IN_VIEW:], "more plans that went wrong, in the same order")
    yield from _folded(right, "plans right at every step of every trial")


def _folded(tasks: Sequence[TaskSteps], what: str) -> Iterator[str]:
    if tasks:
        yield f"<details><summary>{len(tasks)} {what}</summary>"
        yield from _plan_table(tasks)
        yield "</details>"


def _plan_table(tasks: Sequence[TaskSteps]) -> Iterator[str]:
    yield (
        "<table><tr><th>task</th><th>observed</th><th>predicted</th><th>step</th><th>call</th>"
        "<th>reached</th><th>right [95% Wilson]</th><th>given earlier right</th><th>first wrong here</th></tr>"
    )
    for t in tasks:
        name = t.task_id if t.outcome == "primary" else f"{t.task_id} ({t.outcome})"
        span = f' rowspan="{len(t.steps)}"'
        head = (
            f"<td{span}>{escape(name)}</td><td{span} class=num>{_fmt(t.observed, t.observed_ci)}</td>"
            f"<td{span} class=num>{_fmt(t.predicted)}</td>"
        )
        for i, s in enumerate(t.steps):
            first = f"{s.first_wrong}/{t.trials}" if s.first_wrong else ""
            yield (
                f"<tr>{head if i == 0 else ''}<td class=num>{i + 1}</td><td>{'write' if s.write else 'read'} "
                f"{escape(s.tool)} {escape(s.entity)}</td><td class=num>{s.reached}/{t.trials}</td>"
                f"<td class=num>{_fmt(s.rate, s.ci)}</td><td class=num>{_fmt(s.conditional)}</td><td class=num>{first}</td></tr>"
            )
    yield "</table>"


def outcomes_cell(s: ScenarioReport) -> str:
    """The scenario's passes by acceptable outcome: "primary 3, assign-to-network 2"."""
    return "<td>" + escape(", ".join(f"{label} {n}" for label, n in (s.outcomes or {}).items())) + "</td>"
