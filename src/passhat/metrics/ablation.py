"""What each guard bought: the figures of an ablation's configurations on the same trials, and each one's
paired difference to the configuration without guards.

The configurations ran the same trial keys (task, persona, trial index) with the same seeds, so two trials of
one key differ only by the guards. Only the keys judged in every configuration are compared: each figure and
each difference is over the same trials.

Intervals come from a paired bootstrap over scenarios: one resample draws scenarios, each with all its trials
in every configuration, so the configurations' figures in a resample are over the same work and a scenario's
own difficulty cancels in their difference. The 95% percentile interval of a figure (or of a difference) over
the resamples is its interval. Pure: the caller reads the stored trials.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from typing import Any, Literal, get_args

import numpy as np

from passhat.metrics.estimators import scenario_pass_hat
from passhat.metrics.guard import GuardTally
from passhat.metrics.intervals import LEVEL, REPS, SEED, bootstrap_means

Figure = Literal[
    "pass_hat_1",
    "pass_hat_k",
    "duplicate_writes",
    "unconfirmed_writes",
    "policy_violations",
    "refusals",
    "handoffs",
    "helpfulness",
]
FIGURES: tuple[Figure, ...] = get_args(Figure)
# counted per trial and shown per 100 compared trials
RATES: tuple[Figure, ...] = ("duplicate_writes", "unconfirmed_writes", "policy_violations", "refusals", "handoffs")
# per scenario and configuration: the two pass figures, then sums over its compared trials
COLUMNS = ("pass_hat_1", "pass_hat_k", "trials", *RATES, "helped", "write_trials")
PASS_1, PASS_K, TRIALS, HELPED, WRITE_TRIALS = (
    COLUMNS.index(c) for c in ("pass_hat_1", "pass_hat_k", "trials", "helped", "write_trials")
)

TrialKey = tuple[str, str, int]  # (task_id, persona, trial index)


class NothingCompared(ValueError):
    """No trial key was judged in every configuration: there is no trial to compare on."""


@dataclasses.dataclass(frozen=True)
class AblationTrial:
    """A judged trial as the ablation reads it: its reward, its grade (whose details count the writes) and its
    events (whose guard decisions count refusals and handoffs)."""

    reward: int
    grade: dict[str, Any]
    events: list[dict[str, Any]]


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A figure and its 95% interval; all None when the figure does not exist (helpfulness without write tasks)."""

    value: float | None
    lo: float | None
    hi: float | None


@dataclasses.dataclass(frozen=True)
class ConfigurationFigures:
    """One configuration over the compared trials: its sums (``COLUMNS`` after the pass figures), each figure,
    and each figure's difference to the baseline (None for the baseline itself)."""

    name: str
    counts: dict[str, int]
    figures: dict[Figure, Estimate]
    difference: dict[Figure, Estimate] | None


@dataclasses.dataclass(frozen=True)
class AblationFigures:
    k: int  # pass^k's k: the one asked for, or the fewest compared trials of a scenario if that is fewer
    scenarios: int
    trials: int  # trial keys compared: judged in every configuration
    left_out: int  # trial keys judged in some configuration but not in all
    configurations: list[ConfigurationFigures]


def ablation_figures(
    runs: Mapping[str, Mapping[TrialKey, AblationTrial]], baseline: str, k: int, reps: int = REPS, seed: int = SEED
) -> AblationFigures:
    """Each configuration's figures (its judged trials by key, under its name) and their paired differences to
    ``baseline``'s, over the keys judged in every configuration.

    pass_hat_1 and pass_hat_k are means over scenarios of c / n and C(c, k) / C(n, k); the five ``RATES`` are
    counts per 100 compared trials (100 · sum of counts / trials); helpfulness is the share of compared trials
    of write tasks whose required writes all happened.
    """
    keysets = [set(trials) for trials in runs.values()]
    keys = set.intersection(*keysets)
    if not keys:
        raise NothingCompared("no trial key was judged in every configuration")
    per_scenario = Counter(key[:2] for key in keys)
    scenarios = sorted(per_scenario)
    k = min(k, *per_scenario.values())
    columns = {name: _scenario_columns(trials, keys, scenarios, k) for name, trials in runs.items()}
    stacked = np.hstack(list(columns.values()))
    point, draws = stacked.mean(axis=0), bootstrap_means(stacked, reps, seed)
    width = len(COLUMNS)
    figures = {
        name: (_figures(point[i * width : (i + 1) * width]), _figures(draws[:, i * width : (i + 1) * width]))
        for i, name in enumerate(columns)
    }
    base_point, base_draws = figures[baseline]
    return AblationFigures(
        k=k,
        scenarios=len(scenarios),
        trials=len(keys),
        left_out=len(set.union(*keysets) - keys),
        configurations=[
            ConfigurationFigures(
                name,
                {c: int(columns[name][:, i].sum()) for i, c in enumerate(COLUMNS) if i not in (PASS_1, PASS_K)},
                {f: _estimate(own_point[f], own_draws[f]) for f in FIGURES},
                None
                if name == baseline
                else {f: _estimate(own_point[f] - base_point[f], own_draws[f] - base_draws[f]) for f in FIGURES},
            )
            for name, (own_point, own_draws) in figures.items()
        ],
    )


def _scenario_columns(
    trials: Mapping[TrialKey, AblationTrial], keys: set[TrialKey], scenarios: list[tuple[str, str]], k: int
) -> np.ndarray:
    """scenarios × COLUMNS of one configuration, over the compared keys."""
    tallies = {s: GuardTally() for s in scenarios}
    successes = dict.fromkeys(scenarios, 0)
    for key in keys:
        trial, scenario = trials[key], key[:2]
        tallies[scenario].add(key[0], trial.reward, trial.grade, trial.events)
        successes[scenario] += trial.reward
    counts = [(successes[s], tallies[s].trials) for s in scenarios]
    hat = scenario_pass_hat([c for c, _ in counts], [n for _, n in counts], k)
    sums = [_sums(t) for t in tallies.values()]
    return np.column_stack([hat[:, 0], hat[:, k - 1], np.array([[s[c] for c in COLUMNS[2:]] for s in sums], dtype=float)])


def _sums(tally: GuardTally) -> dict[str, int]:
    """A scenario's tally under the names of ``COLUMNS``."""
    return {
        "trials": tally.trials,
        "duplicate_writes": tally.duplicate_writes,
        "unconfirmed_writes": tally.unconfirmed_writes,
        "policy_violations": tally.policy_violations,
        "refusals": tally.refusals,
        "handoffs": sum(tally.tickets.values()),
        "helped": tally.helped,
        "write_trials": tally.with_writes,
    }


def _figures(means: np.ndarray) -> dict[Figure, np.ndarray]:
    """Each figure from column means (one row of them, or a resample per row): a rate or share is a ratio of
    sums, so of means."""
    with np.errstate(invalid="ignore", divide="ignore"):  # no write trial in a resample: helpfulness is NaN there
        return {
            "pass_hat_1": means[..., PASS_1],
            "pass_hat_k": means[..., PASS_K],
            **{f: 100 * means[..., COLUMNS.index(f)] / means[..., TRIALS] for f in RATES},
            "helpfulness": means[..., HELPED] / means[..., WRITE_TRIALS],
        }


def _estimate(value: np.ndarray, draws: np.ndarray) -> Estimate:
    """The figure and the percentile interval of its resamples (those where it exists)."""
    if np.isnan(value):
        return Estimate(None, None, None)
    lo, hi = np.nanquantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Estimate(float(value), float(lo), float(hi))
