"""Runs with a known truth: per-scenario success probabilities drawn from a chosen mixture, trials
drawn from them. What the statistics are checked against, and what the report benchmark fills a
store with."""

from __future__ import annotations

import numpy as np

from passhat.metrics.extrapolate import Mixture


def simulate_rewards(truth: Mixture, scenarios: int, trials: int, rng: np.random.Generator) -> np.ndarray:
    """scenarios × trials rewards (0/1): each scenario's p is drawn from truth, its trials from p."""
    component = rng.choice(len(truth.weights), size=scenarios, p=np.asarray(truth.weights))
    rates = np.asarray(truth.rates)[component]
    rewards: np.ndarray = (rng.random((scenarios, trials)) < rates[:, None]).astype(np.int64)
    return rewards


def simulate_counts(truth: Mixture, scenarios: int, trials: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """(c, n) per scenario of a simulated run."""
    return [(int(c), trials) for c in simulate_rewards(truth, scenarios, trials, rng).sum(axis=1)]
