"""pass^k beyond the trials run: fit how per-scenario success probability is spread, read pass^k off it.

The exact estimator stops at k = n because n trials hold no more information about "all k succeed".
Past n only a model can answer, so every figure here is model-based and says so. Two families are
fitted by maximum likelihood to the per-scenario counts (c of n):

- beta-binomial: p ~ Beta(a, b), so pass^k = E[p^k] = B(a + k, b) / B(a, b);
- a finite mixture of 1–3 point masses ("always / sometimes / never"): pass^k = sum_j w_j p_j^k.

The candidate with the lowest BIC is used. A mixture of J binomial components is identifiable from
n trials per scenario only when n >= 2J - 1, so J is capped accordingly. Both log-likelihoods leave
out the same log C(n, c) term, so their BICs compare.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import betaln, logsumexp, xlogy

from passhat.metrics.intervals import REPS, SEED, Interval, percentile, resample_multiplicities

EXTRAPOLATE_KS = (20, 100, 1000)
CURVE_KS = tuple(sorted({*np.unique(np.geomspace(1, 1000, 31).round().astype(int)).tolist(), *EXTRAPOLATE_KS}))
MAX_COMPONENTS = 3
EM_ITERATIONS = 1000
EM_TOLERANCE = 1e-8
RATE_FLOOR = 1e-12  # keeps every component's likelihood finite; a rate of 1 - 1e-12 is "always" at k <= 1000
LOG_AB_BOUNDS = (-8.0, 12.0)

ASSUMPTIONS = (
    "Each scenario has one fixed success probability p, and its trials are independent draws with it "
    "(no drift over time, nothing carried from one trial to the next).",
    "The scenarios' probabilities follow one distribution: a beta (beta-binomial) or a few point masses "
    "(a mixture of 1–3 components such as always / sometimes / never), whichever has the lowest BIC; "
    "pass^k is E[p^k] under it. Beyond k = n this is model-based, not measured.",
    "The run's scenarios stand for the traffic the figure is read for (same mix of tasks and customers).",
    "n trials cannot tell p = 1 from p slightly below 1: a component fitted at p ≈ 1 assumes its scenarios "
    "never fail. If they fail once in a few thousand attempts, pass^1000 is lower than shown, and no interval "
    "here covers that.",
    "Intervals: 95% percentile bootstrap over scenarios, refitting the chosen model to every resample "
    "(the choice of model is held fixed).",
)

Groups = tuple[np.ndarray, np.ndarray, np.ndarray]  # (c, n, multiplicity) of distinct (c, n) pairs


def group_counts(counts: Sequence[tuple[int, int]]) -> Groups:
    """Distinct (c, n) pairs with how many scenarios share each: every fit only needs these."""
    if not counts:
        raise ValueError("no scenarios: a success distribution needs at least one")
    pairs, multiplicity = np.unique(np.asarray(counts, dtype=np.int64).reshape(-1, 2), axis=0, return_counts=True)
    return pairs[:, 0].astype(float), pairs[:, 1].astype(float), multiplicity.astype(float)


@dataclasses.dataclass(frozen=True)
class Mixture:
    """Scenarios succeed with probability rates[j] in proportion weights[j]."""

    weights: tuple[float, ...]
    rates: tuple[float, ...]

    @property
    def name(self) -> str:
        return f"mixture-{len(self.weights)}"

    @property
    def n_params(self) -> int:
        return 2 * len(self.weights) - 1

    def pass_hat(self, k: Any) -> np.ndarray:
        """E[p^k] for a scalar or array of (possibly non-integer) k >= 0."""
        powers = np.power.outer(np.asarray(self.rates), np.asarray(k, dtype=float))
        return np.tensordot(np.asarray(self.weights), powers, axes=1)

    def posterior(self, successes: int, trials: int) -> Mixture:
        """The distribution of one scenario's p after seeing its c of n (component weights reweighted)."""
        log_post = np.log(self.weights) + _log_binomial_kernel(successes, trials, np.asarray(self.rates))
        return Mixture(tuple(np.exp(log_post - logsumexp(log_post)).tolist()), self.rates)

    def loglik(self, groups: Groups) -> float:
        c, n, m = groups
        terms = np.log(self.weights)[:, None] + _log_binomial_kernel(c, n, np.asarray(self.rates)[:, None])
        return float((m * logsumexp(terms, axis=0)).sum())

    def to_json(self) -> dict[str, Any]:
        return {"weights": list(self.weights), "rates": list(self.rates)}


@dataclasses.dataclass(frozen=True)
class BetaModel:
    """Scenario success probabilities drawn from Beta(a, b)."""

    a: float
    b: float

    name = "beta-binomial"
    n_params = 2

    def pass_hat(self, k: Any) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        return np.exp(betaln(self.a + k, self.b) - betaln(self.a, self.b))

    def posterior(self, successes: int, trials: int) -> BetaModel:
        return BetaModel(self.a + successes, self.b + trials - successes)

    def loglik(self, groups: Groups) -> float:
        c, n, m = groups
        return float((m * (betaln(c + self.a, n - c + self.b) - betaln(self.a, self.b))).sum())

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b}


SuccessModel = Mixture | BetaModel


def _log_binomial_kernel(c: Any, n: Any, rate: np.ndarray) -> np.ndarray:
    """log p^c (1 - p)^(n - c), with 0 log 0 = 0 so that p = 0 or 1 is allowed where the data allow it."""
    return xlogy(c, rate) + xlogy(np.subtract(n, c), 1 - rate)


# --- fitting --------------------------------------------------------------------------------------


def fit_beta(groups: Groups, start: tuple[float, float] = (0.0, 0.0)) -> BetaModel:
    """Beta-binomial maximum likelihood over log a, log b (bounded: all-pass data push a to infinity)."""

    def negative_loglik(theta: np.ndarray) -> float:
        a, b = np.exp(theta)
        return -BetaModel(a, b).loglik(groups)

    result = minimize(negative_loglik, np.asarray(start), method="L-BFGS-B", bounds=[LOG_AB_BOUNDS] * 2)
    a, b = np.exp(result.x)
    return BetaModel(float(a), float(b))


def _em(groups: Groups, multiplicity: np.ndarray, weights: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expectation-maximisation for binomial mixtures, batched: multiplicity is R × groups, the
    parameters R × J; each of the R problems (starts, or bootstrap resamples) runs independently."""
    c, n, _ = groups
    for _ in range(EM_ITERATIONS):
        with np.errstate(divide="ignore"):
            log_joint = np.log(weights)[:, :, None] + _log_binomial_kernel(c, n, rates[:, :, None])
        resp = np.exp(log_joint - log_joint.max(axis=1, keepdims=True))  # rates are clipped: the max is finite
        resp *= multiplicity[:, None, :] / resp.sum(axis=1, keepdims=True)
        new_weights = resp.sum(axis=2) / multiplicity.sum(axis=1, keepdims=True)
        trials = (resp * n).sum(axis=2)
        new_rates = np.where(trials > 0, (resp * c).sum(axis=2) / np.maximum(trials, 1e-300), rates)
        new_rates = np.clip(new_rates, RATE_FLOOR, 1 - RATE_FLOOR)
        step = max(np.abs(new_weights - weights).max(), np.abs(new_rates - rates).max())
        weights, rates = new_weights, new_rates
        if step < EM_TOLERANCE:
            break
    return weights, rates


def _as_mixture(weights: np.ndarray, rates: np.ndarray) -> Mixture:
    order = np.argsort(-rates)  # most reliable component first
    return Mixture(tuple(weights[order].tolist()), tuple(rates[order].tolist()))


def fit_mixture(groups: Groups, components: int) -> Mixture:
    """Maximum likelihood J-component binomial mixture: EM from a few spread starts, best kept."""
    c, n, m = groups
    rates = np.clip(np.sort(c / n), 0.02, 0.98)
    quantiles = np.quantile(rates, (np.arange(components) + 0.5) / components)
    starts = np.array([np.linspace(0.05, 0.95, components), quantiles, np.linspace(0.5, 0.99, components)])
    weights = np.full_like(starts, 1.0 / components)
    fitted_w, fitted_r = _em(groups, np.tile(m, (len(starts), 1)), weights, starts)
    candidates = [_as_mixture(w, r) for w, r in zip(fitted_w, fitted_r, strict=True)]
    return max(candidates, key=lambda model: model.loglik(groups))


@dataclasses.dataclass(frozen=True)
class Candidate:
    name: str
    n_params: int
    loglik: float
    bic: float

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def max_components(min_trials: int) -> int:
    """Largest J identifiable from min_trials per scenario (n >= 2J - 1), at most MAX_COMPONENTS."""
    return max(1, min(MAX_COMPONENTS, (min_trials + 1) // 2))


def select_model(groups: Groups) -> tuple[SuccessModel, list[Candidate]]:
    """Fit every candidate and keep the lowest BIC; ties go to the simpler (earlier) candidate."""
    scenarios = float(groups[2].sum())
    models: list[SuccessModel] = [fit_mixture(groups, j) for j in range(1, max_components(int(groups[1].min())) + 1)]
    models.insert(1, fit_beta(groups))
    candidates = [
        Candidate(model.name, model.n_params, (ll := model.loglik(groups)), -2 * ll + model.n_params * math.log(scenarios))
        for model in models
    ]
    best = min(range(len(models)), key=lambda i: candidates[i].bic)
    return models[best], candidates


# --- extrapolation --------------------------------------------------------------------------------


def bootstrap_pass_hat(model: SuccessModel, groups: Groups, ks: Sequence[int], reps: int, seed: int) -> np.ndarray:
    """reps × len(ks): pass^k of the model refitted to scenario resamples, warm-started at the fit."""
    draws = resample_multiplicities(groups[2], reps, seed).astype(float)
    k = np.asarray(ks, dtype=float)
    if isinstance(model, Mixture):
        start_w = np.tile(model.weights, (reps, 1))
        start_r = np.tile(model.rates, (reps, 1))
        weights, rates = _em(groups, draws, start_w, start_r)
        result: np.ndarray = np.einsum("rj,rjk->rk", weights, rates[:, :, None] ** k)
        return result
    start = (math.log(model.a), math.log(model.b))
    return np.array([fit_beta((groups[0], groups[1], row), start).pass_hat(k) for row in draws])


@dataclasses.dataclass(frozen=True)
class Extrapolation:
    """pass^k predicted by the chosen model, with bootstrap intervals, and how it fits for k <= n."""

    model: SuccessModel
    candidates: list[Candidate]
    curve: dict[int, tuple[float, float, float]]  # k -> (value, lo, hi) on CURVE_KS
    fit_vs_exact: dict[int, tuple[float, float]]  # k <= n -> (model, exact)

    @property
    def max_gap(self) -> float:
        """Largest |model - exact| over k <= n: how far the fit is from what was measured."""
        return max((abs(a - b) for a, b in self.fit_vs_exact.values()), default=0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model.name,
            "params": self.model.to_json(),
            "pass_hat_k": {str(k): self.curve[k][0] for k in EXTRAPOLATE_KS},
            "ci": {str(k): list(self.curve[k][1:]) for k in EXTRAPOLATE_KS},
            "curve": {str(k): list(v) for k, v in self.curve.items()},
            "fit_vs_exact": {str(k): {"model": m, "exact": e} for k, (m, e) in self.fit_vs_exact.items()},
            "max_gap": self.max_gap,
            "candidates": [c.to_json() for c in self.candidates],
            "assumptions": list(ASSUMPTIONS),
        }


def extrapolate(
    counts: Sequence[tuple[int, int]], exact: dict[int, float], reps: int = REPS // 4, seed: int = SEED
) -> Extrapolation:
    """Choose a model for the scenarios' (c, n) and predict pass^k on CURVE_KS with 95% intervals.

    exact holds the exact estimator's pass^k for k <= n, to show where model and measurement agree.
    """
    groups = group_counts(counts)
    model, candidates = select_model(groups)
    values = model.pass_hat(CURVE_KS)
    bounds = percentile(bootstrap_pass_hat(model, groups, CURVE_KS, reps, seed))
    curve = {k: (float(v), lo, hi) for k, v, (lo, hi) in zip(CURVE_KS, values, bounds, strict=True)}
    fit_vs_exact = {k: (float(model.pass_hat(k)), e) for k, e in exact.items()}
    return Extrapolation(model, candidates, curve, fit_vs_exact)
