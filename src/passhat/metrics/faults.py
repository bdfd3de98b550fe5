"""Per fault class: how often it was injected, in how many trials, and how many of those still passed.

A pure measurement over stored trials (their reward and events), like the rest of ``metrics``: an
injected fault is recorded on its tool-call event as ``fault: {"class", "actual"}``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any


def fault_trial(reward: int | None, events: list[dict[str, Any]]) -> tuple[int | None, list[dict[str, Any]]]:
    """The part of a trial fault_metrics reads, (reward, its events that carry a fault): small enough to keep
    for every trial of a large run while its transcripts are read one at a time."""
    return reward, [e for e in events if e.get("fault")]


def fault_metrics(trials: Iterable[tuple[int | None, list[dict[str, Any]]]]) -> dict[str, dict[str, int]]:
    """``{class: {"injected", "trials_affected", "trials_passed"}}`` over judged trials given as (reward, events),
    the most injected class first.

    ``trials_passed / trials_affected`` is the recovery rate: the share of trials a fault hit that the
    agent still got right.
    """
    injected: Counter[str] = Counter()
    affected: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for reward, events in trials:
        if reward is None:
            continue
        hits = Counter(e["fault"]["class"] for e in events if e.get("fault"))
        injected.update(hits)
        affected.update(hits.keys())
        passed.update(hits.keys() if reward == 1 else ())
    return {
        name: {"injected": injected[name], "trials_affected": affected[name], "trials_passed": passed[name]}
        for name in sorted(injected, key=lambda name: (-injected[name], name))
    }
