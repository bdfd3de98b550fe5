"""One pass over a run's trials that keeps of each only what the report's figures read, so a report of a large run
holds its verdicts and a few small figures per trial, never its transcripts (which the store hands over one at a
time and this pass lets go of)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any

from passhat.metrics.faults import FaultTally
from passhat.metrics.guard import GuardTally
from passhat.metrics.harm import HarmTally
from passhat.metrics.steps import StepTally
from passhat.metrics.summary import ResultTally, Scenario
from passhat.metrics.usage import UsageTally
from passhat.report.state_diff import row_changes
from passhat.store.results import TrialRecord


@dataclasses.dataclass
class RunReading:
    """What the report reads of every trial, in trial order.

    ``verdicts``: each scenario's trials, their rewards and signatures. ``usages``, ``faults``, ``guard``, ``steps``,
    ``harm``: their figures' counts, added to trial by trial. ``state_diffs``: per scenario, the first failed trial
    whose backend differs from the expected state, and its differences field by field (the report's ``state_diff``;
    the parsed grade is not kept). ``first_infra_error``: the first infra error's message. ``pass_outcomes``: per
    scenario, its passes by the acceptable outcome taken. ``suspects``: the failed trials with signs that the
    simulated customer went wrong (grade/noise.py), with those signs."""

    verdicts: ResultTally = dataclasses.field(default_factory=ResultTally)
    usages: UsageTally = dataclasses.field(default_factory=UsageTally)
    faults: FaultTally = dataclasses.field(default_factory=FaultTally)
    guard: GuardTally = dataclasses.field(default_factory=GuardTally)
    state_diffs: dict[Scenario, dict[str, Any]] = dataclasses.field(default_factory=dict)
    first_infra_error: str | None = None
    steps: StepTally = dataclasses.field(default_factory=StepTally)
    pass_outcomes: dict[Scenario, Counter[str]] = dataclasses.field(default_factory=dict)
    harm: HarmTally = dataclasses.field(default_factory=HarmTally)  # the trials of tasks that declare risks
    suspects: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # failed trials the customer may have failed

    def add(self, t: TrialRecord) -> None:
        judged = self.verdicts.add(t)
        if t.usage:
            self.usages.add(t.usage)
        if t.events:  # a report's pass hands over only the events a fault or a guard marked: most trials have none
            self.faults.add(t.reward, t.events)
        self.guard.add(t.task_id, t.reward, t.grade, t.events)
        self.harm.add(t.task_id, t.persona, t.reward if judged else None, t.grade)
        if t.infra_error and self.first_infra_error is None:
            self.first_infra_error = t.infra_error
        differences = (t.grade or {}).get("details", {}).get("state_differences")
        if differences and t.reward != 1 and judged and (t.task_id, t.persona) not in self.state_diffs:
            self.state_diffs[t.task_id, t.persona] = {"trial": t.trial, "rows": row_changes(differences)}
        if t.steps and judged:
            self.steps.add(t.task_id, t.reward == 1, t.steps)
        if judged and t.reward == 0 and (suspicions := (t.grade or {}).get("details", {}).get("suspected_simulator_errors")):
            self.suspects.append({"task_id": t.task_id, "persona": t.persona, "trial": t.trial, "signs": suspicions})
        if t.reward == 1 and (label := (t.grade or {}).get("outcome")):
            self.pass_outcomes.setdefault((t.task_id, t.persona), Counter())[label] += 1


def read_run(trials: Iterable[TrialRecord]) -> RunReading:
    reading = RunReading()
    for t in trials:
        reading.add(t)
    return reading


def simulator_noise(suspects: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's count and list of failed trials with signs that the customer went wrong, by kind of sign
    (a trial counts once per kind it shows)."""
    by_kind = Counter(kind for s in suspects for kind in {sign["kind"] for sign in s["signs"]})
    return {"trials": len(suspects), "by_kind": dict(sorted(by_kind.items())), "suspects": suspects}
