"""The statistics a report adds to the run's summary: intervals, extrapolation, partition, spread.

Called by build_report, so the JSON, terminal, HTML and JUnit reports all read the same figures.
Bootstrap resamples use a fixed seed: the same run always reports the same intervals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from passhat.metrics.estimators import pass_hat_curve
from passhat.metrics.extrapolate import extrapolate
from passhat.metrics.intervals import run_intervals, wilson
from passhat.metrics.partition import classify, partition, partition_by
from passhat.metrics.spread import compounding, persona_drops, scenario_variance, spread
from passhat.metrics.summary import Scenario, slices
from passhat.report.model import Metrics, Partition

Counts = Mapping[Scenario, tuple[int, int]]


def reliability_metrics(
    counts: Counts, tags: Mapping[str, Sequence[str]], skip_extrapolation: str | None = None
) -> dict[str, Any]:
    """metrics.ci, .extrapolated, .partition, .partition_by, .spread, .persona_drop, .compounding;
    empty when no trial was judged. With skip_extrapolation (the reason), extrapolated is None and
    extrapolation_skipped says why."""
    if not counts:
        return {}
    every = list(counts.values())
    k_max = min(n for _, n in every)
    ci = run_intervals(every)
    fit: dict[str, Any] | None = None
    if skip_extrapolation is None:
        fit = extrapolate(every, pass_hat_curve([c for c, _ in every], [n for _, n in every])).to_json()
    return {
        "ci": ci.to_json(),
        "extrapolated": fit,
        "extrapolation_skipped": skip_extrapolation,
        "partition": partition(every).to_json(),
        "partition_by": {
            "persona": {p: part.to_json() for p, part in partition_by(counts, _persona).items()},
            "tag": {t: part.to_json() for t, part in partition_by(counts, _tagger(tags)).items()},
        },
        "spread": spread(every).to_json(),
        "persona_drop": {p: [d.to_json() for d in ds] for p, ds in persona_drops(counts).items()},
        "compounding": [point.to_json() for point in compounding(counts, tags, k_max)],
    }


def not_predicted(m: Metrics) -> str | None:
    """Why no pass^k beyond n is shown: the fit was skipped (early stop, too few trials), or every reported
    k was withheld for the same reason (the model misses what was measured). None when some k is shown,
    or when each withheld k has its own reason (the reports then say it k by k)."""
    x = m.extrapolated
    if x is None:
        return str(m.extrapolation_skipped)
    reasons = set(x.not_predicted.values())
    return reasons.pop() if len(x.not_predicted) == len(x.pass_hat_k) and len(reasons) == 1 else None


def attach_group_intervals(metrics: dict[str, Any], counts: Counts, tags: Mapping[str, Sequence[str]]) -> None:
    """Give every by_persona / by_tag entry its own intervals ("ci", as the run's), in place."""
    for key, labels in (("by_persona", _persona), ("by_tag", _tagger(tags))):
        for label, group in slices(counts, labels).items():
            metrics[key][label]["ci"] = run_intervals(group).to_json()


def scenario_stats(row: dict[str, Any]) -> dict[str, Any]:
    """A scenario row of the report with its class, Wilson interval and trial variance added."""
    c, n = sum(row["rewards"]), len(row["rewards"])  # judged trials only (see scenario_rows)
    row["class"] = classify(c, n) if n else None
    row["wilson"] = list(wilson(c, n)) if n else None
    row["variance"] = scenario_variance(c, n)
    return row


def partition_rows(m: Metrics) -> list[tuple[str, Partition]]:
    """The partition as every report shows it: all scenarios, then each persona's, then each tag's
    (a run with judged trials: the only kind with a partition)."""
    rows = [("all scenarios", m.partition)] + [(f"persona {p}", v) for p, v in m.partition_by.persona.items()]
    return rows + [(f"tag {t}", v) for t, v in m.partition_by.tag.items()]


def _persona(scenario: Scenario) -> list[str]:
    return [scenario[1]]


def _tagger(tags: Mapping[str, Sequence[str]]) -> Callable[[Scenario], Sequence[str]]:
    return lambda scenario: tags.get(scenario[0], [])
