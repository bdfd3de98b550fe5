"""The report of a stored run, built once: the run's standing, configuration, metrics and every scenario's
trials, as the typed `Report` that every writer reads; and the JSON writer."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from passhat.errors import UserError
from passhat.file_writes import write_atomically
from passhat.metrics import summarize
from passhat.metrics.conservative import conservative
from passhat.metrics.harm import risky_action_metrics
from passhat.metrics.steps import PRIMARY, step_reliability
from passhat.metrics.summary import Scenario
from passhat.metrics.usage import usage_metrics
from passhat.report.caveats import run_caveats
from passhat.report.consistency import ConsistencyReading
from passhat.report.guard_section import safety_metrics
from passhat.report.model import Report, ScenarioReport
from passhat.report.reading import RunReading, read_run
from passhat.report.reliability import attach_group_intervals, reliability_metrics, scenario_stats
from passhat.report.state_diff import row_changes
from passhat.store import ResultStore, TrialRecord


def build_report(
    store: ResultStore,
    tags: Mapping[str, Sequence[str]] | None = None,
    trials: Iterable[TrialRecord] | None = None,
    gated_tasks: Iterable[str] | None = None,
    gate: Mapping[str, Any] | None = None,
    scenarios: Collection[Scenario] | None = None,
) -> Report:
    """trials: the store's trials when the caller already holds them; otherwise they are read from the store one
    at a time, so a run of any size is reported in one pass without holding its transcripts; gated_tasks: the
    tasks that declare a human gate of their own (``guards:`` in their file); gate: the report's gate section,
    when a gate was given (its decision, and its ci or trials_saved); scenarios: only these are reported."""
    read = store.report_trials() if trials is None else trials
    kept = read if scenarios is None else (t for t in read if (t.task_id, t.persona) in scenarios)
    consistency = ConsistencyReading(store.config)  # fed as the one pass goes by
    # the reading is let go before the model is built
    document = _document(store, read_run(consistency.watch(kept)), tags, gated_tasks, consistency)
    return Report.model_validate(document if gate is None else {**document, "gate": gate})


def _document(
    store: ResultStore,
    reading: RunReading,
    tags: Mapping[str, Sequence[str]] | None,
    gated_tasks: Iterable[str] | None,
    consistency: ConsistencyReading,
) -> dict[str, Any]:
    verdicts = reading.verdicts
    summary = summarize(verdicts, tags)
    counts = verdicts.counts()
    standing = run_caveats(store.run_id, store.config, counts)
    metrics = {**summary.to_json(), **reliability_metrics(counts, tags or {}, standing.fit_refused)}
    metrics.update(conservative=conservative(verdicts), **usage_metrics(reading.usages))
    attach_group_intervals(metrics, counts, tags or {})
    metrics.update(safety_metrics(store.config, reading, gated_tasks))
    if steps := step_reliability(reading.steps):
        metrics["steps"] = steps
    if risky := risky_action_metrics(reading.harm):
        metrics["risky_actions"] = risky
    metrics.update(consistency.figures())
    return {
        "run_id": store.run_id,
        **standing.to_json(),
        "config": store.config,
        "metrics": metrics,
        "scenarios": scenario_stats(scenario_rows(reading)),
        "infra_error_example": infra_error_example(reading.first_infra_error),
    }


def infra_error_example(first: str | None) -> str | None:
    """The last line of the run's first infra error (the exception and its message), so a report can say
    what failed without a traceback."""
    return first.strip().splitlines()[-1] if first else None


def scenario_rows(reading: RunReading) -> list[dict[str, Any]]:
    """Judged trials per scenario, in trial order; trials that could not be judged (infra errors, user
    simulator errors) are counted apart, never listed as rewards, so no report reads them as failures.
    ``state_diff``: the first failed trial whose backend differs from the expected state, and how, field by field.
    ``outcomes``: the passes by the acceptable outcome they took, for a task whose passes took more than the primary."""
    rows = {scenario: {**vars(v), "state_diff": None} for scenario, v in reading.verdicts.scenarios.items()}
    for scenario, (trial, differences) in reading.first_failures.items():
        rows[scenario]["state_diff"] = {"trial": trial, "rows": row_changes(differences)}
    several = {task for (task, _), labels in reading.pass_outcomes.items() if set(labels) - {PRIMARY}}
    for (task, persona), labels in reading.pass_outcomes.items():
        if task in several:
            rows[task, persona]["outcomes"] = dict(sorted(labels.items()))
    return [{"task_id": task, "persona": persona, **row} for (task, persona), row in sorted(rows.items())]


def report_json(report: Report) -> Iterator[bytes]:
    """The report as indented JSON, in pieces: the report without its scenarios, then a scenario at a time (each
    by the model's own serializer, indented to its depth). A run of 100,000 trials has 12,500 scenarios, and
    the document as one piece cost several copies of itself in memory; encoding it in Python cost seconds."""
    dump = {"indent": 2, "by_alias": True, "exclude_unset": True}
    head = Report.__pydantic_serializer__.to_json(report.model_copy(update={"scenarios": []}), **dump)
    before, after = head.rsplit(b'"scenarios": []', 1)  # the last: config and metrics come first, strings escape '"'
    yield before + b'"scenarios": ['
    for i, scenario in enumerate(report.scenarios):
        text = ScenarioReport.__pydantic_serializer__.to_json(scenario, **dump).replace(b"\n", b"\n    ")
        yield (b",\n    " if i else b"\n    ") + text
    yield (b"\n  ]" if report.scenarios else b"]") + after + b"\n"


def write_json(document: Report | Mapping[str, Any], path: Path) -> None:
    """The report, or another command's plain document (traffic, compare), as indented JSON."""
    data = report_json(document) if isinstance(document, Report) else (json.dumps(document, indent=2, sort_keys=False), "\n")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data, window="report_write")
    except OSError as exc:
        raise UserError(f"cannot write the JSON report to {path} (--json): {exc.strerror}.") from None
