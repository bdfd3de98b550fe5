"""Which trials' transcripts the HTML report embeds. Chosen from each trial's key and reward alone, so a report
of a large run can pick them from light rows and read only the chosen transcripts from the store; and light to
import, since the command line shows the cap as a default."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Protocol

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
    """Indexes of the trials whose transcripts go in the file: failures first, one pass per scenario, the rest."""
    if len(trials) <= cap:
        return set(range(len(trials)))
    failed = [i for i, t in enumerate(trials) if t.reward != 1]
    first_pass: dict[tuple[str, str], int] = {}
    for i, t in enumerate(trials):
        if t.reward == 1:
            first_pass.setdefault((t.task_id, t.persona), i)
    chosen: set[int] = set()
    for i in itertools.chain(failed, first_pass.values(), range(len(trials))):  # the first cap, in that order
        chosen.add(i)
        if len(chosen) == cap:
            break
    return chosen
