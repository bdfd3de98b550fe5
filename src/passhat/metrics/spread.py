"""Spread and robustness: how uneven the scenarios are, what a difficult customer costs, and how
success falls as a task needs more writes (the compounding curve)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from passhat.metrics.compare import Delta, paired_deltas
from passhat.metrics.estimators import pass_hat_k
from passhat.metrics.intervals import Interval, run_intervals
from passhat.metrics.summary import Scenario

BASELINE = "baseline"
WRITES_TAG = re.compile(r"writes:(\d+)")


def scenario_variance(successes: int, trials: int) -> float | None:
    """Unbiased estimate of p(1 - p), the variance of one trial's reward: c(n - c) / (n(n - 1)).
    0 for a scenario that always or never passes; None with a single trial (nothing to estimate from)."""
    if trials < 2:
        return None
    return successes * (trials - successes) / (trials * (trials - 1))


@dataclasses.dataclass(frozen=True)
class Spread:
    """mean_trial_variance: the average within-scenario variance (the noise a retry meets);
    between_scenarios: the variance of the scenarios' true success rates (how uneven the tasks are),
    net of the binomial noise in each observed c / n."""

    mean_trial_variance: float | None
    between_scenarios: float

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def spread(counts: Sequence[tuple[int, int]]) -> Spread:
    """Within- and between-scenario variance. The raw variance of c / n over S scenarios has expectation
    var(p) + (1 - 1/S) mean(p_i (1 - p_i) / n_i): 260 scenarios all at p = 0.95 with 8 trials read 0.006
    from noise alone. Between is therefore that variance less the unbiased estimate of the noise term
    (method of moments; scenarios with one trial add no noise estimate), floored at 0 as a variance."""
    variances = [v for c, n in counts if (v := scenario_variance(c, n)) is not None]
    rates = [c / n for c, n in counts]
    noise = sum(v / n for c, n in counts if (v := scenario_variance(c, n)) is not None) / len(counts)
    between = max(0.0, float(np.var(rates)) - (1 - 1 / len(counts)) * noise)
    return Spread(float(np.mean(variances)) if variances else None, between)


def persona_drops(counts: Mapping[Scenario, tuple[int, int]], baseline: str = BASELINE) -> dict[str, list[Delta]]:
    """For each persona other than baseline, the change from baseline on the same tasks (paired by task):
    avg reward (pass^1), pass^k and pass@k with paired-bootstrap intervals. Empty without a baseline."""
    by_persona: dict[str, dict[str, tuple[int, int]]] = {}
    for (task, persona), cn in counts.items():
        by_persona.setdefault(persona, {})[task] = cn
    base = by_persona.get(baseline)
    if base is None:
        return {}
    drops = {}
    for persona, tasks in sorted(by_persona.items()):
        shared = base.keys() & tasks.keys()
        if persona != baseline and shared:
            drops[persona] = paired_deltas({t: base[t] for t in shared}, {t: tasks[t] for t in shared})
    return drops


@dataclasses.dataclass(frozen=True)
class WritesPoint:
    """Scenarios whose task needs `writes` writes: success rate and pass^n with 95% intervals."""

    writes: int
    scenarios: int
    avg_reward: float
    avg_reward_ci: Interval
    k: int
    pass_hat_k: float
    pass_hat_k_ci: Interval

    def to_json(self) -> dict[str, Any]:
        return {
            "writes": self.writes,
            "scenarios": self.scenarios,
            "avg_reward": self.avg_reward,
            "avg_reward_ci": list(self.avg_reward_ci),
            "k": self.k,
            "pass_hat_k": self.pass_hat_k,
            "pass_hat_k_ci": list(self.pass_hat_k_ci),
        }


def compounding(counts: Mapping[Scenario, tuple[int, int]], tags: Mapping[str, Sequence[str]], k: int) -> list[WritesPoint]:
    """Success against the number of writes a task needs (its `writes:N` tag), by N ascending.

    k is the pass^k shown at every point (the run's n), so the points compare."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for (task, _), cn in counts.items():
        for tag in tags.get(task, ()):
            if match := WRITES_TAG.fullmatch(tag):
                groups.setdefault(int(match[1]), []).append(cn)
    points = []
    for writes, group in sorted(groups.items()):
        ci = run_intervals(group)
        rates = np.array([c / n for c, n in group])
        hat = pass_hat_k([c for c, _ in group], [n for _, n in group], k)
        points.append(WritesPoint(writes, len(group), float(rates.mean()), ci.avg_reward, k, hat, ci.pass_hat_k[k]))
    return points
