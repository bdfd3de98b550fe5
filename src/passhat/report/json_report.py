"""The JSON report: the run's configuration, its metrics, and every scenario's trials."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from passhat.errors import UserError
from passhat.metrics import summarize
from passhat.store import ResultStore, TrialRecord


def build_report(store: ResultStore, tags: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    trials = store.trials()
    summary = summarize((t.to_outcome() for t in trials), tags)
    return {
        "run_id": store.run_id,
        "config": store.config,
        "metrics": summary.to_json(),
        "scenarios": scenario_rows(trials),
    }


def scenario_rows(trials: list[TrialRecord]) -> list[dict[str, Any]]:
    """Judged trials per scenario, in trial order; infra errors are counted, not listed as rewards."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"trials": [], "rewards": [], "signatures": [], "infra_errors": 0}
    )
    for t in trials:
        row = rows[(t.task_id, t.persona)]
        if t.infra_error is not None:
            row["infra_errors"] += 1
            continue
        row["trials"].append(t.trial)
        row["rewards"].append(t.reward)
        row["signatures"].append(t.signature)
    return [{"task_id": task, "persona": persona, **row} for (task, persona), row in sorted(rows.items())]


def write_json(report: dict[str, Any], path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    except OSError as exc:
        raise UserError(f"cannot write the JSON report to {path} (--json): {exc.strerror}.") from None
