"""The report of a stored run, built once: the run's standing, configuration, metrics and every scenario's
trials, as the typed `Report` that every writer reads; and the JSON writer."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from passhat.errors import UserError
from passhat.file_writes import write_atomically
from passhat.metrics import summarize
from passhat.metrics.conservative import conservative
from passhat.metrics.summary import is_judged, scenario_counts
from passhat.metrics.usage import usage_metrics
from passhat.report.caveats import run_caveats
from passhat.report.guard_section import safety_metrics
from passhat.report.model import Report
from passhat.report.reliability import attach_group_intervals, reliability_metrics, scenario_stats
from passhat.report.state_diff import row_changes
from passhat.store import ResultStore, TrialRecord


def build_report(
    store: ResultStore,
    tags: Mapping[str, Sequence[str]] | None = None,
    trials: list[TrialRecord] | None = None,
    gated_tasks: Iterable[str] | None = None,
    gate: Mapping[str, Any] | None = None,
) -> Report:
    """trials: the store's trials when the caller already read them (the HTML report needs them too);
    gated_tasks: the tasks that declare a human gate of their own (``guards:`` in their file);
    gate: the report's gate section, when a gate was given (its decision, and its ci or trials_saved)."""
    trials = store.trials() if trials is None else trials
    outcomes = [t.to_outcome() for t in trials]
    summary = summarize(outcomes, tags)
    counts = scenario_counts(outcomes)
    standing = run_caveats(store.run_id, store.config, counts)
    metrics = {**summary.to_json(), **reliability_metrics(counts, tags or {}, standing.fit_refused)}
    metrics.update(conservative=conservative(outcomes), **usage_metrics(t.usage for t in trials))
    attach_group_intervals(metrics, counts, tags or {})
    metrics.update(safety_metrics(store.config, trials, gated_tasks))
    document = {
        "run_id": store.run_id,
        **standing.to_json(),
        "config": store.config,
        "metrics": metrics,
        "scenarios": scenario_stats(scenario_rows(trials)),
        "infra_error_example": infra_error_example(trials),
    }
    return Report.model_validate(document if gate is None else {**document, "gate": gate})


def infra_error_example(trials: list[TrialRecord]) -> str | None:
    """The last line of the first infra error (the exception and its message), so a report can say
    what failed without a traceback."""
    first = next((t.infra_error for t in trials if t.infra_error), None)
    return first.strip().splitlines()[-1] if first else None


def scenario_rows(trials: list[TrialRecord]) -> list[dict[str, Any]]:
    """Judged trials per scenario, in trial order; trials that could not be judged (infra errors, user
    simulator errors) are counted apart, never listed as rewards, so no report reads them as failures.
    ``state_diff``: the first failed trial whose backend differs from the expected state, and how, field by field."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"trials": [], "rewards": [], "signatures": [], "infra_errors": 0, "user_simulator_errors": 0, "state_diff": None}
    )
    for t in trials:
        row = rows[(t.task_id, t.persona)]
        if not is_judged(t.to_outcome()):
            row["infra_errors" if t.infra_error is not None else "user_simulator_errors"] += 1
            continue
        row["trials"].append(t.trial)
        row["rewards"].append(t.reward)
        row["signatures"].append(t.signature)
        differences = (t.grade or {}).get("details", {}).get("state_differences")
        if t.reward != 1 and differences and row["state_diff"] is None:
            row["state_diff"] = {"trial": t.trial, "rows": row_changes(differences)}
    return [{"task_id": task, "persona": persona, **row} for (task, persona), row in sorted(rows.items())]


def write_json(document: Report | Mapping[str, Any], path: Path) -> None:
    """The report, or another command's plain document (traffic, compare), as indented JSON."""
    data = document.to_json() if isinstance(document, Report) else document
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(data, indent=2, sort_keys=False) + "\n", window="report_write")
    except OSError as exc:
        raise UserError(f"cannot write the JSON report to {path} (--json): {exc.strerror}.") from None
