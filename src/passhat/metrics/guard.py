"""What the guards changed, measured the same way whether they were on or off.

The write counts come from the graders' reading of the backend and the event log (stored in each
trial's grade details), the refusals and handoffs from the guard decisions on the events, so a
guarded and an unguarded run on the same seeds compare figure by figure. A pure measurement over
stored trials, like the rest of ``metrics``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

REFUSALS = ("refused", "conflict")

# (task_id, reward, grade, events) of one stored trial
GuardTrial = tuple[str, "int | None", dict[str, Any], list[dict[str, Any]]]


@dataclasses.dataclass
class GuardTally:
    """The guard figures of judged trials, counted as they come: a report's single pass over a large run keeps
    these few counts, never a trial."""

    trials: int = 0
    duplicate_writes: int = 0
    unconfirmed_writes: int = 0
    policy_violations: int = 0
    refusals: int = 0
    tickets: Counter[str] = dataclasses.field(default_factory=Counter)  # per task: the human gate's tickets
    with_writes: int = 0  # trials of tasks with writes
    helped: int = 0  # of those, the ones whose required writes all happened

    def add(self, task_id: str, reward: int | None, grade: dict[str, Any], events: list[dict[str, Any]]) -> None:
        if reward is None:
            return
        self.trials += 1
        details = grade.get("details", {})
        duplicates = details.get("duplicate_writes", [])
        self.duplicate_writes += duplicates if isinstance(duplicates, int) else len(duplicates)  # int: an older store
        self.unconfirmed_writes += len(details.get("unconfirmed_writes", []))
        self.policy_violations += len(details.get("policy_violations", []))
        decisions = [e["guard"]["decision"] for e in events if e.get("kind") == "tool" and e.get("guard")]
        if decisions:  # most trials: none
            self.refusals += sum(d in REFUSALS for d in decisions)
            self.tickets[task_id] += decisions.count("ticket")
        if details.get("required_writes_done") is not None:
            self.with_writes += 1
            self.helped += bool(details["required_writes_done"])


def guard_metrics(
    enabled: Sequence[str], trials: Iterable[GuardTrial] | GuardTally, gated_tasks: Iterable[str] | None = None
) -> dict[str, Any]:
    """``{"enabled", "trials", "duplicate_writes", "unconfirmed_writes", "policy_violations", "refusals",
    "handoffs", "handoffs_task_declared", "helpfulness"}`` over judged trials given as (task_id, reward,
    grade, events), or counted already.

    The three write figures count writes (a trial can hold several), refusals and handoffs count guard
    decisions; ``trials`` is the number of judged trials they were counted over. helpfulness is the share
    of trials of tasks with writes whose required writes all happened (None when no such trial).

    ``handoffs_task_declared``: the handoffs made by a human gate a task declares itself (``guards:`` in its
    file), which applies whatever the run's guards. gated_tasks names those tasks; without it only a run
    whose own guards leave the human gate off can tell (every ticket then comes from a task's gate), and
    the figure is None otherwise.
    """
    tally = trials if isinstance(trials, GuardTally) else _tallied(trials)
    handoffs = sum(tally.tickets.values())
    if gated_tasks is not None:
        declared: int | None = sum(tally.tickets[task] for task in set(gated_tasks))
    else:
        declared = None if "human_gate" in enabled else handoffs
    return {
        "enabled": list(enabled),
        "trials": tally.trials,
        "duplicate_writes": tally.duplicate_writes,
        "unconfirmed_writes": tally.unconfirmed_writes,
        "policy_violations": tally.policy_violations,
        "refusals": tally.refusals,
        "handoffs": handoffs,
        "handoffs_task_declared": declared,
        "helpfulness": tally.helped / tally.with_writes if tally.with_writes else None,
    }


def _tallied(trials: Iterable[GuardTrial]) -> GuardTally:
    tally = GuardTally()
    for trial in trials:
        tally.add(*trial)
    return tally
