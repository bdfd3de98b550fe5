"""Coverage of the exact pass^k and pass@k intervals (k <= n) on simulated runs whose truth is known.

For each truth, scenario count S and trials n, `--reps` seeded runs are drawn and `run_intervals` (what
`passhat report` prints) is compared with the true pass^k = E[p^k] and pass@k = 1 - E[(1 - p)^k] at
k = 1, n/2 and n. Printed per cell: coverage of the 95% interval and the share of zero-width intervals
(the percentile bootstrap's failure at 0 and 1, e.g. pass^8 [0, 0] when no scenario passed 8 of 8).
Run with `.venv/bin/python bench/exact_interval_coverage.py --reps 300`.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from passhat.metrics.extrapolate import BetaModel, Mixture
from passhat.metrics.intervals import run_intervals
from passhat.metrics.simulate import Truth, draw_rates, simulate_counts

TRUTHS: dict[str, Truth] = {
    "point 0.6": Mixture((1.0,), (0.6,)),
    "Beta(2, 2)": BetaModel(2.0, 2.0),
    "Beta(20, 1)": BetaModel(20.0, 1.0),
}
SCENARIOS = (47, 235, 500)
TRIALS = (4, 8)


def true_pass_at(truth: Truth, k: int) -> float:
    """1 - E[(1 - p)^k], by a large seeded draw of p (no closed form is needed for a bench)."""
    rates = draw_rates(truth, 1_000_000, np.random.default_rng(12345))
    return float(1 - np.mean((1 - rates) ** k))


def cell(truth: Truth, scenarios: int, trials: int, opts: argparse.Namespace) -> list[str]:
    """Table lines for one (truth, S, n): one per k and figure."""
    ks = sorted({1, trials // 2, trials})
    truths = {("pass^k", k): float(truth.pass_hat(k)) for k in ks} | {("pass@k", k): true_pass_at(truth, k) for k in ks}
    covered = dict.fromkeys(truths, 0)
    flat = dict.fromkeys(truths, 0)
    for rep in range(opts.reps):
        counts = simulate_counts(truth, scenarios, trials, np.random.default_rng([opts.seed, scenarios, trials, rep]))
        ci = run_intervals(counts, reps=opts.resamples, seed=rep)
        for figure, k in truths:
            lo, hi = (ci.pass_hat_k if figure == "pass^k" else ci.pass_at_k)[k]
            covered[figure, k] += lo <= truths[figure, k] <= hi
            flat[figure, k] += hi - lo < 1e-12
    return [
        f"{figure} k={k:<2d} true {value:.4f}  cover {covered[figure, k] / opts.reps:6.1%}  zero-width {flat[figure, k] / opts.reps:6.1%}"
        for (figure, k), value in truths.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="simulated runs per cell (default 300)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap draws per interval")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    for (name, truth), scenarios, trials in itertools.product(TRUTHS.items(), SCENARIOS, TRIALS):
        for line in cell(truth, scenarios, trials, opts):
            print(f"{name:12s} S={scenarios:<4d} n={trials}  {line}", flush=True)


if __name__ == "__main__":
    main()
