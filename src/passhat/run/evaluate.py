"""A run judged against its acceptance gate: early stopping, the gate's decision, and the exit rule.

The command line parses flags and prints; what a run with ``--gate`` / ``--early-stop`` means lives
here, so it can be used (and tested) without the CLI.
"""

from __future__ import annotations

import asyncio
import dataclasses

from passhat.metrics.gate import Decision, Gate, decide
from passhat.metrics.summary import TrialResult, scenario_counts
from passhat.run.early_stop import EarlyStop
from passhat.run.executors import Executor
from passhat.run.runner import OnSkip, OnTrial, execute
from passhat.run_config import RunConfig
from passhat.store import ResultStore


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """What a finished (not interrupted) run amounts to."""

    config: RunConfig  # as stored after the run (early_stop set or cleared)
    outcomes: list[TrialResult]  # every stored trial's verdict (the report reads the rest from the store)
    decision: Decision | None  # the gate's, when there is a gate
    skipped: int  # trials early stop left out in this invocation
    planned: int  # tasks × personas × trials

    @property
    def judged_scenarios(self) -> int:
        return len(scenario_counts(self.outcomes))

    @property
    def exit_code(self) -> int:
        """0, or 1 when no trial could be judged or the gate is not met."""
        return 1 if self.judged_scenarios == 0 or (self.decision is not None and not self.decision.meets) else 0

    def gate_json(self) -> dict[str, object] | None:
        """The report's "gate" section: the decision and the trials early stop saved."""
        return {**self.decision.to_json(), "trials_saved": self.skipped} if self.decision else None


def gate_spec(gate: Gate) -> str:
    """The gate as --gate takes it ("k=8,min=0.9[,persona=P]")."""
    return f"k={gate.k},min={gate.minimum:g}" + (f",persona={gate.persona}" if gate.persona else "")


def planned_total(config: RunConfig) -> int:
    """Every trial the run plans: tasks × personas × trials."""
    return sum(config.planned_trials().values())


def evaluate(
    config: RunConfig,
    store: ResultStore,
    concurrency: int,
    gate: Gate | None = None,
    early_stop: bool = False,
    on_trial: OnTrial | None = None,
    on_skip: OnSkip | None = None,
    workers: int = 1,
    executor: Executor = "local",
    ray_address: str | None = None,
) -> Evaluation:
    """Run the store's missing trials (with early stopping against gate when asked) and judge the run.

    The stored configuration says whether the run left planned trials out: ``early_stop`` holds the
    gate's spec from the moment early stopping starts (so an interrupted run says so too) and is
    cleared once a run ends with every planned trial done. A KeyboardInterrupt passes through; every
    trial stored before it is committed. ``workers`` > 1: the trials run in that many worker processes;
    ``executor`` "ray": in that many Ray actors (on the cluster at ``ray_address``).
    """
    planned = config.planned_trials()
    stopper = None
    if gate is not None:
        config = _record(store, config, gate=gate_spec(gate))
    if gate is not None and early_stop:
        stopper = EarlyStop(gate, planned, (t.to_result() for t in store.trial_rows()))
        config = _record(store, config, early_stop=gate_spec(gate))
    asyncio.run(execute(config, store, concurrency, on_trial, stopper, on_skip, workers, executor, ray_address))
    skipped = stopper.skipped if stopper else 0
    config = _record(store, config, early_stop=gate_spec(gate) if gate is not None and skipped else None)
    outcomes = [t.to_result() for t in store.trial_rows()]
    decision = decide(gate, scenario_counts(outcomes), planned) if gate else None
    return Evaluation(config, outcomes, decision, skipped, sum(planned.values()))


def _record(store: ResultStore, config: RunConfig, **update: str | None) -> RunConfig:
    """Store what the run is being judged against, writing the configuration only when it changes."""
    if all(getattr(config, k) == v for k, v in update.items()):
        return config
    config = config.model_copy(update=update)
    store.update_config(config.model_dump())
    return config
