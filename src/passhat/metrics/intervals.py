"""Confidence intervals: Wilson for one scenario's success rate; for run figures, a bootstrap over scenarios
joined with a Wilson interval on the effective number of scenarios.

Scenarios, not trials, are the sampling unit of pass^k: a run draws some scenarios and, for each, how
its n trials fell. Resampling whole scenarios (each with its own c and n) carries both sources of
noise into the interval, which resampling single trials would not.

Scenarios with the same row of per-scenario values are interchangeable, so one bootstrap resample is
a multinomial draw over the distinct rows. That is the same distribution as resampling scenario
indices, at a cost that does not grow with the number of scenarios (a run of 100,000 trials has a few
dozen distinct (c, n) pairs).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import ndtri

from passhat.metrics.estimators import scenario_pass_at, scenario_pass_hat

LEVEL = 0.95
REPS = 2000
SEED = 0

Interval = tuple[float, float]


@functools.lru_cache(maxsize=8)
def z_value(level: float = LEVEL) -> float:
    """The two-sided normal quantile for a confidence level (1.96 at 95%); computed once per level (a report
    asks for it once per scenario, and scipy's quantile costs more than the interval around it). The inverse of the
    normal CDF itself (scipy.stats.norm.ppf computes it so): scipy.stats costs half a second and 40 MiB to import."""
    return float(ndtri(0.5 + level / 2))


def wilson(successes: int, trials: int, level: float = LEVEL) -> Interval:
    """Wilson score interval for one success rate: sensible at c = 0 and c = n, where the normal
    approximation collapses to a zero-width interval that claims certainty from eight trials."""
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"a Wilson interval needs 0 <= successes <= trials and trials >= 1, got {successes}/{trials}")
    p = successes / trials
    centre, half = score_centre_half(p, trials, z_value(level) ** 2)
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # rounding must not exclude p


def score_centre_half(p: Any, size: Any, z2: float) -> tuple[Any, Any]:
    """Centre and half-width of the Wilson score interval for a rate p observed on `size` units, for floats
    or arrays alike (a report asks for one scenario's at a time, the run's intervals for every k at once)."""
    denom = 1 + z2 / size
    return (p + z2 / (2 * size)) / denom, (p * (1 - p) / size + z2 / (4 * size**2)) ** 0.5 * z2**0.5 / denom


def effective_score(values: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score bounds of the mean of each column of values (scenarios × figures, each in [0, 1]) on its
    effective sample size: lower bounds, upper bounds.

    Why: per-scenario pass^n is 0 or 1, so its mean is a proportion of S scenarios and wants a proportion's
    interval, not a resampling of what was seen (none passed all n: [0, 0]). For values in between, a column
    whose mean is p̂ and whose mean has variance v counts as n_eff = p̂(1 − p̂)/v units (Kish's design effect;
    Korn and Graubard, 1998, use the same for proportions from clustered samples): exactly S when every value
    is 0 or 1, more when the values spread inside [0, 1] (pass^1 of S × n trials at one rate: S·n). A column
    without spread (all 0, all 1, or all one value) counts S, so no scenario passing 8 of 8 among 47 gets
    pass^8 [0, z²/(47 + z²)] = [0, 0.076]."""
    scenarios = len(values)
    p, variance = values.mean(axis=0), values.var(axis=0) / scenarios
    with np.errstate(divide="ignore", invalid="ignore"):  # values in [0, 1] have variance at most p(1 - p): size >= S,
        size = np.fmax(np.where(variance > 0, p * (1 - p) / variance, scenarios), scenarios)  # unless p rounds to 1
    centre, half = score_centre_half(p, size, z_value(level) ** 2)
    return np.clip(centre - half, 0.0, p), np.clip(centre + half, p, 1.0)


def bootstrap_means(values: np.ndarray, reps: int = REPS, seed: int = SEED) -> np.ndarray:
    """Means of `reps` scenario resamples of the rows of values (scenarios × figures): reps × figures."""
    if values.ndim != 2 or len(values) == 0:
        raise ValueError("bootstrap_means needs a non-empty scenarios × figures array")
    rows, inverse = np.unique(values, axis=0, return_inverse=True)
    draws = resample_multiplicities(np.bincount(inverse.ravel(), minlength=len(rows)), reps, seed)
    result: np.ndarray = draws @ rows / len(values)
    return result


PRIOR_AT_EACH_END = 0.5  # pseudo-scenarios at 0 and at 1: Jeffreys' prior when every value is 0 or 1


def bayesian_bootstrap_means(values: np.ndarray, reps: int = REPS, seed: int = SEED) -> np.ndarray:
    """Posterior draws (reps × figures) of the mean of values in [0, 1] (scenarios × figures): a Bayesian
    bootstrap (Rubin, 1981) with half a pseudo-scenario at 0 and half at 1 beside the observed ones.

    Why: the percentile bootstrap can only resample what was seen, so a run where no scenario passed all
    k trials gets pass^k [0, 0], and pass@k [1, 1], claiming certainty. Dirichlet(1, ..., 1, 1/2, 1/2)
    weights keep the bootstrap's shape in the middle and at the edges reduce to Jeffreys' interval: when
    every value is 0 or 1 (as per-scenario pass^n is) the mean is exactly Beta(c + 1/2, S - c + 1/2)."""
    if values.ndim != 2 or len(values) == 0:
        raise ValueError("bayesian_bootstrap_means needs a non-empty scenarios × figures array")
    rows, inverse = np.unique(values, axis=0, return_inverse=True)
    ends = np.vstack([rows, np.zeros(values.shape[1]), np.ones(values.shape[1])])
    shape = np.append(np.bincount(inverse.ravel(), minlength=len(rows)), [PRIOR_AT_EACH_END] * 2)
    weights = np.random.default_rng(seed).gamma(shape, size=(reps, len(shape)))  # Gamma(m) = sum of m Exp(1)
    result: np.ndarray = weights @ ends / weights.sum(axis=1, keepdims=True)
    return result


def resample_multiplicities(multiplicity: np.ndarray, reps: int = REPS, seed: int = SEED) -> np.ndarray:
    """reps × groups: how often each group of interchangeable scenarios appears in each resample."""
    total = int(multiplicity.sum())
    draws: np.ndarray = np.random.default_rng(seed).multinomial(total, multiplicity / total, size=reps)
    return draws


def percentile(draws: np.ndarray, level: float = LEVEL) -> list[Interval]:
    """Percentile interval of each column of bootstrap draws."""
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return [(float(a), float(b)) for a, b in zip(np.atleast_1d(lo), np.atleast_1d(hi), strict=True)]


@dataclasses.dataclass(frozen=True)
class RunIntervals:
    """95% intervals of a set of scenarios' figures, for every k = 1..min n (see run_intervals)."""

    avg_reward: Interval
    pass_hat_k: dict[int, Interval]
    pass_at_k: dict[int, Interval]

    def to_json(self) -> dict[str, Any]:
        return {
            "avg_reward": list(self.avg_reward),
            "pass_hat_k": {str(k): list(v) for k, v in self.pass_hat_k.items()},
            "pass_at_k": {str(k): list(v) for k, v in self.pass_at_k.items()},
        }


def run_intervals(counts: Sequence[tuple[int, int]], reps: int = REPS, seed: int = SEED) -> RunIntervals:
    """Intervals over scenarios for avg reward (= pass^1), pass^k and pass@k, k = 1..min n: the hull of the
    Bayesian bootstrap's and the effective-size score interval's, holding the point figure.

    Why both (bench/exact_interval_coverage.py, docs/statistics.md): the score interval is the one that does
    not collapse at 0 or 1 and is right for 0/1 values (Jeffreys' interval, the bootstrap's there, is too
    narrow with few scenarios: pass^8 of Beta(2, 2) over 47 covered 87%); the bootstrap's half pseudo-scenario
    at each end keeps room for failures no scenario showed, where a figure near 1 rests on a few rare values
    (pass@4 of half p = 1, half p = 0.8 at 235 × 8: the score interval alone covered 76%). Either alone left
    13 to 26 of the 252 cells under 93% at 300 runs per cell.

    The figures of a run are ordered, pass@n >= ... >= pass@1 = pass^1 >= ... >= pass^n, in the points and
    in every bootstrap draw; the hull is widened to keep its bounds in that order too (`ordered`).
    """
    successes, trials = [c for c, _ in counts], [n for _, n in counts]
    k_max = min(trials, default=0)
    values = np.hstack([scenario_pass_hat(successes, trials, k_max), scenario_pass_at(successes, trials, k_max)])
    resampled = np.array(percentile(bayesian_bootstrap_means(values, reps, seed)))
    score_lo, score_hi = effective_score(values)
    lo, hi = np.minimum(resampled[:, 0], score_lo), np.maximum(resampled[:, 1], score_hi)
    chain = np.r_[np.arange(2 * k_max - 1, k_max, -1), np.arange(k_max)]  # pass@n..pass@2, pass^1..pass^n
    lo[chain], hi[chain] = ordered(lo[chain], hi[chain])
    bounds = [(float(a), float(b)) for a, b in zip(lo, hi, strict=True)]
    hat, at = bounds[:k_max], bounds[k_max:]
    at[0] = hat[0]  # pass@1 is pass^1
    return RunIntervals(
        avg_reward=hat[0],
        pass_hat_k={k: hat[k - 1] for k in range(1, k_max + 1)},
        pass_at_k={k: at[k - 1] for k in range(1, k_max + 1)},
    )


def ordered(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of figures whose points never increase along the array, widened (never narrowed) until the
    bounds do not increase either: each lower bound at most every earlier one, each upper at least every later."""
    return np.minimum.accumulate(lo), np.maximum.accumulate(hi[::-1])[::-1]
