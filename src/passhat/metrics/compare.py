"""Comparing two runs scenario by scenario: what changed, by how much, and whether it is noise.

The runs are paired by scenario (task, persona), so a change is measured on the same requests and
the scenarios' own difficulty cancels out. Intervals come from a paired bootstrap: one resample of
scenarios draws both runs' results for each drawn scenario. A change whose 95% interval contains 0
is "within noise", and is reported as such rather than as better or worse.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from passhat.metrics.estimators import scenario_pass_at, scenario_pass_hat
from passhat.metrics.intervals import REPS, SEED, bootstrap_means, percentile
from passhat.metrics.summary import headline_ks

BETTER, WORSE, WITHIN_NOISE, MIXED = "better", "worse", "within noise", "mixed"

Counts = Mapping[Hashable, tuple[int, int]]


class ScenarioMismatch(ValueError):
    """The runs cover different scenarios; comparing them would compare different work."""

    def __init__(self, only_a: list[Hashable], only_b: list[Hashable]):
        self.only_a, self.only_b = only_a, only_b
        super().__init__(f"{len(only_a)} scenarios only in the first run, {len(only_b)} only in the second")


@dataclasses.dataclass(frozen=True)
class Delta:
    """One figure in both runs, the change b - a, and its paired 95% interval."""

    metric: str
    a: float
    b: float
    lo: float
    hi: float

    @property
    def change(self) -> float:
        return self.b - self.a

    @property
    def verdict(self) -> str:
        if self.lo > 0:
            return BETTER
        return WORSE if self.hi < 0 else WITHIN_NOISE

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "a": self.a,
            "b": self.b,
            "change": self.change,
            "ci": [self.lo, self.hi],
            "verdict": self.verdict,
        }


@dataclasses.dataclass(frozen=True)
class ScenarioChange:
    """A scenario whose success rate moved; p_value is Fisher's exact test on its two 2×2 counts."""

    scenario: Hashable
    a: tuple[int, int]
    b: tuple[int, int]
    p_value: float

    @property
    def change(self) -> float:
        return self.b[0] / self.b[1] - self.a[0] / self.a[1]

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": list(self.scenario) if isinstance(self.scenario, tuple) else self.scenario,
            "a": list(self.a),
            "b": list(self.b),
            "change": self.change,
            "p_value": self.p_value,
        }


@dataclasses.dataclass(frozen=True)
class Comparison:
    scenarios: int
    deltas: list[Delta]
    changes: list[ScenarioChange]
    left_out: int  # scenarios outside the intersection (0 unless asked for the intersection)

    @property
    def verdict(self) -> str:
        """better / worse when every clear change points one way, mixed when they disagree, else within noise."""
        clear = {d.verdict for d in self.deltas} - {WITHIN_NOISE}
        if not clear:
            return WITHIN_NOISE
        return clear.pop() if len(clear) == 1 else MIXED

    def to_json(self) -> dict[str, Any]:
        return {
            "scenarios": self.scenarios,
            "left_out": self.left_out,
            "verdict": self.verdict,
            "deltas": [d.to_json() for d in self.deltas],
            "changes": [c.to_json() for c in self.changes],
        }


def paired_deltas(a: Counts, b: Counts, reps: int = REPS, seed: int = SEED) -> list[Delta]:
    """avg reward, pass^k and pass@k (k = headline k up to both runs' smallest n) with paired intervals.

    a and b must have the same keys.
    """
    keys = sorted(a, key=repr)
    k_max = min(n for counts in (a, b) for _, n in counts.values())
    ks = headline_ks(k_max)
    va, vb = _figures([a[s] for s in keys], ks), _figures([b[s] for s in keys], ks)
    bounds = percentile(bootstrap_means(vb - va, reps, seed))
    names = ["avg_reward"] + [f"pass^{k}" for k in ks[1:]] + [f"pass@{k}" for k in ks[1:]]
    return [
        Delta(name, float(x), float(y), lo, hi)
        for name, x, y, (lo, hi) in zip(names, va.mean(axis=0), vb.mean(axis=0), bounds, strict=True)
    ]


def _figures(counts: list[tuple[int, int]], ks: list[int]) -> np.ndarray:
    """Per-scenario columns: success rate, then pass^k and pass@k for each headline k > 1."""
    successes, trials = [c for c, _ in counts], [n for _, n in counts]
    hat = scenario_pass_hat(successes, trials, ks[-1])
    at = scenario_pass_at(successes, trials, ks[-1])
    columns = [k - 1 for k in ks]
    return np.hstack([hat[:, columns], at[:, columns[1:]]])


def compare_runs(a: Counts, b: Counts, intersection: bool = False, reps: int = REPS, seed: int = SEED) -> Comparison:
    """Paired comparison of run b against run a; raises ScenarioMismatch on different scenario sets
    unless intersection, which keeps only the shared scenarios and counts the rest as left out."""
    only_a, only_b = sorted(a.keys() - b.keys(), key=repr), sorted(b.keys() - a.keys(), key=repr)
    if (only_a or only_b) and not intersection:
        raise ScenarioMismatch(only_a, only_b)
    shared = sorted(a.keys() & b.keys(), key=repr)
    if not shared:
        raise ScenarioMismatch(only_a, only_b)
    a, b = {s: a[s] for s in shared}, {s: b[s] for s in shared}
    changes = [ScenarioChange(s, a[s], b[s], _fisher(a[s], b[s])) for s in shared if a[s][0] * b[s][1] != b[s][0] * a[s][1]]
    changes.sort(key=lambda ch: (ch.change, repr(ch.scenario)))
    return Comparison(len(shared), paired_deltas(a, b, reps, seed), changes, len(only_a) + len(only_b))


def _fisher(a: tuple[int, int], b: tuple[int, int]) -> float:
    from scipy.stats import fisher_exact  # only `compare` needs it: scipy.stats costs every report half a second

    table = [[a[0], a[1] - a[0]], [b[0], b[1] - b[0]]]
    return float(fisher_exact(table).pvalue)
