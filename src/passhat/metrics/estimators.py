"""Unbiased pass^k and pass@k estimators over scenarios with c successes out of n trials.

For one scenario, C(c, k) / C(n, k) is the unbiased estimate of the chance that k trials drawn
without replacement from its n all succeed, hence of p^k for its true success rate p; pass^k is
its mean over scenarios. pass@k uses C(n - c, k) / C(n, k), the chance that k trials all fail.
Squaring or otherwise powering the mean success rate is biased and is never what these return.

Both ratios are built as running products of factors (top - i) / (n - i), each in [0, 1], so no
binomial coefficient is ever formed: nothing overflows at n = 1000 and every k = 1..n comes out
of one cumulative product.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np


def _counts(successes: Sequence[int], trials: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Check the per-scenario counts and return them as integer arrays (c, n)."""
    if len(successes) != len(trials):
        raise ValueError(f"{len(successes)} success counts for {len(trials)} trial counts")
    if len(trials) == 0:
        raise ValueError("no scenarios: pass^k and pass@k need at least one scenario")
    c = np.array([operator.index(x) for x in successes], dtype=np.int64)
    n = np.array([operator.index(x) for x in trials], dtype=np.int64)
    if (n < 1).any():
        raise ValueError("every scenario needs at least one trial")
    if ((c < 0) | (c > n)).any():
        raise ValueError("every scenario needs 0 <= successes <= trials")
    return c, n


def _check_k(k: int, n: np.ndarray) -> None:
    """k trials must be drawable from every scenario, or its estimate does not exist."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if k > n.min():
        raise ValueError(f"k = {k} exceeds the smallest number of trials in a scenario ({n.min()})")


def _binomial_ratios(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Column j holds C(top, j + 1) / C(n, j + 1) for each scenario (row).

    Factors are clipped at 0 so that once j reaches top the product stays exactly 0; n - i >= 1
    because k never exceeds any scenario's n.
    """
    i = np.arange(k)
    factors = np.clip(top[:, None] - i, 0, None) / (n[:, None] - i)
    return np.cumprod(factors, axis=1)


def pass_hat_k(successes: Sequence[int], trials: Sequence[int], k: int) -> float:
    """Mean over scenarios of C(c, k) / C(n, k): the chance that k fresh trials all succeed."""
    c, n = _counts(successes, trials)
    _check_k(k, n)
    return float(_binomial_ratios(c, n, k)[:, -1].mean())


def pass_at_k(successes: Sequence[int], trials: Sequence[int], k: int) -> float:
    """1 - mean over scenarios of C(n - c, k) / C(n, k): the chance that k trials are not all failures."""
    c, n = _counts(successes, trials)
    _check_k(k, n)
    return 1.0 - float(_binomial_ratios(n - c, n, k)[:, -1].mean())


def scenario_pass_hat(successes: Sequence[int], trials: Sequence[int], k_max: int) -> np.ndarray:
    """Per-scenario C(c, k) / C(n, k) for k = 1..k_max (rows: scenarios): what intervals resample."""
    c, n = _counts(successes, trials)
    _check_k(k_max, n)
    return _binomial_ratios(c, n, k_max)


def scenario_pass_at(successes: Sequence[int], trials: Sequence[int], k_max: int) -> np.ndarray:
    """Per-scenario 1 - C(n - c, k) / C(n, k) for k = 1..k_max (rows: scenarios)."""
    c, n = _counts(successes, trials)
    _check_k(k_max, n)
    return 1.0 - _binomial_ratios(n - c, n, k_max)


def pass_hat_curve(successes: Sequence[int], trials: Sequence[int]) -> dict[int, float]:
    """pass^k for every k = 1..min n, from a single cumulative product per scenario."""
    c, n = _counts(successes, trials)
    means = _binomial_ratios(c, n, int(n.min())).mean(axis=0)
    return {k: float(m) for k, m in enumerate(means, start=1)}


def pass_at_curve(successes: Sequence[int], trials: Sequence[int]) -> dict[int, float]:
    """pass@k for every k = 1..min n, from a single cumulative product per scenario."""
    c, n = _counts(successes, trials)
    means = _binomial_ratios(n - c, n, int(n.min())).mean(axis=0)
    return {k: 1.0 - float(m) for k, m in enumerate(means, start=1)}
