"""The report of a stored run, built once: the run's standing, configuration, metrics and every scenario's
trials, as the typed `Report` that every writer reads; and the JSON writer."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.dataclasses import is_pydantic_dataclass

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
from passhat.report.model import Metrics, Report, ScenarioReport
from passhat.report.reading import RunReading, read_run, simulator_noise
from passhat.report.reliability import attach_group_intervals, reliability_metrics, scenario_stats
from passhat.run_config import RunConfig, stored_config
from passhat.store import ResultStore, TrialRecord

DUMP: dict[str, Any] = {"indent": 2, "by_alias": True, "exclude_unset": True}  # how the report's JSON is written
INDENT = b"  "
SCENARIO = TypeAdapter(ScenarioReport)  # a scenario's row as the report holds it (a pydantic dataclass: see model.py)


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
    config = stored_config(store)
    consistency = ConsistencyReading(config)  # fed as the one pass goes by
    document = _document(store, config, read_run(consistency.watch(kept)), tags, gated_tasks, consistency)  # uses the reading up
    return Report.model_validate(document if gate is None else {**document, "gate": gate})


def _document(
    store: ResultStore,
    config: RunConfig,
    reading: RunReading,
    tags: Mapping[str, Sequence[str]] | None,
    gated_tasks: Iterable[str] | None,
    consistency: ConsistencyReading,
) -> dict[str, Any]:
    """The report's parts, each typed as soon as it is made (the metrics, then a scenario at a time), so that no
    part is held twice, as figures and as its model, while the next is made."""
    counts = reading.verdicts.counts()
    standing = run_caveats(store.run_id, config, counts)
    return {
        "run_id": store.run_id,
        **standing.to_json(),
        "config": store.config,  # as stored: a report (and a record signing it) shows what the store holds
        "metrics": _metrics(config, reading, counts, standing.fit_refused, tags, gated_tasks, consistency),
        "scenarios": [SCENARIO.validate_python(scenario_stats(row)) for row in scenario_rows(reading)],
        "infra_error_example": infra_error_example(reading.first_infra_error),
    }


def _metrics(
    config: RunConfig,
    reading: RunReading,
    counts: Mapping[Scenario, tuple[int, int]],
    fit_refused: str | None,
    tags: Mapping[str, Sequence[str]] | None,
    gated_tasks: Iterable[str] | None,
    consistency: ConsistencyReading,
) -> Metrics:
    metrics = {**summarize(reading.verdicts, tags).to_json(), **reliability_metrics(counts, tags or {}, fit_refused)}
    metrics.update(conservative=conservative(reading.verdicts), **usage_metrics(reading.usages))
    metrics["suspected_simulator_errors"] = simulator_noise(reading.suspects)
    attach_group_intervals(metrics, counts, tags or {})
    metrics.update(safety_metrics(config, reading, gated_tasks))
    if steps := step_reliability(reading.steps):
        metrics["steps"] = steps
    if risky := risky_action_metrics(reading.harm):
        metrics["risky_actions"] = risky
    metrics.update(consistency.figures())
    return Metrics.model_validate(metrics)


def infra_error_example(first: str | None) -> str | None:
    """The last line of the run's first infra error (the exception and its message), so a report can say
    what failed without a traceback."""
    return first.strip().splitlines()[-1] if first else None


def scenario_rows(reading: RunReading) -> Iterator[dict[str, Any]]:
    """Judged trials per scenario, in trial order, a scenario at a time; trials that could not be judged (infra
    errors, user simulator errors) are counted apart, never listed as rewards, so no report reads them as failures.
    ``state_diff``: the first failed trial whose backend differs from the expected state, and how, field by field.
    ``outcomes``: the passes by the acceptable outcome they took, for a task whose passes took more than the primary.
    Each scenario's verdicts leave the reading as its row is made: the rows' model takes their place in memory."""
    several = {task for (task, _), labels in reading.pass_outcomes.items() if set(labels) - {PRIMARY}}
    for scenario in sorted(reading.verdicts.scenarios):
        task, persona = scenario
        verdicts = reading.verdicts.scenarios.pop(scenario)
        row = {"task_id": task, "persona": persona, **vars(verdicts), "state_diff": reading.state_diffs.pop(scenario, None)}
        if task in several and scenario in reading.pass_outcomes:
            row["outcomes"] = dict(sorted(reading.pass_outcomes[scenario].items()))
        yield row


def report_json(report: Report) -> Iterator[bytes]:
    """The report as indented JSON, in pieces of a few hundred kilobytes at most: a model field by field, and a list
    of models (the scenarios, the steps' tasks) a model at a time, each by its own model's serializer, indented to
    its depth. A run of 100,000 trials has 12,500 scenarios and megabytes of per-scenario figures: the document as
    one piece cost several copies of itself in memory, and encoding it in Python cost seconds."""
    yield from _model_json(report, 0)
    yield b"\n"


def _model_json(model: BaseModel, depth: int) -> Iterator[bytes]:
    """A model's fields that were set (the JSON's keys: see model.py), as its serializer writes them at ``depth``."""
    names = [name for name in type(model).model_fields if name in model.model_fields_set]
    if not names:
        yield b"{}"
        return
    inner = b"\n" + INDENT * (depth + 1)
    for i, name in enumerate(names):
        value = getattr(model, name)
        start = (b"," if i else b"{") + inner
        if isinstance(value, BaseModel):
            yield start + _key(model, name) + b": "
            yield from _model_json(value, depth + 1)
        elif isinstance(value, list) and value and _typed(value[0]):
            yield start + _key(model, name) + b": ["
            for j, item in enumerate(value):
                text = item.__pydantic_serializer__.to_json(item, **DUMP)
                yield (b"," if j else b"") + inner + INDENT + _indented(text, depth + 2)
            yield inner + b"]"
        else:  # the field alone, by the model's serializer: {"key": value} at depth 0, unwrapped
            yield start + _indented(model.__pydantic_serializer__.to_json(model, include={name}, **DUMP)[4:-2], depth)
    yield b"\n" + INDENT * depth + b"}"


def _typed(value: object) -> bool:
    """A model, or one of the records a report holds by the thousand (pydantic dataclasses): it serializes itself."""
    return isinstance(value, BaseModel) or is_pydantic_dataclass(type(value))


def _key(model: BaseModel, name: str) -> bytes:
    """A field's key in the JSON (its alias, if it has one)."""
    return json.dumps(type(model).model_fields[name].serialization_alias or name).encode()


def _indented(text: bytes, depth: int) -> bytes:
    """JSON written at depth 0 moved to ``depth`` (a JSON string holds no raw newline, so every newline is layout)."""
    return text.replace(b"\n", b"\n" + INDENT * depth) if depth else text


def write_json(document: Report | Mapping[str, Any], path: Path) -> None:
    """The report, or another command's plain document (traffic, compare), as indented JSON."""
    data = report_json(document) if isinstance(document, Report) else (json.dumps(document, indent=2, sort_keys=False), "\n")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data, window="report_write")
    except OSError as exc:
        raise UserError(f"cannot write the JSON report to {path} (--json): {exc.strerror}.") from None
