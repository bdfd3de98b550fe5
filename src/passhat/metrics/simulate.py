"""Runs with a known truth: per-scenario success probabilities drawn from a chosen distribution, trials
drawn from them. What the statistics are checked against, and what the report benchmark fills a
store with."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from passhat.metrics.extrapolate import AlwaysBeta, BetaModel, Mixture, SuccessModel


@dataclasses.dataclass(frozen=True)
class Blend:
    """A truth no single model family holds: a scenario's p comes from parts[j] with chance weights[j]
    (e.g. a beta near 1 for the reliable scenarios next to a beta for the flaky ones)."""

    weights: tuple[float, ...]
    parts: tuple[SuccessModel, ...]

    def pass_hat(self, k: Any) -> np.ndarray:
        return np.sum([w * part.pass_hat(k) for w, part in zip(self.weights, self.parts, strict=True)], axis=0)


Truth = SuccessModel | Blend


def draw_rates(truth: Truth, scenarios: int, rng: np.random.Generator) -> np.ndarray:
    """Each scenario's success probability, drawn from truth."""
    if isinstance(truth, Mixture):
        component = rng.choice(len(truth.weights), size=scenarios, p=np.asarray(truth.weights))
        return np.asarray(truth.rates)[component]
    if isinstance(truth, BetaModel):
        return rng.beta(truth.a, truth.b, size=scenarios)
    if isinstance(truth, AlwaysBeta):
        return draw_rates(
            Blend((truth.always, 1 - truth.always), (Mixture((1.0,), (1.0,)), BetaModel(truth.a, truth.b))), scenarios, rng
        )
    part = rng.choice(len(truth.weights), size=scenarios, p=np.asarray(truth.weights))
    rates = np.empty(scenarios)
    for j, model in enumerate(truth.parts):
        rates[part == j] = draw_rates(model, int((part == j).sum()), rng)
    return rates


def simulate_rewards(truth: Truth, scenarios: int, trials: int, rng: np.random.Generator) -> np.ndarray:
    """scenarios × trials rewards (0/1): each scenario's p is drawn from truth, its trials from p."""
    rates = draw_rates(truth, scenarios, rng)
    rewards: np.ndarray = (rng.random((scenarios, trials)) < rates[:, None]).astype(np.int64)
    return rewards


def simulate_counts(truth: Truth, scenarios: int, trials: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """(c, n) per scenario of a simulated run."""
    return [(int(c), trials) for c in simulate_rewards(truth, scenarios, trials, rng).sum(axis=1)]
