"""Early stopping against the acceptance gate: skip the trials that can no longer change its decision.

Every trial is seeded by what it is, so a trial that runs here gives the same outcome as in a full
run; the only question is which trials to leave out. A scenario is left alone once its term of
pass^k is fixed (too many failures for k successes), and every scenario once the gate's decision is
fixed whatever the remaining trials do (see passhat.metrics.gate). The decision therefore equals
the full run's. Trials go round-robin (every scenario's first trial, then every second...), so
evidence from all scenarios arrives early. A trial that could not be judged is not counted: the
decision waits for it (a resumed run retries it). Only the scenarios the gate judges are ever
skipped: with a persona gate, the other personas' scenarios run in full.
"""

from __future__ import annotations

from collections.abc import Iterable

from passhat.metrics.gate import Decision, Gate, decide, scenario_bounds
from passhat.metrics.summary import Scenario, TrialResult, is_judged, scenario_counts
from passhat.run.trial import TrialSpec

NEAR = 1e-9  # running sums within this of the bar are confirmed by an exact recomputation


class EarlyStop:
    def __init__(self, gate: Gate, planned: dict[Scenario, int], done: Iterable[TrialResult] = ()):
        self.gate, self.planned = gate, planned
        self.counts = scenario_counts(done)
        self.skipped = 0
        # the gated scenarios' bounds, kept with their running sums so a trial updates them in O(1)
        self._bounds_of = bounds = scenario_bounds(gate, self.counts, planned)
        self._lo, self._hi = sum(b[0] for b in bounds.values()), sum(b[1] for b in bounds.values())
        self.decided = self._check()

    def _check(self) -> bool:
        """Whether the decision is fixed; near the bar, only the exact computation may say so."""
        count = len(self._bounds_of)
        lo, hi, bar = self._lo / count, self._hi / count, self.gate.minimum
        if lo < bar - NEAR and hi >= bar + NEAR:
            return False
        return self.decision().meets is not None

    def order(self, specs: list[TrialSpec]) -> list[TrialSpec]:
        """Round-robin over scenarios: trial 0 of each, then trial 1 of each, ..."""
        return sorted(specs, key=lambda spec: spec.trial)

    def settled(self, scenario: Scenario) -> bool:
        """True when this scenario's remaining trials may be skipped: the gate judges it and none of them
        can change the decision. A scenario outside the gate (another persona's) is never settled: it is
        in the report, so all its trials run."""
        if scenario not in self._bounds_of:
            return False
        if self.decided:
            return True
        lo, hi = self._bounds_of[scenario]
        return lo == hi

    def skip(self) -> None:
        self.skipped += 1

    def record(self, outcome: TrialResult) -> None:
        """Take in a finished trial's outcome and update the bounds of its scenario."""
        scenario = (outcome.task_id, outcome.persona)
        if scenario not in self._bounds_of or not is_judged(outcome):
            return  # outside the gate, or not judged
        c, m = self.counts.get(scenario, (0, 0))
        self.counts[scenario] = (c + (outcome.reward == 1), m + 1)
        old = self._bounds_of[scenario]
        new = scenario_bounds(self.gate, self.counts, {scenario: self.planned[scenario]})[scenario]
        self._bounds_of[scenario] = new
        self._lo += new[0] - old[0]
        self._hi += new[1] - old[1]
        self.decided = self._check()

    def decision(self) -> Decision:
        """The exact decision from the trials so far and the trials planned."""
        return decide(self.gate, self.counts, self.planned)
