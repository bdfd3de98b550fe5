"""Which trials' transcripts the HTML report embeds. Chosen from each trial's key and reward alone, so a report
of a large run can pick them from its own scenarios and read only the chosen transcripts from the store; and light
to import, since the command line shows the cap as a default."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from passhat.report.model import ScenarioReport

MAX_TRANSCRIPTS = 2000


class Verdict(Protocol):
    """What the choice reads of a trial (a TrialRecord or a light row of the store)."""

    @property
    def task_id(self) -> str: ...
    @property
    def persona(self) -> str: ...
    @property
    def reward(self) -> int | None: ...
    @property
    def key(self) -> tuple[str, str, int]: ...


def embedded_trials(trials: Sequence[Verdict], cap: int) -> set[int]:
    """Indexes of the trials whose transcripts go in the file: failures first, one pass per scenario, the rest (each
    looked for only while the cap is not reached: a large run's failures alone usually fill it)."""
    if len(trials) <= cap:
        return set(range(len(trials)))
    failed = (i for i, t in enumerate(trials) if t.reward != 1)
    chosen: set[int] = set()
    for i in itertools.chain(failed, _first_passes(trials), range(len(trials))):  # the first cap, in that order
        chosen.add(i)
        if len(chosen) == cap:
            break
    return chosen


def _first_passes(trials: Sequence[Verdict]) -> Iterator[int]:
    """The index of each scenario's first passing trial, in trial order."""
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(trials):
        if t.reward == 1 and (t.task_id, t.persona) not in seen:
            seen.add((t.task_id, t.persona))
            yield i


@dataclasses.dataclass(frozen=True, slots=True)
class Mark:
    """A trial as the choice reads it."""

    task_id: str
    persona: str
    trial: int
    reward: int | None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.persona, self.trial)


class ReportedTrials(Sequence[Mark]):
    """Every trial of a reported run in the store's order (by scenario, then trial), made on demand from the report's
    scenarios (their judged trials) and the trials that could not be judged, which a report only counts: the HTML
    report of a large run lists every trial without reading them all again or holding an object for each."""

    def __init__(self, scenarios: Sequence[ScenarioReport], unjudged: Iterable[Verdict]):
        self._scenarios = scenarios
        self._unjudged: dict[tuple[str, str], list[Mark]] = {}
        for t in unjudged:
            self._unjudged.setdefault((t.task_id, t.persona), []).append(Mark(*t.key, t.reward))
        sizes = (len(s.trials) + len(self._unjudged.get((s.task_id, s.persona), ())) for s in scenarios)
        self._starts = list(itertools.accumulate(sizes, initial=0))  # each scenario's first index

    def __len__(self) -> int:
        return self._starts[-1]

    def __getitem__(self, i: int) -> Mark:  # type: ignore[override]  # an index, never a slice
        if not 0 <= i < len(self):
            raise IndexError(i)
        s = bisect.bisect_right(self._starts, i) - 1
        return self._marks(s)[i - self._starts[s]]

    def __iter__(self) -> Iterator[Mark]:
        for s in range(len(self._scenarios)):
            yield from self._marks(s)

    def _marks(self, s: int) -> list[Mark]:
        """A scenario's trials, judged or not, by trial number."""
        row = self._scenarios[s]
        judged = [Mark(row.task_id, row.persona, trial, reward) for trial, reward in zip(row.trials, row.rewards, strict=True)]
        return sorted(judged + self._unjudged.get((row.task_id, row.persona), []), key=lambda mark: mark.trial)
