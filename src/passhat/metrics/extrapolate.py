"""pass^k beyond the trials run: fit how per-scenario success probability is spread, read pass^k off it.

The exact estimator stops at k = n because n trials hold no more information about "all k succeed".
Past n only a model can answer, so every figure here is model-based and says so. The candidates are
fitted by maximum likelihood to the per-scenario counts (c of n); pass^k = E[p^k] under each:

- mixture-J: J point masses ("always / sometimes / never"), pass^k = sum_j w_j p_j^k;
- always+mixture-(J-1): the same with the top mass pinned at p = 1. Scenarios that never fail are
  common for agents, and a free rate fitted at 0.998 instead of 1 costs a fifth of pass^100;
- beta-binomial: p ~ Beta(a, b), pass^k = B(a + k, b) / B(a, b), for rates spread continuously;
- always+beta: a share at p = 1, the rest Beta(a, b).

n trials identify only the first n moments of p, so a candidate with more than n free parameters is
left out (a mixture of J masses needs n >= 2J - 1). All log-likelihoods leave out the same log C(n, c)
term, so they compare.

Choosing: the lowest AIC gives the point figure. AIC, not BIC, because the figure is a prediction and
no candidate is the truth when success rates are spread continuously: BIC's heavier penalty (log S
per parameter) then keeps a single beta that fits the observed counts well and predicts pass^100 far
too high (on a simulated beta mixture, +0.14 on average and 89% coverage with BIC; -0.02 and 93%
with AIC), where AIC lets the richer shapes compete.

Intervals: a 95% percentile bootstrap over scenarios that refits *every* candidate to every resample
and keeps each resample's lowest AIC, so the uncertainty of the choice is in the interval (Buckland,
Burnham & Augustin, 1997, "Model selection: an integral part of inference"). Re-selection rather than
averaging with Akaike weights: the resamples themselves show how often the data could have picked
each shape, and one fitted model per resample keeps every draw a pass^k some model would report.
Holding the original choice fixed covered a continuous truth in as few as 4% of simulated runs. The
interval is widened to hold the point figure, and beyond n its lower end to what the trials cannot rule
out whatever the model: the unseen tail of the scenarios that never failed (`unseen_tail_floor`) and the
lowest pass^k the measured pass^(n-1) and pass^n allow, and the upper end to the highest they allow
(`moment_bounds`). Every candidate can be wrong in
the same direction (with 4 trials, scenarios at p = 0.975 look like "always"), which re-selection
cannot see.

Credibility: pass^k is withheld ("not predicted", with the reason) when
- misfit: for some j <= n the exact estimator's pass^j is further from the chosen model's than chance
  explains if the model were true (its standard error under the model, at a simultaneous 95% level over
  j = 1..n): the model does not reproduce what was measured, so it is no basis beyond n; every k is
  withheld. (The bootstrap intervals of the exact estimator cannot judge this: when no scenario passed
  all n trials, the interval of pass^n is [0, 0].) Or
- disagreement (k > n): a candidate that fits about as well (AIC within PLAUSIBLE_AIC of the best: at
  least e^-3, about 1/20, of its Akaike weight) predicts pass^k outside the interval, so the trials
  cannot tell apart two answers the interval does not both hold. Once k is withheld, every larger k is.
A wide interval is not withheld: it is what the data say, and refusing wide intervals would keep
exactly the narrow ones that miss.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from scipy.special import betaln, expit, gammaln, logsumexp, xlogy

from passhat.metrics.estimators import scenario_pass_hat
from passhat.metrics.intervals import (
    LEVEL,
    REPS,
    SEED,
    Interval,
    bayesian_bootstrap_means,
    percentile,
    resample_multiplicities,
    z_value,
)

EXTRAPOLATE_KS = (20, 100, 1000)
CURVE_KS = tuple(sorted({*np.unique(np.geomspace(1, 1000, 31).round().astype(int)).tolist(), *EXTRAPOLATE_KS}))
PLAUSIBLE_AIC = 6.0  # a candidate this close to the best AIC keeps >= e^-3 (~1/20) of its weight: a live alternative
SHOWN = 0.0005  # half the last digit a report shows: closer than this to an interval is inside it
NEWTON_ITERATIONS = 60
NEWTON_TOLERANCE = 1e-7  # log-likelihood gain, relative to |log-likelihood|, below which a fit has converged
EM_ITERATIONS = 1000
EM_TOLERANCE = 1e-7
BISECTIONS = 50  # halvings of [0, 1]: a rate to 1e-15
RATE_FLOOR = 1e-12  # keeps a free component's likelihood finite; a rate of 1 - 1e-12 is "always" at k <= 1000
LOGIT_BOUND = 20.0  # shares within 2e-9 of 0 or 1
# Beta families are fitted over (logit mean, log concentration[, logit always]); the concentration's
# bounds span U-shaped betas to ones indistinguishable from a point mass at k <= 1000.
BETA_LOWER = np.array([-LOGIT_BOUND, -6.0, -LOGIT_BOUND])
BETA_UPPER = np.array([LOGIT_BOUND, 12.0, LOGIT_BOUND])

ASSUMPTIONS = (
    "Each scenario has one fixed success probability p, and its trials are independent draws with it "
    "(no drift over time, nothing carried from one trial to the next).",
    "The scenarios' probabilities follow one of a few shapes: 1–3 point masses (always / sometimes / never, "
    "optionally with 'always' at exactly p = 1), a beta, or a beta next to a share at p = 1; the lowest AIC "
    "gives the figure, and pass^k is E[p^k] under it. Beyond k = n this is model-based, not measured.",
    "The run's scenarios stand for the traffic the figure is read for (same mix of tasks and customers).",
    "n trials cannot tell p = 1 from p slightly below 1: a component fitted at p ≈ 1 assumes its scenarios "
    "never fail, so the point figure is an upper reading; the interval's lower end allows that they fail.",
    "Intervals: 95% percentile bootstrap over scenarios; every resample refits every candidate and keeps "
    "its lowest AIC, so the uncertainty of the choice of model is in the interval. Beyond n the lower end "
    "also reaches the lowest pass^k the scenarios that never failed cannot rule out (their rates all at "
    "the pooled Clopper-Pearson lower bound), since n trials cannot tell p = 1 from p slightly below 1, and the "
    "lowest pass^k any spread of rates with the measured pass^(n-1) and pass^n allows, and the upper end the "
    "highest (a share that never fails beside one rate).",
    "A figure is not predicted when the chosen model departs from the measured pass^k for some k <= n by more "
    "than chance explains, or when a "
    "model that fits about as well (AIC within 6) predicts a value outside the interval.",
)

Groups = tuple[np.ndarray, np.ndarray, np.ndarray]  # (c, n, multiplicity) of distinct (c, n) pairs


def group_counts(counts: Sequence[tuple[int, int]]) -> Groups:
    """Distinct (c, n) pairs with how many scenarios share each: every fit only needs these."""
    if not counts:
        raise ValueError("no scenarios: a success distribution needs at least one")
    pairs, multiplicity = np.unique(np.asarray(counts, dtype=np.int64).reshape(-1, 2), axis=0, return_counts=True)
    return pairs[:, 0].astype(float), pairs[:, 1].astype(float), multiplicity.astype(float)


# --- models ---------------------------------------------------------------------------------------


def _log_binomial_kernel(c: Any, n: Any, rate: np.ndarray) -> np.ndarray:
    """log p^c (1 - p)^(n - c), with 0 log 0 = 0 so that p = 0 or 1 is allowed where the data allow it."""
    return xlogy(c, rate) + xlogy(np.subtract(n, c), 1 - rate)


def _log_beta_binomial(c: Any, n: Any, a: Any, b: Any) -> np.ndarray:
    """log P(c of n | p ~ Beta(a, b)) without the log C(n, c) term."""
    return betaln(c + a, n - c + b) - betaln(a, b)  # type: ignore[no-any-return]


def _log_always_beta(c: Any, n: Any, log_always: Any, log_rest: Any, a: Any, b: Any) -> np.ndarray:
    """log P(c of n) when a share exp(log_always) never fails and the rest draw p from Beta(a, b)."""
    with np.errstate(divide="ignore"):
        always = np.where(np.equal(c, n), log_always, -np.inf)
    return np.logaddexp(always, log_rest + _log_beta_binomial(c, n, a, b))  # type: ignore[no-any-return]


@dataclasses.dataclass(frozen=True)
class Mixture:
    """Scenarios succeed with probability rates[j] in proportion weights[j]; with always, rates[0] is
    pinned at exactly 1 (not fitted)."""

    weights: tuple[float, ...]
    rates: tuple[float, ...]
    always: bool = False

    @property
    def name(self) -> str:
        j = len(self.weights)
        return f"always+mixture-{j - 1}" if self.always else f"mixture-{j}"

    @property
    def n_params(self) -> int:
        return 2 * len(self.weights) - 1 - self.always

    def pass_hat(self, k: Any) -> np.ndarray:
        """E[p^k] for a scalar or array of (possibly non-integer) k >= 0."""
        powers = np.power.outer(np.asarray(self.rates), np.asarray(k, dtype=float))
        return np.tensordot(np.asarray(self.weights), powers, axes=1)

    def posterior(self, successes: int, trials: int) -> Mixture:
        """The distribution of one scenario's p after seeing its c of n (component weights reweighted)."""
        with np.errstate(divide="ignore"):
            log_post = np.log(self.weights) + _log_binomial_kernel(successes, trials, np.asarray(self.rates))
        return Mixture(tuple(np.exp(log_post - logsumexp(log_post)).tolist()), self.rates, self.always)

    def log_prob(self, c: np.ndarray, n: np.ndarray) -> np.ndarray:
        """log P(c of n) for one scenario, without the log C(n, c) term (as every log_prob here)."""
        with np.errstate(divide="ignore"):
            terms = np.log(self.weights)[:, None] + _log_binomial_kernel(c, n, np.asarray(self.rates)[:, None])
        return logsumexp(terms, axis=0)  # type: ignore[no-any-return]

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

    def log_prob(self, c: np.ndarray, n: np.ndarray) -> np.ndarray:
        return _log_beta_binomial(c, n, self.a, self.b)

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b}


@dataclasses.dataclass(frozen=True)
class AlwaysBeta:
    """A share `always` of scenarios never fails (p = 1); the others draw p from Beta(a, b)."""

    always: float
    a: float
    b: float

    name = "always+beta"
    n_params = 3

    def pass_hat(self, k: Any) -> np.ndarray:
        return self.always + (1 - self.always) * BetaModel(self.a, self.b).pass_hat(k)

    def posterior(self, successes: int, trials: int) -> AlwaysBeta:
        """One failure rules out "always"; all passes reweigh it against the beta's chance of all passes."""
        rest = BetaModel(self.a + successes, self.b + trials - successes)
        if successes < trials:
            return AlwaysBeta(0.0, rest.a, rest.b)
        all_pass = (1 - self.always) * float(BetaModel(self.a, self.b).pass_hat(trials))
        return AlwaysBeta(self.always / (self.always + all_pass), rest.a, rest.b)

    def log_prob(self, c: np.ndarray, n: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            log_always, log_rest = np.log(self.always), np.log1p(-self.always)
        return _log_always_beta(c, n, log_always, log_rest, self.a, self.b)

    def to_json(self) -> dict[str, Any]:
        return {"always": self.always, "a": self.a, "b": self.b}


SuccessModel = Mixture | BetaModel | AlwaysBeta


def loglik(model: SuccessModel, groups: Groups) -> float:
    """The model's log-likelihood of the grouped counts (without the log C(n, c) terms)."""
    c, n, m = groups
    return float((m * model.log_prob(c, n)).sum())


# --- fitting, batched: each row of `multiplicity` (R × groups) is its own problem ----------------


def _maximise_rows(
    loglik: Callable[[np.ndarray, np.ndarray], np.ndarray], start: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Maximise loglik(theta[rows], rows) for every row of theta independently, in one vectorised loop:
    Newton steps on finite-difference derivatives, with |eigenvalues| of the Hessian (so saddles and
    flat ridges still move uphill), coordinates held at a bound they push against, and halving until
    each row's log-likelihood does not fall. Hundreds of bootstrap refits cost a few array operations."""
    theta = np.clip(np.array(start, dtype=float), lower, upper)
    d = theta.shape[1]
    h = 1e-4
    shift = np.eye(d) * h
    value = loglik(theta, np.arange(len(theta)))
    rows = np.arange(len(theta))
    for _ in range(NEWTON_ITERATIONS):
        th, f0 = theta[rows], value[rows]
        at = lambda x, rows=rows: loglik(x, rows)  # noqa: E731
        plus = np.stack([at(th + shift[i]) for i in range(d)], axis=1)
        minus = np.stack([at(th - shift[i]) for i in range(d)], axis=1)
        grad = (plus - minus) / (2 * h)
        hess = np.empty((len(rows), d, d))
        for i in range(d):
            hess[:, i, i] = (plus[:, i] - 2 * f0 + minus[:, i]) / h**2
            for j in range(i + 1, d):
                hess[:, i, j] = hess[:, j, i] = (at(th + shift[i] + shift[j]) - plus[:, i] - plus[:, j] + f0) / h**2
        held = ((th <= lower) & (grad < 0)) | ((th >= upper) & (grad > 0))
        grad = np.where(held, 0.0, grad)
        hess = np.where(~held[:, :, None] & ~held[:, None, :], hess, 0.0) - held[:, :, None] * np.eye(d)
        eigenvalues, vectors = np.linalg.eigh(-hess)
        scale = 1 / np.maximum(np.abs(eigenvalues), 1e-6)
        step = np.einsum("rij,rj,rkj,rk->ri", vectors, scale, vectors, grad)
        new_th, new_f = th.copy(), f0.copy()
        length, searching = np.ones(len(rows)), np.ones(len(rows), dtype=bool)
        for _ in range(30):
            trial = np.clip(th + length[:, None] * step, lower, upper)
            f = at(trial)
            better = searching & (f >= f0)
            new_th[better], new_f[better] = trial[better], f[better]
            searching &= ~better
            if not searching.any():
                break
            length[searching] /= 2
        theta[rows], value[rows] = new_th, new_f
        rows = rows[new_f - f0 > NEWTON_TOLERANCE * np.maximum(1.0, np.abs(new_f))]
        if not len(rows):
            break
    return theta, value


class Family(Protocol):
    """How one candidate shape is fitted: parameters as rows of an array, so R fits run batched."""

    name: str
    n_params: int

    def starts(self, groups: Groups) -> np.ndarray: ...

    def fit(self, groups: Groups, multiplicity: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(parameters R × d, log-likelihood R) for the R rows of multiplicity, from start (R × d)."""
        ...

    def model(self, params: np.ndarray) -> SuccessModel: ...


def _em_step(
    groups: Groups, multiplicity: np.ndarray, weights: np.ndarray, rates: np.ndarray, always: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One expectation-maximisation step for R binomial mixtures at once (multiplicity R × groups,
    parameters R × J): (new weights, new rates, log-likelihood at the weights and rates given).
    With always, component 0 keeps its rate of exactly 1."""
    c, n, _ = groups
    with np.errstate(divide="ignore"):
        log_joint = np.log(weights)[:, :, None] + _log_binomial_kernel(c, n, rates[:, :, None])
    top = log_joint.max(axis=1, keepdims=True)  # a free rate is clipped: the max is finite
    resp = np.exp(log_joint - top)
    total = resp.sum(axis=1, keepdims=True)
    loglik = (multiplicity * (np.log(total) + top)[:, 0]).sum(axis=1)
    resp *= multiplicity[:, None, :] / total
    new_weights = resp.sum(axis=2) / multiplicity.sum(axis=1, keepdims=True)
    trials = (resp * n).sum(axis=2)
    new_rates = np.where(trials > 0, (resp * c).sum(axis=2) / np.maximum(trials, 1e-300), rates)
    new_rates = np.clip(new_rates, RATE_FLOOR, 1 - RATE_FLOOR)
    if always:
        new_rates[:, 0] = 1.0
    return new_weights, new_rates, loglik


def _em(
    groups: Groups, multiplicity: np.ndarray, weights: np.ndarray, rates: np.ndarray, always: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expectation-maximisation for binomial mixtures, batched over the R rows (starts, or bootstrap
    resamples), each run until its own log-likelihood stops rising; returns (weights, rates,
    log-likelihood). Plain EM crawls where a share heads for 0 (an "always" nobody needs) — a thousand
    steps of 3 groups × 500 resamples cost most of a report — so every cycle of two EM steps is
    extrapolated along their path (SQUAREM, Varadhan & Roland 2008, step length -|r| / |v|, at least
    that of the two steps), projected back to valid shares and rates, and kept after one more EM step
    only when it is no worse than the plain steps; the log-likelihood never falls."""
    weights, rates = weights.astype(float), rates.astype(float)
    rows, loglik = np.arange(len(weights)), np.full(len(weights), -np.inf)
    j = weights.shape[1]
    for _ in range(EM_ITERATIONS // 3):
        m = multiplicity[rows]
        x0 = np.hstack([weights[rows], rates[rows]])
        w1, r1, _ = _em_step(groups, m, x0[:, :j], x0[:, j:], always)
        w2, r2, gained = _em_step(groups, m, w1, r1, always)
        x1, x2 = np.hstack([w1, r1]), np.hstack([w2, r2])
        first, second = x1 - x0, x2 - 2 * x1 + x0
        with np.errstate(divide="ignore", invalid="ignore"):
            length = -np.sqrt((first**2).sum(axis=1) / (second**2).sum(axis=1))
        length = np.minimum(np.nan_to_num(length, nan=-1.0, neginf=-1.0), -1.0)[:, None]
        jump = x0 - 2 * length * first + length**2 * second
        shares = np.clip(jump[:, :j], 0.0, None)
        shares /= shares.sum(axis=1, keepdims=True)
        jumped_rates = np.clip(jump[:, j:], RATE_FLOOR, 1 - RATE_FLOOR)
        if always:
            jumped_rates[:, 0] = 1.0
        with np.errstate(invalid="ignore"):  # a jump that leaves some group impossible is not kept
            w3, r3, reached = _em_step(groups, m, shares, jumped_rates, always)
        keep = (reached >= gained)[:, None]
        weights[rows], rates[rows] = np.where(keep, w3, w2), np.where(keep, r3, r2)
        current = np.where(keep[:, 0], reached, gained)
        moving = current - loglik[rows] > EM_TOLERANCE
        loglik[rows] = current
        rows = rows[moving]
        if not len(rows):
            break
    _, _, loglik = _em_step(groups, multiplicity, weights, rates, always)
    return weights, rates, loglik


@dataclasses.dataclass(frozen=True)
class AtomFamily:
    """J point masses, the top one pinned at 1 with always; parameters: J weights, then J rates."""

    components: int
    always: bool = False

    @property
    def name(self) -> str:
        return Mixture((1.0,) * self.components, (1.0,) * self.components, self.always).name

    @property
    def n_params(self) -> int:
        return 2 * self.components - 1 - self.always

    def starts(self, groups: Groups) -> np.ndarray:
        c, n, _ = groups
        j = self.components
        rates = np.clip(np.sort(c / n), 0.02, 0.98)
        quantiles = np.quantile(rates, (np.arange(j) + 0.5) / j)[::-1]
        spread = np.array([np.linspace(0.95, 0.05, j), quantiles, np.linspace(0.99, 0.5, j)])
        if self.always:
            spread[:, 0] = 1.0
        return np.hstack([np.full_like(spread, 1.0 / j), spread])

    def fit(self, groups: Groups, multiplicity: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        j = self.components
        weights, rates, loglik = _em(groups, multiplicity, start[:, :j], start[:, j:], self.always)
        return np.hstack([weights, rates]), loglik

    def model(self, params: np.ndarray) -> Mixture:
        j = self.components
        weights, rates = params[:j], params[j:]
        order = np.argsort(-rates, kind="stable")  # most reliable component first (the pinned one stays first)
        return Mixture(tuple(weights[order].tolist()), tuple(rates[order].tolist()), self.always)


def _beta_shape(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) from (logit mean, log concentration) in the first two columns."""
    mean, concentration = expit(theta[:, :1]), np.exp(theta[:, 1:2])
    return mean * concentration, (1 - mean) * concentration


@dataclasses.dataclass(frozen=True)
class BetaFamily:
    """Beta(a, b), with always a share at p = 1 beside it; parameters: logit mean, log concentration
    (nearly independent, so Newton steps go straight), and logit of the share at 1."""

    always: bool = False

    @property
    def name(self) -> str:
        return "always+beta" if self.always else BetaModel.name

    @property
    def n_params(self) -> int:
        return 2 + self.always

    def starts(self, groups: Groups) -> np.ndarray:
        c, n, m = groups
        mean = float(np.clip((m * c / n).sum() / m.sum(), 0.02, 0.98))
        all_pass = float((m * (c == n)).sum() / m.sum())
        shapes = [(math.log(mean / (1 - mean)), math.log(concentration)) for concentration in (2.0, 20.0)] + [(3.0, 3.0)]
        if not self.always:
            return np.array(shapes)
        return np.array([(*s, z) for s in shapes for z in (-2.0, math.log(max(all_pass, 0.05) / max(1 - all_pass, 0.05)))])

    def _loglik(self, groups: Groups, multiplicity: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        c, n, _ = groups

        def loglik(theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
            a, b = _beta_shape(theta)
            if self.always:
                z = theta[:, 2:3]
                terms = _log_always_beta(c, n, -np.logaddexp(0, -z), -np.logaddexp(0, z), a, b)
            else:
                terms = _log_beta_binomial(c, n, a, b)
            return (multiplicity[rows] * terms).sum(axis=1)  # type: ignore[no-any-return]

        return loglik

    def fit(self, groups: Groups, multiplicity: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = self.n_params
        return _maximise_rows(self._loglik(groups, multiplicity), start, BETA_LOWER[:d], BETA_UPPER[:d])

    def model(self, params: np.ndarray) -> BetaModel | AlwaysBeta:
        a, b = (x.item() for x in _beta_shape(params[None, :2]))
        return AlwaysBeta(float(expit(params[2])), a, b) if self.always else BetaModel(a, b)


def families(min_trials: int) -> list[Family]:
    """The candidate shapes that min_trials per scenario can identify (free parameters <= n)."""
    shapes: list[Family] = [
        AtomFamily(1),
        BetaFamily(),
        AtomFamily(2, always=True),
        AtomFamily(2),
        BetaFamily(always=True),
        AtomFamily(3, always=True),
        AtomFamily(3),
    ]
    return [f for f in shapes if f.n_params <= min_trials]


@dataclasses.dataclass(frozen=True)
class Candidate:
    name: str
    n_params: int
    loglik: float
    aic: float
    pass_hat_k: dict[int, float]  # at EXTRAPOLATE_KS

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()}}


@dataclasses.dataclass(frozen=True)
class _Fit:
    family: Family
    params: np.ndarray
    model: SuccessModel
    candidate: Candidate


def _aic(loglik: Any, n_params: int) -> Any:
    return -2 * loglik + 2 * n_params


def _fit_all(groups: Groups) -> list[_Fit]:
    """Every identifiable candidate, each from a few starts (best kept)."""
    fits = []
    for family in families(int(groups[1].min())):
        starts = family.starts(groups)
        params, loglik = family.fit(groups, np.tile(groups[2], (len(starts), 1)), starts)
        best = int(np.argmax(loglik))
        model = family.model(params[best])
        ks = {k: float(model.pass_hat(k)) for k in EXTRAPOLATE_KS}
        candidate = Candidate(family.name, family.n_params, float(loglik[best]), float(_aic(loglik[best], family.n_params)), ks)
        fits.append(_Fit(family, params[best], model, candidate))
    return fits


def select_model(groups: Groups) -> tuple[SuccessModel, list[Candidate]]:
    """Fit every candidate and keep the lowest AIC; ties go to the simpler (earlier) candidate."""
    fits = _fit_all(groups)
    best = min(fits, key=lambda f: f.candidate.aic)
    return best.model, [f.candidate for f in fits]


# --- extrapolation --------------------------------------------------------------------------------


def bootstrap_pass_hat(
    fits: Sequence[_Fit], groups: Groups, ks: Sequence[int], reps: int, seed: int, reselect: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(reps × len(ks) pass^k, reps index of the candidate used): every candidate refitted to every
    scenario resample (warm-started at its fit), each resample's lowest AIC kept. reselect=False holds
    the original choice instead (the old intervals, kept for bench/extrapolation_coverage.py)."""
    draws = resample_multiplicities(groups[2], reps, seed).astype(float)
    best = min(range(len(fits)), key=lambda i: fits[i].candidate.aic)
    used = range(len(fits)) if reselect else [best]
    refits = {i: fits[i].family.fit(groups, draws, np.tile(fits[i].params, (reps, 1))) for i in used}
    aic = np.array([_aic(refits[i][1], fits[i].family.n_params) for i in used])
    chosen = np.asarray(used)[aic.argmin(axis=0)]
    k = np.asarray(ks, dtype=float)
    values = np.array([fits[i].family.model(refits[i][0][r]).pass_hat(k) for r, i in enumerate(chosen)])
    return values, chosen


@dataclasses.dataclass(frozen=True)
class Extrapolation:
    """pass^k predicted by the chosen model, with bootstrap intervals, how it fits for k <= n, and the
    k at which it is withheld (with why)."""

    model: SuccessModel
    candidates: list[Candidate]
    curve: dict[int, tuple[float, float, float]]  # k -> (value, lo, hi) on CURVE_KS
    fit_vs_exact: dict[int, tuple[float, float]]  # k <= n -> (model, exact)
    agrees: dict[int, bool]  # k <= n -> the exact pass^k is as close to the model's as chance allows
    withheld: dict[int, str]  # k -> why pass^k is not predicted
    chosen_share: dict[str, float]  # how often each candidate won a bootstrap resample

    @property
    def max_gap(self) -> float:
        """Largest |model - exact| over k <= n: how far the fit is from what was measured."""
        return max((abs(a - b) for a, b in self.fit_vs_exact.values()), default=0.0)

    def predicted(self, k: int) -> bool:
        return k not in self.withheld

    def credible_limit(self) -> tuple[float | None, str]:
        """(the largest k on the curve below the first withheld one, or None when none is withheld; its reason).
        A k between two curve points is not checked, so only the shown points vouch for it."""
        if not self.withheld:
            return None, ""
        first = min(self.withheld)
        return float(max((k for k in self.curve if k < first), default=0)), self.withheld[first]

    def to_json(self) -> dict[str, Any]:
        shown = [k for k in EXTRAPOLATE_KS if self.predicted(k)]
        return {
            "model": self.model.name,
            "params": self.model.to_json(),
            "pass_hat_k": {str(k): self.curve[k][0] if k in shown else None for k in EXTRAPOLATE_KS},
            "ci": {str(k): list(self.curve[k][1:]) if k in shown else None for k in EXTRAPOLATE_KS},
            "not_predicted": {str(k): self.withheld[k] for k in EXTRAPOLATE_KS if k in self.withheld},
            "curve": {str(k): list(v) for k, v in self.curve.items() if self.predicted(k)},
            "fit_vs_exact": {str(k): {"model": m, "exact": e} for k, (m, e) in self.fit_vs_exact.items()},
            "agrees": {str(k): v for k, v in self.agrees.items()},
            "max_gap": self.max_gap,
            "candidates": [c.to_json() for c in self.candidates],
            "chosen_in_resamples": self.chosen_share,
            "assumptions": list(ASSUMPTIONS),
        }


def _exact_error(model: SuccessModel, groups: Groups, k_max: int) -> np.ndarray:
    """Standard error of the exact estimator's pass^1..k_max over these scenarios if the model were true
    (its mean is then the model's pass^k: the estimator is unbiased); from each n's distribution of c."""
    c, n, m = groups
    variance = np.zeros(k_max)
    for trials in np.unique(n).astype(int):
        cells = np.arange(trials + 1)
        log_comb = gammaln(trials + 1) - gammaln(cells + 1) - gammaln(trials - cells + 1)
        prob = np.exp(model.log_prob(cells, np.full(trials + 1, trials)) + log_comb)
        ratios = scenario_pass_hat(cells.tolist(), [trials] * (trials + 1), k_max)
        variance += m[n == trials].sum() * (prob @ ratios**2 - (prob @ ratios) ** 2)
    return np.sqrt(np.maximum(variance, 0.0)) / m.sum()  # type: ignore[no-any-return]


def _agreement(model: SuccessModel, groups: Groups, exact: Mapping[int, float]) -> dict[int, bool]:
    """k <= n -> whether the exact pass^k is as close to the model's as chance allows, at a simultaneous
    95% level over the k given (Bonferroni)."""
    if not exact:
        return {}
    error = _exact_error(model, groups, max(exact))
    z = z_value(1 - (1 - LEVEL) / len(exact))
    return {k: bool(abs(e - float(model.pass_hat(k))) <= z * error[k - 1] + SHOWN) for k, e in exact.items()}


def _misfit(model: SuccessModel, exact: Mapping[int, float], agrees: Mapping[int, bool]) -> str | None:
    """Why the model is no basis beyond n, if its pass^k misses what was measured for some k <= n."""
    missed = [k for k, ok in sorted(agrees.items()) if not ok]
    if not missed:
        return None
    k = missed[0]
    return (
        f"the best-fitting model ({model.name}) does not reproduce what was measured: its pass^{k} is "
        f"{float(model.pass_hat(k)):.3f} against the exact {exact[k]:.3f}, further apart than chance explains"
    )


def _disagreement(k: int, interval: Interval, plausible: Sequence[_Fit]) -> str | None:
    """Why pass^k is not predicted, if a candidate that fits about as well predicts it outside the interval."""
    values = sorted((float(f.model.pass_hat(k)), f.candidate.name) for f in plausible)
    if all(interval[0] - SHOWN <= v <= interval[1] + SHOWN for v, _ in values):
        return None
    each = ", ".join(f"{name} {v:.3f}" for v, name in values)
    return (
        f"models that fit the data about as well (AIC within {PLAUSIBLE_AIC:g} of the best) predict pass^{k} "
        f"from {values[0][0]:.3f} to {values[-1][0]:.3f} ({each}), and the trials cannot tell which is right"
    )


def unseen_tail_floor(groups: Groups, ks: Sequence[int], level: float = LEVEL) -> np.ndarray:
    """The lowest pass^k (k > n; 1 at k <= n, and when no scenario passed all its trials: no floor) that
    the scenarios which passed all their trials cannot rule out, counting every other scenario as 0.

    If the S_A scenarios that never failed had rates p_i, the chance that all passed n_i >= n trials is at
    most prod p_i^n, so rates with prod p_i^n < alpha (alpha = (1 - level) / 2, one-sided) are ruled out at
    that level. Among the rest, by the AM-GM inequality mean p_i^k >= (prod p_i^n)^(k / (n S_A)) >=
    alpha^(k / (n S_A)), equality when all p_i are equal. That is a pooled Clopper-Pearson lower bound
    raised to k: a run of 47 scenarios x 8 trials, all passed, cannot rule out pass^1000 ~ 0.00005.
    When every scenario passed it bounds pass^k itself; when some failed, which scenarios never failed
    is itself chance, so the floor only widens the interval (the lower end never rises because of it)."""
    c, n, m = groups
    k = np.asarray(ks, dtype=float)
    passed = float(m[c == n].sum())
    if not passed:
        return np.ones_like(k)  # no scenario can hide a tail behind its passes
    share = passed / float(m.sum())
    alpha = (1 - level) / 2
    return np.where(k > n.min(), share * alpha ** (k / (n.min() * passed)), 1.0)


def moment_bounds(groups: Groups, ks: Sequence[int], reps: int = REPS // 4, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """(floor, ceiling): the lowest and highest pass^k (k > n) that any spread of rates matching the measured
    pass^(n-1) and pass^n allows, at one-sided 97.5% levels; at k <= n (measured) floor 1 and ceiling 0, no
    bound. What a model's interval cannot see when every candidate is wrong the same way: with 4 trials,
    scenarios at p = 0.975 pass 4 of 4 nine times in ten and look like "always".

    Over rates on [0, 1] with those two moments, E[p^k] is smallest for mass at 0 and at q = pass^n /
    pass^(n-1) (log E[p^j] is convex in j: pass^k >= pass^n q^(k - n)) and largest for mass at q' and at 1,
    a share w that never fails (Chebyshev-Markov-Krein: the two principal representations). The moments are
    the exact estimator's, drawn by the same Bayesian bootstrap as the run's intervals (half a pseudo-scenario
    at 0 and at 1, so a run where no scenario passed all n still gets a ceiling: Jeffreys' bound on a share)."""
    c, n, m = groups
    n_min = int(n.min())
    k = np.asarray(ks, dtype=float)
    each = m.astype(int)
    rows = scenario_pass_hat(np.repeat(c, each).astype(int).tolist(), np.repeat(n, each).astype(int).tolist(), n_min)
    draws = bayesian_bootstrap_means(np.hstack([np.ones((len(rows), 1)), rows])[:, -2:], reps, seed)  # pass^0 = 1
    before, last = draws[:, :1], draws[:, 1:]
    beyond = np.maximum(k - n_min, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lowest = last * np.where(before > 0, last / before, 0.0) ** beyond
    share, rate = _upper_representation(before, last, n_min)
    # a draw outside the moments any spread can have (below one point mass's) has only that point mass's
    highest = np.where(np.isnan(share), lowest, share + (1 - share) * rate ** np.maximum(k, n_min))
    floor = np.where(k > n_min, np.quantile(lowest, (1 - LEVEL) / 2, axis=0), 1.0)
    return floor, np.where(k > n_min, np.quantile(highest, (1 + LEVEL) / 2, axis=0), 0.0)


def _upper_representation(before: np.ndarray, last: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(w, q): the share at 1 and the rate of the rest with E[p^(n-1)] = before and E[p^n] = last. From
    before - last = (1 - w) q^(n-1) (1 - q) and 1 - before = (1 - w)(1 - q^(n-1)): q^(n-1) / (1 + q + ... +
    q^(n-2)) = (before - last) / (1 - before), increasing in q, solved by bisection. NaN where no w >= 0 fits:
    the moments lie below those of a point mass (last < before^(n / (n-1))), which only sampling noise gives."""
    target = (before - last) / np.maximum(1 - before, 1e-300)
    lo, hi = np.zeros_like(target), np.ones_like(target)
    for _ in range(BISECTIONS):
        q = (lo + hi) / 2
        low = q ** (n - 1) * (1 - q) < target * (1 - q ** (n - 1))  # g(q) < target, without dividing by 1 - q
        lo, hi = np.where(low, q, lo), np.where(low, hi, q)
    q = (lo + hi) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        share = 1 - (1 - before) / (1 - q ** (n - 1))
    fits = np.isfinite(share) & (share >= 0) & (n > 1)
    return np.where(fits, share, np.nan), q


def extrapolate(
    counts: Sequence[tuple[int, int]], exact: Mapping[int, float], reps: int = REPS // 4, seed: int = SEED, reselect: bool = True
) -> Extrapolation:
    """Choose a model for the scenarios' (c, n) and predict pass^k on CURVE_KS with 95% intervals,
    withholding the k where no model is credible (see the module docstring).

    exact holds the exact estimator's pass^k for k <= n: where the model departs from it by more than
    chance explains, nothing beyond n is predicted.
    """
    groups = group_counts(counts)
    fits = _fit_all(groups)
    best = min(fits, key=lambda f: f.candidate.aic)
    values = best.model.pass_hat(CURVE_KS)
    draws, chosen = bootstrap_pass_hat(fits, groups, CURVE_KS, reps, seed, reselect)
    bounds = percentile(draws)
    floor = unseen_tail_floor(groups, CURVE_KS)
    modelled = {  # the models' own interval, with the tail the never-failed scenarios may hide
        k: (float(v), min(lo, float(v), float(f)), max(hi, float(v)))
        for k, v, (lo, hi), f in zip(CURVE_KS, values, bounds, floor, strict=True)
    }
    agrees = _agreement(best.model, groups, exact)
    plausible = [f for f in fits if f.candidate.aic - best.candidate.aic <= PLAUSIBLE_AIC]
    n = int(groups[1].min())
    withheld: dict[int, str] = {}
    misfit, earlier = _misfit(best.model, exact, agrees), None
    for k in CURVE_KS:
        reason = misfit or (_disagreement(k, modelled[k][1:], plausible) if k > n else None) or earlier
        if reason:
            withheld[k] = earlier = reason
    # Judged on the models' interval (do equally good models agree?), shown with what no model can rule out.
    lowest, highest = moment_bounds(groups, CURVE_KS, reps, seed)
    curve = {
        k: (v, min(lo, float(bottom)), max(hi, float(top)))
        for (k, (v, lo, hi)), bottom, top in zip(modelled.items(), lowest, highest, strict=True)
    }
    shares = np.bincount(chosen, minlength=len(fits)) / len(chosen)
    return Extrapolation(
        model=best.model,
        candidates=[f.candidate for f in fits],
        curve=curve,
        fit_vs_exact={k: (float(best.model.pass_hat(k)), e) for k, e in exact.items()},
        agrees=agrees,
        withheld=withheld,
        chosen_share={f.candidate.name: float(s) for f, s in zip(fits, shares, strict=True)},
    )
