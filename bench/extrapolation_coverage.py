"""Coverage of the pass^k intervals, measured and extrapolated, on simulated runs whose truth is known.

The grid of issue 25: for each truth, scenario count S and trials n, `--reps` seeded runs of S scenarios × n
trials are drawn, and each is read as `passhat report` reads it: for k <= n the exact pass^k with its
Bayesian-bootstrap interval (`run_intervals`), beyond n the fitted model with its re-selecting bootstrap,
floors and credibility verdict (`extrapolate`). Printed per cell (truth, S, n, k):

- shown: share of runs that got a numeric figure (the rest were "not predicted"; always 100% at k <= n);
- cover: share of the shown intervals that hold the true pass^k (the target is 95 ± 2%);
- cover|all: the same over every run, had the withheld intervals been printed;
- bias: mean of (point figure - truth) over every run; rmse: its root mean square; width: median width
  of the shown intervals.

`--hold-model` holds the model chosen on the run's data fixed inside the bootstrap (as passhat did
before re-selection), to measure what re-selection buys. A cell's Monte Carlo error on coverage is about
sqrt(0.95 · 0.05 / reps): ±1.3 points at 300 reps, ±2.2 at 100, ±4 at 30.
Run with `.venv/bin/python bench/extrapolation_coverage.py --reps 300` (with the fits batched and accelerated,
one simulated run costs 0.15–0.25 CPU s, so the grid is about 1 CPU hour at 300 reps; on 2 cores shared with
other work at load 4–10, under nice, its first 15 cells at `--reps 120` took 24 minutes; `--only`,
`--scenarios` and `--trials` run part of it; not part of `make bench`).
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process per core, not several threads each

import numpy as np  # noqa: E402

from passhat.metrics.estimators import pass_hat_curve  # noqa: E402
from passhat.metrics.extrapolate import BetaModel, Mixture, extrapolate  # noqa: E402
from passhat.metrics.intervals import run_intervals  # noqa: E402
from passhat.metrics.simulate import Blend, Truth, simulate_counts  # noqa: E402

KS = (1, 4, 8, 20, 100)
TRUTHS: dict[str, Truth] = {  # the truths near p = 1, where the intervals failed, first
    "beta mixture 0.6 B(40,1), 0.25 B(6,3), 0.15 B(0.5,8)": Blend(
        (0.6, 0.25, 0.15), (BetaModel(40.0, 1.0), BetaModel(6.0, 3.0), BetaModel(0.5, 8.0))
    ),
    # pass^1..4 = 0.41, 0.30, 0.25, 0.22, near tau-bench's gpt-4o airline figures (0.42, 0.27, 0.22, 0.20)
    "tau-like: 0.15 at 1, 0.45 B(2,2), 0.40 B(0.3,3)": Blend(
        (0.15, 0.45, 0.40), (Mixture((1.0,), (1.0,)), BetaModel(2.0, 2.0), BetaModel(0.3, 3.0))
    ),
    "Beta(20, 1)": BetaModel(20.0, 1.0),
    "half p=1, half p=0.8": Mixture((0.5, 0.5), (1.0, 0.8)),
    "507 mixture: 0.31 at 1, 0.60 at 0.58, 0.09 at 0": Mixture((0.31, 0.60, 0.09), (1.0, 0.58, 0.0)),
    "Beta(2, 2)": BetaModel(2.0, 2.0),
    "point 0.6": Mixture((1.0,), (0.6,)),
}
Cell = tuple[str, int, int]  # truth, scenarios, trials


def one_run(args: tuple[Cell, int, argparse.Namespace]) -> tuple[Cell, np.ndarray]:
    """(cell, rows per k of [shown, covered, error, width]) for one seeded run."""
    (name, scenarios, trials), rep, opts = args
    truth = TRUTHS[name]
    counts = simulate_counts(truth, scenarios, trials, np.random.default_rng([opts.seed, scenarios, trials, rep]))
    exact = pass_hat_curve([c for c, _ in counts], [n for _, n in counts])
    measured = run_intervals(counts, reps=opts.resamples * 4, seed=rep).pass_hat_k
    fit = extrapolate(counts, exact, reps=opts.resamples, seed=rep, reselect=not opts.hold_model)
    rows = []
    for k in KS:
        value, lo, hi = (exact[k], *measured[k]) if k <= trials else fit.curve[k]
        true = float(truth.pass_hat(k))
        rows.append([k <= trials or fit.predicted(k), lo <= true <= hi, value - true, hi - lo])
    return (name, scenarios, trials), np.array(rows, dtype=float)


def summarise(cell: Cell, runs: np.ndarray) -> list[str]:
    """Lines of the table for one cell; runs is reps × len(KS) × 4."""
    name, scenarios, trials = cell
    lines = []
    for i, k in enumerate(KS):
        shown, covered, error, width = runs[:, i].T
        seen = shown.astype(bool)
        cover = f"{covered[seen].mean():6.1%}" if seen.any() else "     —"
        median_width = f"{np.median(width[seen]):.3f}" if seen.any() else "    —"
        lines.append(
            f"{name[:30]:30s} {scenarios:4d} {trials:2d} {k:4d} {float(TRUTHS[name].pass_hat(k)):6.3f} {seen.mean():6.1%} "
            f"{cover:>7s} {covered.mean():9.1%} {error.mean():+7.3f} {np.sqrt(np.mean(error**2)):6.3f} {median_width:>6s}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="simulated runs per (truth, S, n) (default 300)")
    parser.add_argument("--scenarios", type=int, nargs="+", default=[47, 235, 500])
    parser.add_argument("--trials", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--resamples", type=int, default=500, help="bootstrap resamples per fit (passhat's default: 500)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--hold-model", action="store_true", help="hold the chosen model fixed in the bootstrap (the old intervals)"
    )
    parser.add_argument("--only", default="", help="run only the truths whose name contains this")
    opts = parser.parse_args()
    mode = "model held fixed in the bootstrap" if opts.hold_model else "model re-selected in every resample"
    print(
        f"{opts.reps} runs per cell, {opts.resamples} resamples, {mode}, seed {opts.seed}, {opts.workers} workers, "
        f"load {os.getloadavg()[0]:.1f}\n\n{'truth':30s} {'S':>4s} {'n':>2s} {'k':>4s} {'true':>6s} {'shown':>6s} "
        f"{'cover':>7s} {'cover|all':>9s} {'bias':>7s} {'rmse':>6s} {'width':>6s}",
        flush=True,
    )
    start = time.perf_counter()
    cells = [c for c in itertools.product(TRUTHS, opts.scenarios, opts.trials) if opts.only in c[0]]
    results: dict[Cell, list[np.ndarray]] = {c: [] for c in cells}
    tasks = [(c, rep, opts) for c in cells for rep in range(opts.reps)]
    with ProcessPoolExecutor(opts.workers) as pool:
        for c, rows in pool.map(one_run, tasks, chunksize=4):
            results[c].append(rows)
            if len(results[c]) == opts.reps:  # each cell as soon as it is done: a long run is read as it goes
                print("\n".join(summarise(c, np.stack(results[c]))), flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s wall, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
