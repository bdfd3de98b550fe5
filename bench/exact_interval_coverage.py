"""Coverage of the exact pass^k and pass@k intervals (k <= n) on simulated runs whose truth is known.

The grid of issue 25: for each truth, scenario count S and trials n, `--reps` seeded runs are drawn and
`run_intervals` (what `passhat report` prints) is compared with the true pass^k = E[p^k] and pass@k =
1 - E[(1 - p)^k] at k = 1, n/2 and n. Printed per cell (truth, S, n, figure, k): coverage of the 95% interval
(the target is 95 ± 2%; a cell's Monte Carlo error is about sqrt(0.95 · 0.05 / reps), ±1.3 points at 300
reps), the share of zero-width intervals (the percentile bootstrap's failure at 0 and 1, e.g. pass^8 [0, 0]
when no scenario passed 8 of 8) and the mean width. The last lines pool the cells.
Run with `nice -n 10 .venv/bin/python bench/exact_interval_coverage.py --reps 300`; `--only`, `--scenarios`
and `--trials` run part of the grid, and `--reps-easy` gives fewer runs to the cells outside `--only`.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np

from passhat.metrics.extrapolate import BetaModel, Mixture
from passhat.metrics.intervals import run_intervals
from passhat.metrics.simulate import Blend, Truth, simulate_counts

TRUTHS: dict[str, Truth] = {  # the truths of bench/extrapolation_coverage.py, the same names
    "beta mixture 0.6 B(40,1), 0.25 B(6,3), 0.15 B(0.5,8)": Blend(
        (0.6, 0.25, 0.15), (BetaModel(40.0, 1.0), BetaModel(6.0, 3.0), BetaModel(0.5, 8.0))
    ),
    "tau-like: 0.15 at 1, 0.45 B(2,2), 0.40 B(0.3,3)": Blend(
        (0.15, 0.45, 0.40), (Mixture((1.0,), (1.0,)), BetaModel(2.0, 2.0), BetaModel(0.3, 3.0))
    ),
    "Beta(20, 1)": BetaModel(20.0, 1.0),
    "half p=1, half p=0.8": Mixture((0.5, 0.5), (1.0, 0.8)),
    "507 mixture: 0.31 at 1, 0.60 at 0.58, 0.09 at 0": Mixture((0.31, 0.60, 0.09), (1.0, 0.58, 0.0)),
    "Beta(2, 2)": BetaModel(2.0, 2.0),
    "point 0.6": Mixture((1.0,), (0.6,)),
}
FIGURES = ("pass^k", "pass@k")


def mirrored(truth: Truth) -> Truth:
    """The distribution of 1 - p: its E[(1 - p)^k] gives pass@k = 1 - E[(1 - p)^k] exactly, even at 0.99993."""
    if isinstance(truth, Mixture):
        return Mixture(truth.weights, tuple(1.0 - r for r in truth.rates))
    if isinstance(truth, BetaModel):
        return BetaModel(truth.b, truth.a)
    if isinstance(truth, Blend):
        return Blend(truth.weights, tuple(mirrored(part) for part in truth.parts))  # type: ignore[misc]
    raise TypeError(f"no mirror for {truth!r}")


def true_values(truth: Truth, ks: list[int]) -> dict[tuple[str, int], float]:
    return {("pass^k", k): float(truth.pass_hat(k)) for k in ks} | {
        ("pass@k", k): 1.0 - float(mirrored(truth).pass_hat(k)) for k in ks
    }


def cell(truth: Truth, scenarios: int, trials: int, reps: int, seed: int) -> dict[tuple[str, int], np.ndarray]:
    """Per (figure, k): reps × [covered, zero-width, width] for one (truth, S, n)."""
    truths = true_values(truth, sorted({1, trials // 2, trials}))
    rows: dict[tuple[str, int], list[list[float]]] = {key: [] for key in truths}
    for rep in range(reps):
        counts = simulate_counts(truth, scenarios, trials, np.random.default_rng([seed, scenarios, trials, rep]))
        ci = run_intervals(counts, seed=rep)
        for (figure, k), true in truths.items():
            lo, hi = (ci.pass_hat_k if figure == "pass^k" else ci.pass_at_k)[k]
            rows[figure, k].append([lo <= true <= hi, hi - lo < 1e-12, hi - lo])
    return {key: np.array(value) for key, value in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="simulated runs per cell (default 300)")
    parser.add_argument("--reps-easy", type=int, default=0, help="runs per cell outside --only (default: none)")
    parser.add_argument("--scenarios", type=int, nargs="+", default=[47, 235, 500])
    parser.add_argument("--trials", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--only", default="", help="run only the truths whose name contains this")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    print(f"seed {opts.seed}, load {os.getloadavg()[0]:.1f}\n")
    print(
        f"{'truth':30s} {'S':>4s} {'n':>2s} {'figure':6s} {'k':>2s} {'true':>7s} {'runs':>4s} {'cover':>6s} {'zero-w':>6s} {'width':>6s}"
    )
    start, pooled = time.perf_counter(), []
    for name, scenarios, trials in itertools.product(TRUTHS, opts.scenarios, opts.trials):
        reps = opts.reps if opts.only in name else opts.reps_easy
        if not reps:
            continue
        truths = true_values(TRUTHS[name], sorted({1, trials // 2, trials}))
        for (figure, k), runs in cell(TRUTHS[name], scenarios, trials, reps, opts.seed).items():
            cover, flat, width = runs.mean(axis=0)
            pooled.append((cover, reps))
            print(
                f"{name[:30]:30s} {scenarios:4d} {trials:2d} {figure:6s} {k:2d} {truths[figure, k]:7.5f} {reps:4d} "
                f"{cover:6.1%} {flat:6.1%} {width:6.3f}",
                flush=True,
            )
    covers = np.array([c for c, _ in pooled])
    weights = np.array([r for _, r in pooled])
    print(
        f"\n{len(pooled)} cells: pooled {np.average(covers, weights=weights):.1%}, {np.sum(covers < 0.93)} below 93%, "
        f"{np.sum(covers > 0.97)} above 97%, lowest {covers.min():.1%}; "
        f"{time.perf_counter() - start:.0f} s wall, load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
