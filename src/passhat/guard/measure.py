"""What the guards changed, measured the same way whether they were on or off.

The write counts come from the graders' reading of the backend and the event log (stored in each
trial's grade details), the refusals and handoffs from the guard decisions on the events, so a
guarded and an unguarded run on the same seeds compare figure by figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

REFUSALS = ("refused", "conflict")


def guard_metrics(enabled: Sequence[str], trials: Iterable[tuple[int | None, dict[str, Any], list[dict[str, Any]]]]) -> dict[str, Any]:
    """``{"enabled", "duplicate_writes", "unconfirmed_writes", "policy_violations", "refusals", "handoffs",
    "helpfulness"}`` over judged trials given as (reward, grade, events); helpfulness is the share of
    trials of tasks with writes whose required writes all happened (None when no such trial)."""
    out = {"enabled": list(enabled), "duplicate_writes": 0, "unconfirmed_writes": 0, "policy_violations": 0,
           "refusals": 0, "handoffs": 0}
    helped = with_writes = 0
    for reward, grade, events in trials:
        if reward is None:
            continue
        details = grade.get("details", {})
        out["duplicate_writes"] += details.get("duplicate_writes", 0)
        out["unconfirmed_writes"] += len(details.get("unconfirmed_writes", []))
        out["policy_violations"] += len(details.get("policy_violations", []))
        decisions = [e["guard"]["decision"] for e in events if e.get("kind") == "tool" and e.get("guard")]
        out["refusals"] += sum(d in REFUSALS for d in decisions)
        out["handoffs"] += decisions.count("ticket")
        if details.get("required_writes_done") is not None:
            with_writes += 1
            helped += bool(details["required_writes_done"])
    out["helpfulness"] = helped / with_writes if with_writes else None
    return out
