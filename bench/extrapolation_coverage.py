"""Coverage of the extrapolated pass^k intervals on simulated runs whose truth is known.

For each truth family, `--reps` seeded runs of `--scenarios` scenarios × `--trials` trials are
drawn; each is extrapolated exactly as `passhat report` does (the model re-selected in every
bootstrap resample, the credibility verdict), and the figures at k = 20 and 100 are compared with
the true pass^k. Printed per family and k:

- predicted: share of runs that got a numeric interval (the rest were "not predicted");
- cover|pred: share of those intervals that hold the true pass^k (the target is >= 90%);
- cover|all: the same over every run, had the withheld intervals been printed;
- bias: mean of (point figure - truth) over every run; rmse: its root mean square; width: median width
  of the printed intervals.

`--hold-model` holds the model chosen on the run's data fixed inside the bootstrap (as passhat did
before re-selection, here with today's candidates), to measure what re-selection buys.
Run with `.venv/bin/python bench/extrapolation_coverage.py` (about 7 minutes on 2 cores; not part of
`make bench` for that reason).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process per core, not several threads each

import numpy as np  # noqa: E402

from passhat.metrics.estimators import pass_hat_curve  # noqa: E402
from passhat.metrics.extrapolate import AlwaysBeta, BetaModel, Mixture, extrapolate  # noqa: E402
from passhat.metrics.simulate import Blend, Truth, simulate_counts  # noqa: E402

KS = (20, 100)
FAMILIES: dict[str, Truth] = {
    "point masses 0.6@1, 0.25@0.6, 0.15@0": Mixture((0.6, 0.25, 0.15), (1.0, 0.6, 0.0)),
    "half p=1, half p=0.8": Mixture((0.5, 0.5), (1.0, 0.8)),
    "Beta(20, 1)": BetaModel(20.0, 1.0),
    "beta mixture 0.6 B(40,1), 0.25 B(6,3), 0.15 B(0.5,8)": Blend(
        (0.6, 0.25, 0.15), (BetaModel(40.0, 1.0), BetaModel(6.0, 3.0), BetaModel(0.5, 8.0))
    ),
    "0.7 at p=1, 0.3 Beta(9, 1)": AlwaysBeta(0.7, 9.0, 1.0),
    "Beta(2, 0.1)": BetaModel(2.0, 0.1),
}


def one_run(args: tuple[str, int, argparse.Namespace]) -> tuple[str, np.ndarray]:
    """(family, rows per k of [predicted, covered, error, width]) for one seeded run."""
    family, rep, opts = args
    truth = FAMILIES[family]
    counts = simulate_counts(truth, opts.scenarios, opts.trials, np.random.default_rng([opts.seed, rep]))
    exact = pass_hat_curve([c for c, _ in counts], [n for _, n in counts])
    fit = extrapolate(counts, exact, reps=opts.resamples, seed=rep, reselect=not opts.hold_model)
    rows = []
    for k in KS:
        value, lo, hi = fit.curve[k]
        true = float(truth.pass_hat(k))
        rows.append([fit.predicted(k), lo <= true <= hi, value - true, hi - lo])
    return family, np.array(rows, dtype=float)


def summarise(family: str, runs: np.ndarray) -> list[str]:
    """Lines of the table for one family; runs is reps × len(KS) × 4."""
    lines = []
    for i, k in enumerate(KS):
        predicted, covered, error, width = runs[:, i].T
        shown = predicted.astype(bool)
        cover_shown = f"{covered[shown].mean():6.1%}" if shown.any() else "     —"
        median_width = f"{np.median(width[shown]):.3f}" if shown.any() else "    —"
        lines.append(
            f"{family[:52]:52s} {k:5d} {float(FAMILIES[family].pass_hat(k)):6.3f} {predicted.mean():9.1%} "
            f"{cover_shown:>10s} {covered.mean():9.1%} {error.mean():+7.3f} {np.sqrt(np.mean(error**2)):6.3f} "
            f"{median_width:>6s}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="simulated runs per family (default 300)")
    parser.add_argument("--scenarios", type=int, default=235)
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=500, help="bootstrap resamples per run (passhat's default: 500)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--hold-model", action="store_true", help="hold the chosen model fixed in the bootstrap (the old intervals)"
    )
    parser.add_argument("--only", default="", help="run only the truths whose name contains this")
    opts = parser.parse_args()
    mode = "model held fixed in the bootstrap" if opts.hold_model else "model re-selected in every resample"
    print(
        f"{opts.reps} runs per family of {opts.scenarios} scenarios × {opts.trials} trials, {opts.resamples} resamples, "
        f"{mode}, seed {opts.seed}, {opts.workers} workers",
        flush=True,
    )
    start = time.perf_counter()
    results: dict[str, list[np.ndarray]] = {family: [] for family in FAMILIES if opts.only in family}
    tasks = [(family, rep, opts) for family in results for rep in range(opts.reps)]
    with ProcessPoolExecutor(opts.workers) as pool:
        for family, rows in pool.map(one_run, tasks, chunksize=4):
            results[family].append(rows)
            if len(results[family]) == opts.reps:
                print(f"  {family}: done after {time.perf_counter() - start:.0f} s", flush=True)
    print(
        f"\n{'truth':52s} {'k':>5s} {'true':>6s} {'predicted':>9s} {'cover|pred':>10s} {'cover|all':>9s} "
        f"{'bias':>7s} {'rmse':>6s} {'width':>6s}"
    )
    for family, runs in results.items():
        print("\n".join(summarise(family, np.stack(runs))))
    print(f"\n{time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
