"""What the guards changed, measured the same way whether they were on or off.

The write counts come from the graders' reading of the backend and the event log (stored in each
trial's grade details), the refusals and handoffs from the guard decisions on the events, so a
guarded and an unguarded run on the same seeds compare figure by figure. A pure measurement over
stored trials, like the rest of ``metrics``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

REFUSALS = ("refused", "conflict")

# (task_id, reward, grade, events) of one stored trial
GuardTrial = tuple[str, "int | None", dict[str, Any], list[dict[str, Any]]]


DETAILS = ("duplicate_writes", "unconfirmed_writes", "policy_violations", "required_writes_done")  # of a grade


def guard_trial(task_id: str, reward: int | None, grade: dict[str, Any], events: list[dict[str, Any]]) -> GuardTrial:
    """The part of a trial guard_metrics reads: its grade's write figures and its guarded tool calls, small enough
    to keep for every trial of a large run while its transcripts are read one at a time."""
    details = grade.get("details", {})
    kept = {"details": {name: details[name] for name in DETAILS if name in details}}
    return task_id, reward, kept, [e for e in events if e.get("kind") == "tool" and e.get("guard")]


def guard_metrics(
    enabled: Sequence[str], trials: Iterable[GuardTrial], gated_tasks: Iterable[str] | None = None
) -> dict[str, Any]:
    """``{"enabled", "trials", "duplicate_writes", "unconfirmed_writes", "policy_violations", "refusals",
    "handoffs", "handoffs_task_declared", "helpfulness"}`` over judged trials given as (task_id, reward,
    grade, events).

    The three write figures count writes (a trial can hold several), refusals and handoffs count guard
    decisions; ``trials`` is the number of judged trials they were counted over. helpfulness is the share
    of trials of tasks with writes whose required writes all happened (None when no such trial).

    ``handoffs_task_declared``: the handoffs made by a human gate a task declares itself (``guards:`` in its
    file), which applies whatever the run's guards. gated_tasks names those tasks; without it only a run
    whose own guards leave the human gate off can tell (every ticket then comes from a task's gate), and
    the figure is None otherwise.
    """
    gated = set(gated_tasks) if gated_tasks is not None else None
    run_gate = "human_gate" in enabled
    out: dict[str, Any] = {
        "enabled": list(enabled),
        "trials": 0,
        "duplicate_writes": 0,
        "unconfirmed_writes": 0,
        "policy_violations": 0,
        "refusals": 0,
        "handoffs": 0,
        "handoffs_task_declared": 0,
    }
    helped = with_writes = 0
    for task_id, reward, grade, events in trials:
        if reward is None:
            continue
        out["trials"] += 1
        details = grade.get("details", {})
        duplicates = details.get("duplicate_writes", [])
        out["duplicate_writes"] += duplicates if isinstance(duplicates, int) else len(duplicates)  # int: an older store
        out["unconfirmed_writes"] += len(details.get("unconfirmed_writes", []))
        out["policy_violations"] += len(details.get("policy_violations", []))
        decisions = [e["guard"]["decision"] for e in events if e.get("kind") == "tool" and e.get("guard")]
        out["refusals"] += sum(d in REFUSALS for d in decisions)
        tickets = decisions.count("ticket")
        out["handoffs"] += tickets
        if (task_id in gated) if gated is not None else not run_gate:
            out["handoffs_task_declared"] += tickets
        if details.get("required_writes_done") is not None:
            with_writes += 1
            helped += bool(details["required_writes_done"])
    if gated is None and run_gate:
        out["handoffs_task_declared"] = None
    out["helpfulness"] = helped / with_writes if with_writes else None
    return out
