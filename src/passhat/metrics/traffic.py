"""The traffic view: what a run's reliability means at a given number of conversations a day.

For each task, each of its scenarios (one per persona) gets the posterior of its success
probability p under the run's fitted success distribution (empirical Bayes: the fitted
distribution is the prior, the scenario's own c of n updates it). A day of N conversations of
a task is split evenly over its personas; the chance that all x conversations of one scenario
succeed is E[p^x] under its posterior — pass^x again, now with x the day's traffic.

When the lowest-AIC model (the one `report` extrapolates with) is a single component (one p for every scenario), the posterior is that
prior whatever a scenario's own trials say, so every task gets the same model figures. Each task's
own record is therefore shown too: its c of n over its personas, and the mean and 95% interval of
Beta(1 + c, 1 + n - c) (a uniform prior updated by that task's trials alone), so a task that failed
stands out whichever model was chosen.

A clean day is pass^x with x the day's conversations of a scenario, usually far beyond the run's n, so it
takes `report`'s verdict on extrapolation (a Credibility): where the report does not predict pass^x, the
clean-day figures are None and the view carries the report's reason. Where shown, a clean day carries an
interval of what the scenarios' own trials cannot rule out, whatever the model (`clean_bounds`): the point
figure leans on the fitted model, which n trials cannot tell from one whose "always" scenarios fail once in
a hundred, so the lower end falls as x grows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from scipy.stats import beta

from passhat.metrics import extrapolate as fitting
from passhat.metrics.estimators import pass_hat_curve
from passhat.metrics.extrapolate import Mixture, SuccessModel
from passhat.metrics.intervals import LEVEL, Interval, wilson
from passhat.metrics.summary import Scenario


@dataclasses.dataclass(frozen=True)
class Credibility:
    """How far beyond n `report` predicts pass^k: every k up to limit (None: every k), and why not beyond."""

    limit: float | None = None
    reason: str = ""

    def covers(self, x: float) -> bool:
        return self.limit is None or x <= self.limit


EVERY_K = Credibility()  # no k withheld (a view that is not read against a report)


@dataclasses.dataclass(frozen=True)
class TaskTraffic:
    """One task at per_day conversations a day.

    success: expected per-attempt success; expected_failures: failed conversations a day;
    clean_day / clean_days: chance of no failure in a day / in `days` days (None where the report does
    not predict pass^x that far), each with its interval (`clean_bounds`, widened to hold the figure);
    needed: the per-attempt success at which a day is failure-free with chance `target`.
    """

    task_id: str
    scenarios: int
    successes: int  # judged trials that passed, over the task's personas
    trials: int  # judged trials, over the task's personas
    own_mean: float  # mean of Beta(1 + successes, 1 + trials - successes): the task's own record
    own_ci: tuple[float, float]  # its 95% equal-tailed interval
    success: float
    expected_failures: float
    clean_day: float | None
    clean_days: float | None
    clean_day_ci: Interval | None
    clean_days_ci: Interval | None
    needed: float

    @property
    def meets_target(self) -> bool:
        return self.success >= self.needed

    def to_json(self) -> dict[str, Any]:
        cis = {f: None if (v := getattr(self, f)) is None else list(v) for f in ("own_ci", "clean_day_ci", "clean_days_ci")}
        return {**dataclasses.asdict(self), **cis, "meets_target": self.meets_target}


@dataclasses.dataclass(frozen=True)
class TrafficView:
    """pooled: the model is a single component, so no scenario's own trials move its figures."""

    per_day: float
    days: int
    target: float
    tasks: list[TaskTraffic]
    model: str = ""
    pooled: bool = False
    not_predicted: str = ""  # the report's reason, when some clean-day figure is withheld
    clean_day_ci: Interval | None = None  # of clean_day, from every scenario's own trials

    @property
    def expected_failures(self) -> float:
        """Failed conversations a day over every task, each at per_day."""
        return sum(t.expected_failures for t in self.tasks)

    @property
    def clean_day(self) -> float | None:
        """Chance that no task fails in a day (tasks are independent given their probabilities); None when
        some task's is not predicted."""
        days = [t.clean_day for t in self.tasks]
        return None if None in days else math.prod(d for d in days if d is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "per_day": self.per_day,
            "days": self.days,
            "target": self.target,
            "model": self.model,
            "pooled": self.pooled,
            "not_predicted": self.not_predicted or None,
            "expected_failures": self.expected_failures,
            "clean_day": self.clean_day,
            "clean_day_ci": None if self.clean_day_ci is None else list(self.clean_day_ci),
            "tasks": [t.to_json() for t in self.tasks],
        }


def traffic_model(counts: Sequence[tuple[int, int]]) -> tuple[SuccessModel, Credibility]:
    """The model `report` extrapolates with and its verdict on how far beyond n pass^k is predicted: the
    traffic view rests on both, so that it never prints a clean day the report withholds."""
    fit = fitting.extrapolate(counts, pass_hat_curve([c for c, _ in counts], [n for _, n in counts]))
    return fit.model, Credibility(*fit.credible_limit())


def needed_success(per_day: float, target: float) -> float:
    """The per-attempt success p with p^per_day = target: below it, a clean day is rarer than target."""
    return target ** (1.0 / per_day)


def traffic(
    counts: Mapping[Scenario, tuple[int, int]],
    model: SuccessModel,
    per_day: float,
    days: int = 1,
    target: float = 0.9,
    credible: Credibility = EVERY_K,
) -> TrafficView:
    """The traffic view of every task in counts, given the run's fitted success distribution and how far
    the report predicts beyond n."""
    if not (math.isfinite(per_day) and per_day > 0) or days < 1 or not 0 < target < 1:
        raise ValueError("traffic needs a finite per_day > 0, days >= 1 and 0 < target < 1")
    by_task: dict[str, list[tuple[int, int]]] = {}
    for (task, _), cn in counts.items():
        by_task.setdefault(task, []).append(cn)
    pooled = isinstance(model, Mixture) and len(model.weights) == 1
    tasks = [_task(t, cns, model, per_day, days, target, credible) for t, cns in sorted(by_task.items())]
    withheld = any(t.clean_days is None for t in tasks)
    view = TrafficView(per_day, days, target, tasks, model.name, pooled, credible.reason if withheld else "")
    if view.clean_day is None:
        return view
    # every scenario meets per_day / (its task's personas) conversations a day
    attempts = [per_day / len(cns) for cns in by_task.values() for _ in cns]
    bounds = clean_bounds([cn for cns in by_task.values() for cn in cns], attempts)
    return dataclasses.replace(view, clean_day_ci=_holding(bounds, view.clean_day))


def _task(
    task_id: str,
    counts: list[tuple[int, int]],
    model: SuccessModel,
    per_day: float,
    days: int,
    target: float,
    credible: Credibility,
) -> TaskTraffic:
    share = per_day / len(counts)  # conversations a day per persona
    posteriors = [model.posterior(c, n) for c, n in counts]
    success = sum(float(p.pass_hat(1)) for p in posteriors) / len(counts)
    c, n = sum(c for c, _ in counts), sum(n for _, n in counts)
    own = beta(1 + c, 1 + n - c)
    clean_day, clean_days = _clean(posteriors, share, credible), _clean(posteriors, share * days, credible)
    return TaskTraffic(
        task_id=task_id,
        scenarios=len(counts),
        successes=c,
        trials=n,
        own_mean=float(own.mean()),
        own_ci=(float(own.ppf(0.025)), float(own.ppf(0.975))),
        success=success,
        expected_failures=per_day * (1 - success),
        clean_day=clean_day,
        clean_days=clean_days,
        clean_day_ci=None if clean_day is None else _holding(clean_bounds(counts, [share] * len(counts)), clean_day),
        clean_days_ci=None if clean_days is None else _holding(clean_bounds(counts, [share * days] * len(counts)), clean_days),
        needed=needed_success(per_day, target),
    )


def _clean(posteriors: list[SuccessModel], conversations: float, credible: Credibility) -> float | None:
    """Chance that every scenario's `conversations` attempts succeed; None beyond what the report predicts."""
    if not credible.covers(conversations):
        return None
    return math.prod(float(p.pass_hat(conversations)) for p in posteriors)


def clean_bounds(counts: Sequence[tuple[int, int]], attempts: Sequence[float], level: float = LEVEL) -> Interval:
    """The range of the chance that scenario i's attempts[i] conversations all succeed, for every i, that the
    scenarios' own trials (c of n each) cannot rule out, whatever the fitted model says.

    A scenario that failed some trial may have any p in its Wilson interval, so it contributes [lo^x, hi^x].
    The ones that never failed contribute up to 1; jointly, rates with prod p_i^(n_i) below alpha (one-sided,
    alpha = (1 - level) / 2) are ruled out, and the lowest prod p_i^x_i the rest allow puts the whole deficit on
    the scenario with the fewest trials per attempt: alpha^(max x_i / n_i) (a pooled Clopper-Pearson bound)."""
    alpha = (1 - level) / 2
    lo = hi = 1.0
    never_failed = [x / n for (c, n), x in zip(counts, attempts, strict=True) if c == n]
    for (c, n), x in zip(counts, attempts, strict=True):
        if c < n:
            low, high = wilson(c, n, level)
            lo, hi = lo * low**x, hi * high**x
    return (lo * alpha ** max(never_failed) if never_failed else lo), hi


def _holding(interval: Interval, value: float) -> Interval:
    """The interval widened to hold the point figure (the model's, which the trials' bounds need not hold)."""
    return min(interval[0], value), max(interval[1], value)
