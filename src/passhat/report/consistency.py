"""The report's consistency-beyond-outcomes section: what it reads of each trial as the report's one pass goes by, and
how the terminal and HTML reports show its figures (``metrics.consistency``).

A trial's tool calls, messages and stated confidence are read from its stored transcript without parsing it: the
store writes events as ``Event.to_dict`` orders their keys, so a tool call's text starts ``{"kind": "tool",
"call_id": ..., "name": "<tool>"`` and an agent message's ``{"kind": "agent", "text":`` (a quote inside a string is
escaped, so neither can start inside one). Only a transcript that names a confidence is parsed, for what the agent said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from html import escape
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from passhat.metrics.consistency import (
    ConsistencyTally,
    Conversation,
    Tools,
    Usage,
    consistency_figures,
    conversation_of_events,
    last_confidence,
)
from passhat.report.model import Consistency, Metrics, ScenarioColumns
from passhat.report.numbers import html_figure, num, with_ci
from passhat.run_config import RunConfig
from passhat.store import TrialRecord
from passhat.trajectory import USER_SIMULATOR_ERROR

_TEXT = r'[^"\\]*(?:\\.[^"\\]*)*'  # inside a JSON string: any character but a quote or backslash, or an escape
_TOOL_CALLS = re.compile(r'\{"kind": "tool", "call_id": (?:null|"' + _TEXT + r'"), "name": "(' + _TEXT + r')"')
_AGENT_MESSAGE = '{"kind": "agent", "text": '
SHOWN_SCENARIOS = 10  # rows of the least-consistent scenarios in the HTML report
RESOURCE_WORDS = {"turns": "turns", "tool_calls": "tool calls", "tokens": "tokens", "cost_usd": "cost", "latency_s": "latency"}


class ConsistencyReading:
    """The consistency tally of one report, fed by ``watch`` as the report's single pass reads the trials."""

    def __init__(self, config: RunConfig):
        self.tally = ConsistencyTally(paraphrases=config.paraphrase)
        self._plans: dict[tuple[str, str | None], Tools] = {}  # per task and outcome taken: its plan's tools

    def watch(self, trials: Iterable[TrialRecord]) -> Iterator[TrialRecord]:
        """The trials, unchanged, each judged one added to the tally on its way through."""
        add = self.tally.add
        for t in trials:
            if t.infra_error is None and t.signature != USER_SIMULATOR_ERROR:
                add(t.task_id, t.persona, t.trial, t.reward == 1, conversation(t), self._plan(t), agent_usage(t))
            yield t

    def figures(self) -> dict[str, Any]:
        """``metrics.consistency``, or nothing without a judged trial."""
        run = consistency_figures(self.tally)
        return {"consistency": run} if run else {}

    def _plan(self, t: TrialRecord) -> Tools | None:
        """The tools of the plan the trial was measured against (one plan per task and outcome: built once), None
        when it recorded no steps."""
        if not t.steps:
            return None
        key = (t.task_id, t.steps["outcome"])
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = tuple(step["tool"] for step in t.steps["steps"])
        return plan


def conversation(t: TrialRecord) -> Conversation:
    """A stored judged trial's conversation: as recorded when it was judged; in a store from before that was
    recorded, from the transcript the store handed over unparsed, else from its events, which are then whole."""
    recorded = t.steps.get("conversation") if t.steps else None
    if recorded is not None:
        return Conversation.from_json(recorded)
    return conversation_of_text(t.transcript) if t.transcript is not None else conversation_of_events(t.events)


def agent_usage(t: TrialRecord) -> Usage | None:
    """A stored trial's agent model usage, None when its agent called no model."""
    agent = t.usage.get("agent")
    if not agent:
        return None
    return Usage(agent["input_tokens"] + agent["output_tokens"], agent["cost_usd"], sum(agent["latency_s"]))


def conversation_of_text(text: str) -> Conversation:
    """The conversation from a stored transcript's JSON text, parsed only if it may state a confidence."""
    names = _TOOL_CALLS.findall(text)
    if "\\" in text and any("\\" in n for n in names):  # a name with an escaped character: rare, so checked once
        names = [json.loads(f'"{n}"') for n in names]
    confidence = None
    if "onfidence" in text:  # the convention's word, either spelling
        confidence = last_confidence(json.loads(text))
    return Conversation(tuple(names), text.count(_AGENT_MESSAGE), confidence)


# --- terminal -------------------------------------------------------------------------------------------------


def print_consistency(m: Metrics, console: Console) -> None:
    """The compact section: one row per figure, with what it means."""
    c = m.consistency
    if c is None:
        return
    table = Table(title="consistency beyond outcomes (means over scenarios; definitions in docs/statistics.md)")
    for col in ("figure", "value", "reads"):
        table.add_column(col, justify="right" if col == "value" else "left")
    for row in consistency_rows(c):
        table.add_row(*map(Text, row))
    console.print(table)


def consistency_rows(c: Consistency) -> list[tuple[str, str, str]]:
    """(figure, value, what it reads) for each consistency figure, as both reports show them."""
    rows = [("outcome consistency", with_ci(c.outcome.mean, c.outcome.ci), "1 − 4p(1−p): 1 when a scenario's trials agree")]
    rows += _trajectory_rows(c)
    for name, r in c.resources.items():
        rows.append(
            (f"{RESOURCE_WORDS[name]} spread", f"CV {num(r.cv)}, IQR {_amount(r.iqr)}", f"mean {_amount(r.mean)} per trial")
        )
    if c.resources_skipped:
        rows.append(("skipped", ", ".join(RESOURCE_WORDS[r] for r in c.resources_skipped), "zero in every trial (no model)"))
    rows.append(_calibration_row(c))
    rows.append(_robustness_row(c))
    return rows


def _trajectory_rows(c: Consistency) -> list[tuple[str, str, str]]:
    t = c.trajectory
    if t is None:
        return [("trajectory", "—", "no transcript was read")]
    rows = [
        (
            "distinct tool sequences",
            f"{t.tool_sequences:.2f}",
            f"per scenario; the most common in {t.modal_share:.0%} of its trials",
        )
    ]
    if t.pairwise_distance:
        pairwise = with_ci(t.pairwise_distance.mean, t.pairwise_distance.ci)
        rows.append(("pairwise edit distance", pairwise, "tool calls of two trials, edits / longer length"))
    if t.plan_distance:
        rows.append(
            ("edit distance to the plan", with_ci(t.plan_distance.mean, t.plan_distance.ci), "each trial's calls vs its plan's")
        )
    return rows


def _calibration_row(c: Consistency) -> tuple[str, str, str]:
    k = c.calibration
    if not k.stated:
        return ("calibration", "—", "no stated confidence")
    return ("calibration", f"Brier {num(k.brier)}, ECE {num(k.ece)}", f"{k.stated:,} of {k.judged:,} trials stated a confidence")


def _robustness_row(c: Consistency) -> tuple[str, str, str]:
    r = c.robustness
    if r is None:
        return ("prompt robustness", "—", "not measured: run with --paraphrase N")
    if r.k is None:
        return ("prompt robustness", "—", "no scenario had trials on both the original and a paraphrased opening")
    drop = next(d for d in r.deltas if d.metric == (f"pass^{r.k}" if r.k > 1 else "avg_reward"))
    return (
        f"pass^{r.k} original → paraphrased",
        f"{num(r.original_pass_hat_k)} → {num(r.paraphrased_pass_hat_k)}",
        f"change {drop.change:+.3f} [{drop.ci[0]:+.3f}, {drop.ci[1]:+.3f}] ({drop.verdict}); {r.paraphrases} paraphrases, "
        f"{r.scenarios} scenarios",
    )


def _amount(x: float | None) -> str:
    """A resource figure: counts and seconds as they come, small costs with their digits."""
    if x is None:
        return "—"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:,.1f}"


# --- HTML -----------------------------------------------------------------------------------------------------


def consistency_section(m: Metrics) -> str:
    """The section: the figures, calibration's bins, the paraphrase comparison, and the least consistent scenarios."""
    c = m.consistency
    if c is None:
        return ""
    rows = "".join(
        f"<tr><td>{escape(f)}</td><td class=num>{escape(v)}</td><td>{escape(r)}</td></tr>" for f, v, r in consistency_rows(c)
    )
    return (
        "<h2>Consistency beyond outcomes</h2><p>Whether the agent behaves the same way each time, not only whether it ends "
        "the same way: means over scenarios, with 95% bootstrap intervals over scenarios; each figure's formula is in "
        "docs/statistics.md.</p>"
        f"<table><tr><th>figure</th><th>value</th><th>reads</th></tr>{rows}</table>"
        f"{_bins(c)}{_deltas(c)}{_least_consistent(c.scenarios)}"
    )


def _bins(c: Consistency) -> str:
    if not c.calibration.bins:
        return ""
    rows = "".join(
        f"<tr><td>{b.low:.1f}–{b.high:.1f}</td><td class=num>{b.trials}</td><td class=num>{html_figure(b.confidence)}</td>"
        f"<td class=num>{html_figure(b.success)}</td></tr>"
        for b in c.calibration.bins
    )
    return (
        "<h3>Calibration</h3><table><tr><th>stated confidence</th><th>trials</th><th>mean confidence</th>"
        f"<th>success rate</th></tr>{rows}</table>"
    )


def _deltas(c: Consistency) -> str:
    r = c.robustness
    if r is None or not r.deltas:
        return ""
    rows = "".join(
        f"<tr><td>{escape(d.metric)}</td><td class=num>{html_figure(d.a)}</td><td class=num>{html_figure(d.b)}</td>"
        f"<td class=num>{d.change:+.3f} <span class=note>[{d.ci[0]:+.3f}, {d.ci[1]:+.3f}]</span></td><td>{escape(d.verdict)}</td></tr>"
        for d in r.deltas
    )
    return (
        f"<h3>Prompt robustness</h3><p>Trials on the task's own opening against trials on one of {r.paraphrases} "
        f"paraphrases of it, paired by scenario ({r.scenarios} scenarios; paired bootstrap).</p><table><tr><th>figure</th>"
        f"<th>original</th><th>paraphrased</th><th>change [95% CI]</th><th>verdict</th></tr>{rows}</table>"
    )


def least_consistent(s: ScenarioColumns, limit: int = SHOWN_SCENARIOS) -> list[int]:
    """The scenarios (indices) whose trials agree least, at most ``limit``: lowest outcome consistency, then most
    distinct tool sequences; none whose trials agree in outcome and calls."""
    sequences = [n or 0 for n in s.tool_sequences]
    ranked = sorted(range(len(s.outcome)), key=lambda i: (s.outcome[i], -sequences[i], s.task_id[i], s.persona[i]))
    return [i for i in ranked if s.outcome[i] < 1 or sequences[i] > 1][:limit]


def _least_consistent(s: ScenarioColumns) -> str:
    shown = least_consistent(s)
    if not shown:
        return "<p>Every scenario's trials agreed in outcome and made the same tool calls.</p>"
    rows = "".join(
        f"<tr><td>{escape(s.task_id[i])}</td><td>{escape(s.persona[i])}</td><td class=num>{html_figure(s.outcome[i])}</td>"
        f"<td class=num>{'—' if s.tool_sequences[i] is None else s.tool_sequences[i]}</td>"
        f"<td class=num>{html_figure(s.pairwise_distance[i])}</td><td class=num>{html_figure(s.plan_distance[i])}</td></tr>"
        for i in shown
    )
    return (
        "<h3>Least consistent scenarios</h3><table><tr><th>task</th><th>persona</th><th>outcome consistency</th>"
        f"<th>distinct tool sequences</th><th>pairwise distance</th><th>distance to plan</th></tr>{rows}</table>"
    )
