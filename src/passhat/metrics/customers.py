"""The gap between simulated and human customers on the same scenarios, beyond pass^1: which failure signatures
people trigger that the simulator does not (and the reverse), how long the conversations run, how many were
abandoned, and how many human trials stand behind the figures (pure functions over stored trials' small columns)."""

from __future__ import annotations

import collections
import dataclasses
import statistics
from collections.abc import Iterable
from typing import Any

Scenario = tuple[str, str]  # (task id, persona)


@dataclasses.dataclass(frozen=True)
class StoredTrial:
    """What the gap reads of one stored trial: its scenario, whether it was judged, its signature and its turns."""

    scenario: Scenario
    judged: bool
    signature: str | None  # None: passed (or not judged)
    turns: int | None  # the agent's messages (a conversation's turns); None when not recorded


@dataclasses.dataclass(frozen=True)
class Side:
    """One run's trials of the compared scenarios: judged, not judged (a human run's: abandoned), their failure
    signatures and the median number of turns of the judged ones."""

    judged: int
    unjudged: int
    signatures: dict[str, int]
    median_turns: float | None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class CustomerGap:
    """The simulated and the human side over the same scenarios, and the signatures only one side shows."""

    scenarios: int
    simulated: Side
    human: Side

    @property
    def only_human(self) -> list[str]:
        """Failure signatures people triggered that the simulated customers never did."""
        return sorted(set(self.human.signatures) - set(self.simulated.signatures))

    @property
    def only_simulated(self) -> list[str]:
        return sorted(set(self.simulated.signatures) - set(self.human.signatures))

    def to_json(self) -> dict[str, Any]:
        return {
            "scenarios": self.scenarios, "simulated": self.simulated.to_json(), "human": self.human.to_json(),
            "only_human": self.only_human, "only_simulated": self.only_simulated,
        }  # fmt: skip


def customer_gap(simulated: Iterable[StoredTrial], human: Iterable[StoredTrial]) -> CustomerGap:
    """The gap over the scenarios both runs have a trial of (a human run holds only the scenarios people played)."""
    sim, hum = list(simulated), list(human)
    shared = {t.scenario for t in sim} & {t.scenario for t in hum}
    return CustomerGap(len(shared), _side(t for t in sim if t.scenario in shared), _side(t for t in hum if t.scenario in shared))


def _side(trials: Iterable[StoredTrial]) -> Side:
    chosen = list(trials)
    judged = [t for t in chosen if t.judged]
    turns = [t.turns for t in judged if t.turns is not None]
    signatures = collections.Counter(t.signature for t in judged if t.signature)
    return Side(
        len(judged), len(chosen) - len(judged), dict(sorted(signatures.items())), statistics.median(turns) if turns else None
    )
