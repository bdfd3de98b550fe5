"""Per fault class: how often it was injected, in how many trials, and how many of those still passed.

A pure measurement over stored trials (their reward and events), like the rest of ``metrics``: an
injected fault is recorded on its tool-call event as ``fault: {"class", "actual"}``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any


@dataclasses.dataclass
class FaultTally:
    """Per fault class: injections, the judged trials it hit and those of them that passed, counted as the trials
    come (a report of a large run keeps these counts, not the trials)."""

    injected: Counter[str] = dataclasses.field(default_factory=Counter)
    affected: Counter[str] = dataclasses.field(default_factory=Counter)
    passed: Counter[str] = dataclasses.field(default_factory=Counter)

    def add(self, reward: int | None, events: list[dict[str, Any]]) -> None:
        if reward is None:
            return
        hits = Counter(e["fault"]["class"] for e in events if e.get("fault"))
        self.injected.update(hits)
        self.affected.update(hits.keys())
        self.passed.update(hits.keys() if reward == 1 else ())


def fault_metrics(trials: Iterable[tuple[int | None, list[dict[str, Any]]]] | FaultTally) -> dict[str, dict[str, int]]:
    """``{class: {"injected", "trials_affected", "trials_passed"}}`` over judged trials given as (reward, events),
    or counted already, the most injected class first.

    ``trials_passed / trials_affected`` is the recovery rate: the share of trials a fault hit that the
    agent still got right.
    """
    if isinstance(trials, FaultTally):
        tally = trials
    else:
        tally = FaultTally()
        for reward, events in trials:
            tally.add(reward, events)
    injected = tally.injected
    return {
        name: {"injected": injected[name], "trials_affected": tally.affected[name], "trials_passed": tally.passed[name]}
        for name in sorted(injected, key=lambda name: (-injected[name], name))
    }
