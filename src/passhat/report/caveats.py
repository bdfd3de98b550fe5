"""What a stored run can be read as, decided once for every command that reads one.

A run may be incomplete (trials missing or unjudged: a resume runs them), or stopped early against
its gate (the trials it skipped are mostly those after failures, so its figures are no estimate of
the agent), or too small for a model of per-scenario success. `report`, `gate`, `traffic`, `compare`
and `guard compare` all ask `run_caveats` and print its sentences; `report` and `traffic` fit a model
only when `fit_refused` is None, and `compare` gives verdicts only when `comparison_refused` is None.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from passhat.metrics.gate import Decision, decide, parse_gate
from passhat.metrics.summary import Scenario
from passhat.report.model import Report
from passhat.run_config import RunConfig
from passhat.vocabulary import HUMAN

MIN_TRIALS_TO_EXTRAPOLATE = 3
VERDICTS = {True: "MEETS THE BAR", False: "DOES NOT MEET THE BAR", None: "UNDECIDED"}


@dataclasses.dataclass(frozen=True)
class RunCaveats:
    """One stored run's standing, from its stored configuration and its judged trials per scenario."""

    run_id: str
    planned_trials: int | None  # tasks × personas × trials of the stored plan; None for a store without one
    stored_trials: int  # judged trials
    min_trials: int  # judged trials of the smallest scenario (0 when none was judged)
    early_stop: str | None  # the gate the run stopped early against ("k=8,min=0.9"); None for a full run
    stop_decision: Decision | None  # that gate's decision on the stored trials
    gate: str | None = None  # the gate the run was judged against: the early stop's, else the last --gate it ran with
    gate_decision: Decision | None = None  # that gate's decision on the stored trials
    imported: str | None = None  # an imported run's source ("the tau2 file /x/results.json"): nothing to resume

    @property
    def complete(self) -> bool:
        return self.planned_trials is None or self.stored_trials >= self.planned_trials

    @property
    def early_stopped(self) -> bool:
        return self.early_stop is not None

    @property
    def fit_refused(self) -> str | None:
        """Why no model of per-scenario success is fit to this run (pass^k beyond n, traffic), or None."""
        if self.early_stopped:
            return (
                "the run stopped early against its gate: the trials it skipped are mostly those after failures, "
                "so its counts are no sample of the agent to fit a model to"
            )
        if self.min_trials < MIN_TRIALS_TO_EXTRAPOLATE:
            return (
                f"the smallest scenario has {self.min_trials} judged trial{'s' if self.min_trials != 1 else ''}; "
                f"a model of per-scenario success needs at least {MIN_TRIALS_TO_EXTRAPOLATE} per scenario to say "
                "anything beyond n"
            )
        return None

    @property
    def comparison_refused(self) -> str | None:
        """Why this run's figures cannot be set against another run's as estimates of the agent, or None."""
        if not self.early_stopped:
            return None
        return (
            f"run {self.run_id!r} stopped early against its gate, so its figures measure which trials early "
            f"stopping skipped, not the agent; finish it with `passhat run --resume {self.run_id}` (same --out, "
            "without --early-stop) and compare again"
        )

    @property
    def warnings(self) -> list[str]:
        """The sentences to print before any figure (none for a complete, full run)."""
        judged = (
            f"{self.stored_trials:,} of {self.planned_trials:,} planned trials judged" if self.planned_trials is not None else ""
        )
        if self.early_stopped:
            return [
                f"early-stopped run (against the gate {self.early_stop}{', ' + judged if judged else ''}): the "
                "figures are not estimates of the agent, use this run for the gate decision only"
            ]
        if not self.complete and self.imported:
            return [
                f"incomplete: {judged} — the rest could not be judged in {self.imported} (infra errors), and an "
                "imported run has nothing to resume; every figure covers only the judged trials"
            ]
        if not self.complete:
            return [
                f"incomplete: {judged} — resume with `passhat run --resume {self.run_id}` (same --out) to run "
                "the missing and unjudged ones; until then every figure covers only the judged trials"
            ]
        return []

    def to_json(self) -> dict[str, Any]:
        return {
            "complete": self.complete,
            "planned_trials": self.planned_trials,
            "stored_trials": self.stored_trials,
            "early_stopped": self.early_stopped,
            "caveats": self.warnings,
            "early_stop_decision": self.stop_decision.to_json() if self.stop_decision else None,
        }


def run_caveats(run_id: str, config: RunConfig, counts: Mapping[Scenario, tuple[int, int]]) -> RunCaveats:
    """The one place that decides what a run can be read as; counts: (successes, judged trials) per scenario."""
    # a human run plans nothing: its trials are the scenarios people chose to play
    plan = None if config.user == HUMAN else config.planned_trials()
    early_stop = config.early_stop or None
    gate = early_stop or config.gate or None
    stop_decision = _gate_decision(early_stop, counts, plan)
    return RunCaveats(
        run_id=run_id,
        planned_trials=sum(plan.values()) if plan is not None else None,
        stored_trials=sum(n for _, n in counts.values()),
        min_trials=min((n for _, n in counts.values()), default=0),
        early_stop=early_stop,
        stop_decision=stop_decision,
        gate=gate,
        gate_decision=stop_decision if early_stop else _gate_decision(gate, counts, plan),
        imported=imported_source(config),
    )


def imported_source(config: RunConfig) -> str | None:
    """An imported run's source in words ("the tau2 file /x/results.json"), None for a run passhat ran: what the
    sentences that would suggest a resume say instead."""
    if config.imported is None:
        return None
    return f"the {config.imported.format} source {config.imported.source}"


def _gate_decision(
    gate: str | None, counts: Mapping[Scenario, tuple[int, int]], plan: dict[Scenario, int] | None
) -> Decision | None:
    """What a stored gate decides on the run's stored trials (for an early-stopped run, the run's one use)."""
    if gate is None or plan is None:
        return None
    try:
        return decide(parse_gate(gate), counts, plan)
    except ValueError:  # a stored gate this passhat cannot read or apply: the warning still says what the run is
        return None


def stop_verdict(report: Report) -> str | None:
    """The headline of an early-stopped report: the verdict of its gate, the one thing the run is for."""
    d = report.early_stop_decision
    if d is None or report.planned_trials is None:
        return None
    left_out = report.planned_trials - report.stored_trials  # skipped, and any not judged
    return f"gate {d.gate}, the one this run stopped early against: {VERDICTS[d.meets]} — {d.reason} ({left_out:,} planned trials left out)"


def trials_scope(report: Report) -> str:
    """How many trials each scenario's figures rest on: "8 trials", or for a run with trials left out
    "at least 1 of 8 planned trials" (trials_per_scenario is the smallest scenario's count)."""
    n = report.metrics.trials_per_scenario
    if report.complete:
        return f"{n} trial{'s' if n != 1 else ''}"
    return f"at least {n} of {report.run_config.trials} planned trials"
