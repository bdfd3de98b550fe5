"""The partition: which scenarios to ship, which to fix, which to route to a human.

A scenario is *reliable* when every judged trial passed, *unreliable* when some did, and *out of
reach* when none did. The three call for different actions, which is why they are counted apart
rather than folded into one average.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

from passhat.metrics.summary import Scenario, slices

RELIABLE, UNRELIABLE, OUT_OF_REACH = "reliable", "unreliable", "out_of_reach"


def classify(successes: int, trials: int) -> str:
    """reliable / unreliable / out_of_reach for one scenario's c of n."""
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"a scenario needs 0 <= successes <= trials and trials >= 1, got {successes}/{trials}")
    if successes == trials:
        return RELIABLE
    return UNRELIABLE if successes else OUT_OF_REACH


@dataclasses.dataclass(frozen=True)
class Partition:
    reliable: int
    unreliable: int
    out_of_reach: int

    def to_json(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def partition(counts: Iterable[tuple[int, int]]) -> Partition:
    """How many scenarios fall in each class."""
    classes = [classify(c, n) for c, n in counts]
    return Partition(classes.count(RELIABLE), classes.count(UNRELIABLE), classes.count(OUT_OF_REACH))


def partition_by(counts: Mapping[Scenario, tuple[int, int]], labels: Callable[[Scenario], Iterable[str]]) -> dict[str, Partition]:
    """The partition of the scenarios under each label (a persona, a task tag), sorted by label."""
    return {label: partition(group) for label, group in slices(counts, labels).items()}
