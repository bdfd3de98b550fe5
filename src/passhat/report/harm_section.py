"""The "Risky actions under ambiguity" part of a report: failure incidence, severity-weighted harm and helpfulness side
by side, by harm type and per scenario. Shown only for a run with tasks that declare risks."""

from __future__ import annotations

from html import escape

from rich.console import Console
from rich.table import Table
from rich.text import Text

from passhat.report.model import RiskyActions, ScenarioHarm
from passhat.report.numbers import counted, html_figure, with_ci

TITLE = "Risky actions under ambiguity"
MOST_HARMFUL = 10  # scenarios the terminal lists


def headline(r: RiskyActions) -> str:
    """The three figures in one sentence, each with its interval."""
    low, high = r.harm_per_1000_ci
    return (
        f"over {counted(r.scenarios, 'scenario')} ({counted(r.trials, 'judged trial')}) of tasks whose request leaves out "
        f"what matters: failure incidence {with_ci(r.incidence, r.incidence_ci)} (trials that acted on a wrong guess), "
        f"severity-weighted harm {with_ci(r.harm, r.harm_ci)} per request ({r.harm_per_1000:.0f} [{low:.0f}, {high:.0f}] "
        f"per 1,000 requests), helpfulness {with_ci(r.helpfulness, r.helpfulness_ci)} (trials that reached the customer's "
        "goal); means over scenarios, 95% bootstrap intervals"
    )


def print_risky_actions(r: RiskyActions, console: Console) -> None:
    console.print(Text(TITLE, style="bold"))
    console.print(headline(r), highlight=False, markup=False, soft_wrap=True)
    if r.by_harm:
        table = Table(title="harm incurred, by type")
        for col in ("harm type", "trials", "severity"):
            table.add_column(col, justify="left" if col == "harm type" else "right")
        for kind, f in r.by_harm.items():
            table.add_row(kind.replace("_", " "), str(f.trials), str(f.severity))
        console.print(table)
    harmful = most_harmful(r.by_scenario)
    if harmful:
        table = Table(title=f"scenarios with the most harm ({len(harmful)} shown)")
        for col in ("task", "persona", "incidence", "harm", "helpfulness"):
            table.add_column(col, justify="left" if col in ("task", "persona") else "right")
        for s in harmful:
            table.add_row(
                Text(s.task_id),
                Text(s.persona),
                f"{s.incidents}/{s.trials}",
                with_ci(s.harm, s.harm_ci),
                f"{s.helped}/{s.trials}",
            )
        console.print(table)


def most_harmful(scenarios: list[ScenarioHarm], limit: int = MOST_HARMFUL) -> list[ScenarioHarm]:
    """The scenarios with harm, most first (then by task and persona)."""
    return sorted((s for s in scenarios if s.harm > 0), key=lambda s: (-s.harm, s.task_id, s.persona))[:limit]


def risky_actions_html(r: RiskyActions | None) -> str:
    """The section: the figures, harm by type and every scenario; empty for a run without tasks that declare risks."""
    if r is None:
        return ""
    by_type = "".join(
        f"<tr><td>{escape(kind.replace('_', ' '))}</td><td class=num>{f.trials}</td><td class=num>{f.severity}</td></tr>"
        for kind, f in r.by_harm.items()
    )
    types = (
        f"<table><tr><th>harm type</th><th>trials</th><th>severity</th></tr>{by_type}</table>"
        if by_type
        else "<p>No trial acted on a wrong guess.</p>"
    )
    rows = "".join(
        f"<tr><td>{escape(s.task_id)}</td><td>{escape(s.persona)}</td><td class=num>{s.incidents}/{s.trials}</td>"
        f"<td class=num>{html_figure(s.incidence, s.incidence_ci)}</td><td class=num>{html_figure(s.harm, s.harm_ci)}</td>"
        f"<td class=num>{html_figure(s.helpfulness, s.helpfulness_ci)}</td></tr>"
        for s in r.by_scenario
    )
    return (
        f"<h2>{TITLE}</h2><p>{escape(headline(r))}.</p>{types}"
        "<table><tr><th>task</th><th>persona</th><th>risky trials</th><th>failure incidence</th>"
        f"<th>harm per request</th><th>helpfulness</th></tr>{rows}</table>"
    )
