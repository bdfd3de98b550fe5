"""The HTML report: one self-contained file (inline CSS, a few lines of JS, SVG charts), readable
offline, with every trial's transcript one click from its scenario.

Everything that comes from the store (customer and agent text, tool arguments and results, task
and persona names) goes through html.escape. Transcripts are rendered server-side and shown with
CSS :target, so opening one needs no script. A run of many trials embeds at most max_transcripts
of them: every failed or unjudged trial first, then one passing trial per scenario, then the rest
in order; the others are listed with their verdict but not embedded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from html import escape
from pathlib import Path
from typing import Any

from passhat.errors import UserError
from passhat.file_writes import write_atomically
from passhat.metrics.extrapolate import ASSUMPTIONS, EXTRAPOLATE_KS
from passhat.metrics.intervals import wilson
from passhat.report.caveats import stop_verdict, trials_scope
from passhat.report.consistency import consistency_section
from passhat.report.embedding import MAX_TRANSCRIPTS, Verdict, embedded_trials
from passhat.report.guard_section import COMPARED, UNITS
from passhat.report.harm_section import risky_actions_html
from passhat.report.html_steps import outcomes_cell, steps_section
from passhat.report.model import Extrapolation, Metrics, Report, ScenarioReport
from passhat.report.numbers import html_figure as _fmt
from passhat.report.numbers import num, per_100
from passhat.report.reliability import not_predicted, partition_rows
from passhat.report.state_diff import ROW_MEANING, ROW_WORDS, RowChange, row_changes, value
from passhat.report.svg import COLORS, Series, bar_chart, line_chart, stacked_bars
from passhat.store.results import TrialKey, TrialRecord

CURVE_TICKS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
PARTITION = ("reliable", "unreliable", "out_of_reach")

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#212529}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #dee2e6}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid #e9ecef;text-align:left}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.headline{font-size:18px}
.meets{color:#2b8a3e;font-weight:bold}.fails{color:#c92a2a;font-weight:bold}
svg.chart{width:100%;max-width:960px;height:auto}svg.chart text{font:11px system-ui,sans-serif;fill:#343a40}svg.chart .grid{stroke:#e9ecef}
svg.chart .band{opacity:.18}svg.chart .whisker{stroke:#212529;stroke-width:1.5}
a.t{display:inline-block;width:1.3em;text-align:center;text-decoration:none;border-radius:3px}
.pass{background:#d3f9d8;color:#2b8a3e}.fail{background:#ffe3e3;color:#c92a2a}.skip{background:#f1f3f5;color:#868e96}
.transcript{display:none;border:2px solid #adb5bd;border-radius:6px;padding:8px 16px;margin:12px 0}
.transcript:target{display:block}.msg{margin:4px 0;padding:4px 8px;border-radius:4px;white-space:pre-wrap}
.user{background:#e7f5ff}.agent{background:#f8f9fa}.tool{background:#fff9db;font-family:monospace;font-size:12px}
pre{white-space:pre-wrap;word-break:break-word;margin:0}.note{color:#495057}
.warning{background:#fff5f5;border:2px solid #c92a2a;border-radius:6px;padding:8px 16px;color:#c92a2a;font-weight:bold}
mark{background:#ffe066;border-radius:2px;padding:0 2px}tr.extra td{background:#ebfbee}tr.missing td{background:#fff5f5}
"""

SCRIPT = """
document.getElementById('filter').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('#scenarios tbody tr').forEach(function (row) {
    row.style.display = row.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
"""


Transcripts = Callable[[list[TrialKey]], Iterable[TrialRecord]]  # the full records of chosen trials, in that order


def render_html(
    report: Report,
    trials: Sequence[Verdict],
    max_transcripts: int = MAX_TRANSCRIPTS,
    transcripts: Transcripts | None = None,
) -> str:
    """trials: every trial of the run in store order, as full records or as the store's light rows; transcripts
    fetches the records of the trials chosen for embedding (ResultStore.records), needed when they are light rows."""
    return "".join(html_pieces(report, trials, max_transcripts, transcripts))


def html_pieces(
    report: Report, trials: Sequence[Verdict], max_transcripts: int, transcripts: Transcripts | None
) -> Iterator[str]:
    """The page in the order it is written, a section or a scenario row at a time: a page of 100,000 trials is
    never one string in memory, let alone several."""
    embedded = embedded_trials(trials, max_transcripts)
    title = escape(f"passhat run {report.run_id}")
    yield f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title><style>{CSS}</style></head><body>'
    yield from figure_sections(report)
    chosen = sorted(embedded)
    records = transcripts([trials[i].key for i in chosen]) if transcripts else (trials[i] for i in chosen)
    yield from _scenarios(report, trials, embedded, max_transcripts)
    yield from map(_transcript, chosen, records)
    yield f"<script>{SCRIPT}</script></body></html>"


def figure_sections(report: Report) -> Iterator[str]:
    """The run's header and every figure and chart, before its scenario table: what the web dashboard's run
    page shows of the report (it pages through scenarios and trials itself)."""
    m = report.metrics
    yield _header(report)
    if m.scenarios:
        yield from (_curves(m), _partition(m), _signatures(m), _personas(m), _compounding(m))
        yield from steps_section(m.steps)
        yield _safety(m)
        yield consistency_section(m)
        yield risky_actions_html(m.risky_actions)


def write_html(
    report: Report, trials: Sequence[Verdict], path: Path, max_transcripts: int, transcripts: Transcripts | None = None
) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, html_pieces(report, trials, max_transcripts, transcripts), window="report_write")
    except OSError as exc:
        raise UserError(f"cannot write the HTML report to {path} (--html): {exc.strerror}.") from None


def _header(report: Report) -> str:
    m, cfg = report.metrics, report.run_config
    shown = {"domain": cfg.domain, "agent": cfg.agent, "user": cfg.user, "trials": cfg.trials, "seed": cfg.seed, "mode": cfg.mode}
    config = " ".join(f"{k}={escape(str(v))}" for k, v in shown.items())
    parts = [f"<h1>passhat run {escape(report.run_id)}</h1><p class=note>{config}</p>"]
    parts += [f"<p class=warning>{escape(w)}</p>" for w in report.caveats]
    if not m.scenarios:
        return "".join(parts) + "<p class=fails>No trial could be judged.</p>" + _plumbing(m) + _gate(report)
    verdict = stop_verdict(report)
    parts.append(f"<p class=headline>{escape(verdict)}</p>" if verdict else _figures_headline(report))
    x = m.extrapolated
    if not_predicted(m) is None:  # otherwise the curves section says why, once
        parts.append(f"<p>Model-based pass^100 ({escape(x.model)}): {_predicted(x, 100)}.</p>")
    return "".join(parts) + _plumbing(m) + _gate(report)


def _figures_headline(report: Report) -> str:
    """pass^1 against pass^n with their intervals; pass^1 alone when some scenario has a single judged trial."""
    m = report.metrics
    n, scope = m.trials_per_scenario, escape(f"{m.scenarios} scenarios × {trials_scope(report)}")
    first = f"pass^1 {_fmt(m.avg_reward, m.ci.avg_reward)}"
    if n == 1:
        return (
            f"<p class=headline>{first} <span class=note>over {scope} (95% bootstrap interval); some scenario has "
            "only 1 judged trial, so no pass^k with k &gt; 1</span></p>"
        )
    last = f"pass^{n} {_fmt(m.pass_hat_k[n], m.ci.pass_hat_k[n])}"
    return f"<p class=headline>{first} &nbsp; vs &nbsp; {last} <span class=note>over {scope} (95% intervals)</span></p>"


def _gate(report: Report) -> str:
    """The gate's verdict and reason, with the 95% interval of its pass^k when the run is finished; nothing
    when it is the gate an early-stopped run stopped against, whose verdict is the headline already."""
    g, stopped = report.gate, report.early_stop_decision
    if g is None or (stopped is not None and g.gate == stopped.gate):
        return ""
    cls, word = {True: ("meets", "MEETS THE BAR"), False: ("fails", "DOES NOT MEET THE BAR")}.get(g.meets, ("fails", "UNDECIDED"))
    interval = f" (95% CI [{escape(num(g.ci[0]))}, {escape(num(g.ci[1]))}])" if g.ci else ""
    return f"<p>Gate {escape(g.gate)}: <span class={cls}>{word}</span> — {escape(g.reason)}{interval}</p>"


def _plumbing(m: Metrics) -> str:
    """Trials that could not be judged with the conservative figure, and what the model calls cost."""
    parts = []
    unjudged = m.infra_errors + m.user_simulator_errors
    line = f"Infra errors: {m.infra_errors}" + (
        f"; user-simulator errors: {m.user_simulator_errors}" if m.user_simulator_errors else ""
    )
    c = m.conservative
    if m.infra_errors and c.pass_hat_k:
        k = max(c.pass_hat_k)
        line += (
            f" — left out of every figure above; counted as failures (conservative): average reward "
            f"{_fmt(c.avg_reward)}, pass^{k} {_fmt(c.pass_hat_k[k])}"
        )
    parts.append(f"<p{' class=fails' if unjudged else ''}>{line}.</p>")
    if m.model_calls:
        roles = "; ".join(
            f"{escape(role)} {escape(u.model)}: {u.calls:,} calls ({u.cached_calls:,} cached), "
            f"{u.input_tokens:,} tokens in / {u.output_tokens:,} out, ${u.cost_usd:.4f}"
            for role, u in m.model_calls.items()
        )
        unpriced = m.unpriced_models
        parts.append(
            f"<p>Cost ${m.cost_usd:.4f}, tokens {m.tokens.input:,} in / {m.tokens.output:,} out "
            f"<span class=note>({roles})</span>"
            + (
                f" <span class=fails>no price for {escape(', '.join(unpriced))}: its cost is unknown, not zero</span>"
                if unpriced
                else ""
            )
            + "</p>"
        )
    return "".join(parts)


def _safety(m: Metrics) -> str:
    """Faults injected with the share of hit trials that still passed, and the guard figures with units."""
    parts = ["<h2>Faults and guards</h2>"]
    if m.faults:
        rows = "".join(
            f"<tr><td>{escape(name)}</td><td class=num>{f.injected}</td><td class=num>{f.trials_affected}</td>"
            f"<td class=num>{f.trials_passed}</td><td class=num>{escape(num(f.recovery))}</td></tr>"
            for name, f in m.faults.items()
        )
        parts.append(
            "<table><tr><th>fault</th><th>injected</th><th>trials hit</th><th>still passed</th>"
            f"<th>recovery</th></tr>{rows}</table>"
        )
    else:
        parts.append("<p>No fault was injected.</p>")
    g = m.guard
    counts = [(f, getattr(g, f)) for f in COMPARED]
    rows = "".join(
        f"<tr><td>{escape(f.replace('_', ' '))}</td><td>{UNITS[f]}</td><td class=num>{count}</td>"
        f"<td class=num>{escape(per_100(count, g.trials))}</td></tr>"
        for f, count in counts
    )
    declared = g.handoffs_task_declared
    note = (
        f"<p class=note>{declared} of the {g.handoffs} handoffs come from human gates that tasks declare "
        "themselves (<code>guards:</code> in the task file), which apply whatever <code>--guard</code> says.</p>"
        if g.handoffs and declared
        else ""
    )
    parts.append(
        f"<p>Guards on: {escape(', '.join(g.enabled) or 'none')}. Counted over {g.trials:,} judged trials; the write "
        "figures count writes (a trial can hold several), unlike the failure signatures, which count trials. "
        f"Helpfulness {_fmt(g.helpfulness)} (trials of write tasks whose required writes all happened).</p>"
        f"<table><tr><th>figure</th><th>unit</th><th>count</th><th>per 100 trials</th></tr>{rows}</table>{note}"
    )
    return "".join(parts)


def _curves(m: Metrics) -> str:
    """The measured curves up to n, and, when the run was fit, the model's beyond n with its tables."""
    n, x = m.trials_per_scenario, m.extrapolated
    exact = list(m.pass_hat_k)
    series = [
        Series("pass^k (exact)", [(k, m.pass_hat_k[k]) for k in exact], [(k, *m.ci.pass_hat_k[k]) for k in exact], COLORS[0]),
        Series("pass@k (exact)", [(k, m.pass_at_k[k]) for k in exact], [(k, *m.ci.pass_at_k[k]) for k in exact], COLORS[2]),
    ]
    reason = not_predicted(m)
    ticks: Sequence[int] = [k for k in CURVE_TICKS if k <= max(n, 2)]
    dashed = ""
    after = f"<p>pass^k beyond n is not predicted: {escape(reason)}.</p>" if reason is not None else ""
    if x is not None:
        curve = {k: v for k, v in x.curve.items() if k >= n}
        if max(curve, default=0) > n:  # the model's curve, as far as it is predicted
            ticks = CURVE_TICKS
            series.append(
                Series(
                    "pass^k (model)",
                    [(k, v[0]) for k, v in curve.items()],
                    [(k, v[1], v[2]) for k, v in curve.items()],
                    COLORS[1],
                    dashed=True,
                )
            )
            dashed = (
                f" Dashed: predicted by the fitted model <b>{escape(x.model)}</b> beyond n — model-based, "
                "not measured, and drawn only as far as it is predicted."
            )
        after += _extrapolation(x)
    chart = line_chart("pass^k and pass@k against k", series, ticks, "k (log scale)", "probability", log_x=True)
    return (
        "<h2>pass^k and pass@k against k</h2>"
        f"<p>Solid lines with shaded 95% bands: measured (exact estimators, k ≤ n = {n}).{dashed}</p>{chart}{after}"
    )


def _predicted(x: Extrapolation, k: int) -> str:
    """A predicted pass^k with its interval, or why it is not predicted."""
    if x.pass_hat_k[k] is None:
        return f"not predicted: {escape(x.not_predicted[k])}"
    return _fmt(x.pass_hat_k[k], x.ci[k])


def _extrapolation(x: Extrapolation) -> str:
    """The fitted model's predictions beyond n, its agreement with the exact estimator, and its assumptions."""
    fit_rows = "".join(
        f"<tr><td class=num>{k}</td><td class=num>{_fmt(v.exact)}</td><td class=num>{_fmt(v.model)}</td>"
        f"<td>{'yes' if x.agrees[k] else 'no'}</td></tr>"
        for k, v in x.fit_vs_exact.items()
    )
    predicted = "".join(f"<tr><td class=num>{k}</td><td>{_predicted(x, k)}</td></tr>" for k in EXTRAPOLATE_KS)
    candidates = ", ".join(f"{escape(c.name)} (AIC {c.aic:.1f}, pass^100 {escape(num(c.pass_hat_k[100]))})" for c in x.candidates)
    return (
        f"<h3>Predicted pass^k beyond n</h3><table><tr><th>k</th><th>pass^k [95% CI]</th></tr>{predicted}</table>"
        f"<h3>Where the fit agrees with the exact estimator (k ≤ n)</h3><table><tr><th>k</th><th>exact</th>"
        f"<th>model</th><th>exact as close as chance allows (simultaneous 95%)</th></tr>{fit_rows}</table>"
        f"<p class=note>Candidates: {candidates}; the lowest AIC gives the figure, and every bootstrap resample "
        "re-selects among them.</p>"
        "<h3>Assumptions of the extrapolation</h3><ul>" + "".join(f"<li>{escape(a)}</li>" for a in ASSUMPTIONS) + "</ul>"
    )


def _partition(m: Metrics) -> str:
    n = m.trials_per_scenario
    lo = wilson(n, n)[0]
    labels = (f"passed all {n} (Wilson ≥ {lo:.2f})", "passed some", "passed none")
    rows = partition_rows(m)
    counts = [(label, [getattr(part, c) for c in PARTITION]) for label, part in rows]
    chart = stacked_bars("partition", counts, labels)
    table = "".join(
        f"<tr><td>{escape(label)}</td>" + "".join(f"<td class=num>{v}</td>" for v in values) + "</tr>" for label, values in counts
    )
    return (
        f"<h2>Partition</h2><p>Scenarios by how many of their trials passed: all (a candidate to ship), some (fix), "
        f"none (route to a human). Passing all {n} is not proof of reliability: {n}/{n} has a 95% Wilson lower bound of "
        f"{lo:.2f} on the scenario's success rate (JSON classes: reliable / unreliable / out_of_reach).</p>{chart}"
        "<table><tr><th></th>" + "".join(f"<th>{escape(h)}</th>" for h in labels) + f"</tr>{table}</table>"
    )


def _signatures(m: Metrics) -> str:
    sigs = m.failure_signatures
    if not sigs:
        return "<h2>Failure signatures</h2><p>No judged trial failed.</p>"
    chart = bar_chart("failed trials by signature", [(s, c, None) for s, c in sigs.items()], unit_max=max(sigs.values()))
    return f"<h2>Failure signatures</h2><p>Why judged trials failed (trials per signature).</p>{chart}"


def _personas(m: Metrics) -> str:
    n = m.trials_per_scenario
    rows, table = [], []
    for name, g in m.by_persona.items():
        hat = g.pass_hat_k.get(n)
        rows.append((f"{name} pass^1", g.avg_reward, g.ci.avg_reward))
        if hat is not None:
            rows.append((f"{name} pass^{n}", hat, g.ci.pass_hat_k[n]))
        drop = {d.metric: d for d in m.persona_drop.get(name, [])}
        change = "; ".join(
            f"{escape(k)} {d.change:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}] {escape(d.verdict)}"
            for k, d in drop.items()
            if k in ("avg_reward", f"pass^{n}")
        )
        table.append(f"<tr><td>{escape(name)}</td><td class=num>{g.scenarios}</td><td>{change or '—'}</td></tr>")
    chart = bar_chart("pass^1 and pass^n by persona, with 95% intervals", rows)
    return (
        f"<h2>Personas</h2>{chart}<table><tr><th>persona</th><th>scenarios</th>"
        f"<th>change from baseline, same tasks (paired 95% CI)</th></tr>{''.join(table)}</table>"
    )


def _compounding(m: Metrics) -> str:
    points = m.compounding
    if not points:
        return "<h2>Compounding</h2><p>No task carries a writes:N tag.</p>"
    k = points[0].k
    xs = [p.writes for p in points]
    series = [
        Series(
            "avg reward", [(p.writes, p.avg_reward) for p in points], [(p.writes, *p.avg_reward_ci) for p in points], COLORS[0]
        ),
        Series(
            f"pass^{k}", [(p.writes, p.pass_hat_k) for p in points], [(p.writes, *p.pass_hat_k_ci) for p in points], COLORS[1]
        ),
    ]
    ticks = list(range(min(xs), max(xs) + 1)) if len(xs) > 1 else [xs[0] - 1, xs[0], xs[0] + 1]
    chart = line_chart("success against writes", series, ticks, "writes the task needs", "probability")
    counts = ", ".join(f"{p.writes} writes: {p.scenarios} scenarios" for p in points)
    return f"<h2>Compounding</h2><p>Success against the number of writes a task needs ({counts}).</p>{chart}"


def _scenarios(report: Report, trials: Sequence[Verdict], embedded: set[int], cap: int) -> Iterator[str]:
    """The scenarios' table: its head, then a row at a time."""
    anchors = {trials[i].key: i for i in embedded}  # only the embedded trials link anywhere
    several = any(s.outcomes for s in report.scenarios)  # some task's passes took more than one acceptable outcome
    note = (
        f"All {len(trials)} transcripts are embedded."
        if len(embedded) == len(trials)
        else f"{len(embedded)} of {len(trials)} transcripts are embedded (cap {cap}: failures first, then one "
        "passing trial per scenario); grey marks are not embedded — raise --max-transcripts to include them."
    )
    yield (
        "<h2>Scenarios</h2><p>Click a mark to open that trial's transcript. " + note + "</p>"
        '<p><input id="filter" placeholder="filter rows (task, persona, class, signature)" size="50"></p>'
        '<table id="scenarios"><thead><tr><th>task</th><th>persona</th><th>class</th><th>passed</th>'
        "<th>Wilson 95%</th><th>trials</th><th>signatures</th>"
        + ("<th>acceptable outcomes the passes took</th>" if several else "")
        + "</tr></thead><tbody>"
    )
    for s in report.scenarios:
        links = []
        for trial, reward, sig in zip(s.trials, s.rewards, s.signatures, strict=True):
            i = anchors.get((s.task_id, s.persona, trial))
            cls, mark = ("pass", "✓") if reward == 1 else ("fail", "✗")
            tip = escape(f"trial {trial}: {sig or 'passed'}")
            links.append(
                f'<a class="t {cls}" href="#t{i}" title="{tip}">{mark}</a>'
                if i is not None
                else f'<span class="t skip" title="{tip} (not embedded)">{mark}</span>'
            )
        wilson_ci = s.wilson
        sigs = ", ".join(s.failure_names)
        yield (
            f"<tr><td>{escape(s.task_id)}</td><td>{escape(s.persona)}</td><td>{escape(_class(s))}</td>"
            f"<td class=num>{s.passed}/{s.judged}</td>"
            f"<td class=num>{'—' if wilson_ci is None else f'[{wilson_ci[0]:.2f}, {wilson_ci[1]:.2f}]'}</td>"
            f"<td>{''.join(links)}</td><td>{escape(sigs)}</td>{outcomes_cell(s) if several else ''}</tr>"
        )
    yield "</tbody></table>"


CLASS_WORDS = {"unreliable": "passed some", "out_of_reach": "passed none"}


def _class(s: ScenarioReport) -> str:
    """The scenario's class in words; passing all n shows the Wilson lower bound it is worth; — when none was judged."""
    if s.scenario_class is None:
        return "—"
    if s.scenario_class == "reliable":
        return f"passed all {s.judged}" + (f" (Wilson lower bound {s.wilson[0]:.2f})" if s.wilson else "")
    return CLASS_WORDS[s.scenario_class]


def _transcript(i: int, t: TrialRecord) -> str:
    verdict = "infra error" if t.infra_error else ("passed" if t.reward == 1 else f"failed: {t.signature}")
    details = t.grade.get("details", {}) if t.grade else {}
    facts = [f for f in details.get("facts", []) if isinstance(f, dict)]
    events = "".join(_event(e, [f for f in facts if f.get("event") == j]) for j, e in enumerate(t.events))
    diffs = details.get("state_differences", [])
    backend = state_diff_table(row_changes(diffs)) if diffs else "<p>The backend matches the expected state.</p>"
    other = {k: v for k, v in details.items() if k not in ("state_differences", "facts") and v}
    infra = f"<pre>{escape(t.infra_error)}</pre>" if t.infra_error else ""
    return (
        f'<section class="transcript" id="t{i}"><h3>{escape(t.task_id)} / {escape(t.persona)} / trial {t.trial} — '
        f"{escape(verdict)}</h3><p class=note>seed {t.seed}</p>{infra}{events}"
        f"{_facts_table(facts)}<h4>Backend against the expected state</h4>{backend}"
        f"<h4>Grader</h4><pre>{escape(json.dumps(other, indent=1, ensure_ascii=False))}</pre>"
        '<p><a href="#scenarios">back to the scenarios</a></p></section>'
    )


def state_diff_table(changes: Sequence[RowChange]) -> str:
    """One table row per differing backend row: a changed row lists only its differing columns, each marked,
    expected → actual; an extra or missing row is labelled so and lists its values."""
    rows = []
    for c in changes:
        if c.kind == "changed":
            cell = "<br>".join(
                f"<mark>{escape(f.column)}</mark> {escape(value(f.expected))} → {escape(value(f.actual))}" for f in c.fields
            )
        else:
            values = ", ".join(f"{escape(k)} {escape(value(v))}" for k, v in c.row.items())
            cell = f"<b>{ROW_WORDS[c.kind]}</b> ({ROW_MEANING[c.kind]})<br><span class=note>{values}</span>"
        rows.append(f"<tr class={c.kind}><td>{escape(c.table)}</td><td>{escape(c.label)}</td><td>{cell}</td></tr>")
    return (
        "<table class=diff><tr><th>table</th><th>row</th><th>what differs (expected → actual)</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _facts_table(facts: Sequence[dict[str, Any]]) -> str:
    """Each fact the customer had to be told: where the agent told it (marked in the transcript), or why what
    it said does not count (negated, contradicted, only in a data dump...)."""
    if not facts:
        return ""
    rows = "".join(
        f"<tr><td>{escape(str(f.get('kind')))}</td><td>{escape(str(f.get('value')))}</td><td>"
        + (f"told: “{escape(str(f.get('quote', '')))}”" if f.get("told") else f"<b>not told</b> ({escape(str(f.get('reason')))})")
        + "</td></tr>"
        for f in facts
    )
    return f"<h4>Facts the customer had to be told</h4><table><tr><th>kind</th><th>fact</th><th>where</th></tr>{rows}</table>"


def _marked(text: str, told: Sequence[dict[str, Any]]) -> str:
    """The message escaped, each sentence that told a fact marked with what it told."""
    values: dict[str, list[str]] = {}
    for f in told:
        if (quote := str(f.get("quote") or "")) and quote in text:
            values.setdefault(quote, []).append(str(f.get("value")))
    out, at = [], 0
    for quote in sorted(values, key=text.find):
        start = text.find(quote)
        if start < at:
            continue
        out += [escape(text[at:start]), f'<mark title="tells {escape(", ".join(values[quote]))}">{escape(quote)}</mark>']
        at = start + len(quote)
    return "".join(out) + escape(text[at:])


def _event(e: dict[str, Any], told: Sequence[dict[str, Any]] = ()) -> str:
    kind = e.get("kind", "")
    if kind == "tool":
        args = escape(json.dumps(e.get("args"), ensure_ascii=False))
        result = escape(json.dumps(e.get("result"), ensure_ascii=False))
        broke = "".join(
            f"<br>violates {escape(v.get('rule', ''))}: {escape(v.get('reason', ''))}" for v in e.get("violations", [])
        )
        return f'<div class="msg tool">→ {escape(str(e.get("name")))}({args})<br>← {result}{broke}</div>'
    if kind in ("user", "agent"):
        who = "customer" if kind == "user" else "agent"
        return f'<div class="msg {kind}"><b>{who}:</b> {_marked(str(e.get("text", "")), told)}</div>'
    cause = f" ({escape(str(e['cause']))})" if e.get("cause") else ""  # what cut the conversation short
    return f'<div class="msg note">{escape(kind)}: {escape(str(e.get("text", "")))}{cause}</div>'
