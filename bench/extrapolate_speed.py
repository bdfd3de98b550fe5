"""CPU time of one `extrapolate` call (the fit beyond n that every report, traffic view and dashboard page pays).

Reads a stored run's (successes, judged trials) per scenario — by default it first makes one: the default
offline evaluation (`passhat run`, 260 scenarios × 8 trials) in a temporary folder — and times `extrapolate`
on them as `passhat report` calls it, `--calls` times, printing each call's CPU seconds, the median and the
machine's load. `--against CHECKOUT` times another checkout of passhat (its src/) on the same counts right
after, in a child process, so a before/after pair is measured at the same load.
Run with `.venv/bin/python bench/extrapolate_speed.py [--run-dir runs/RUN_ID] [--against ../passhat-main]`.

Measured with --against on 2 shared cores at load 4.5: 1.15 s per call (median of 5) before the mixture fits'
EM was accelerated (SQUAREM) and Newton's stopping rule made relative, 0.21 s after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import passhat
from passhat.metrics.estimators import pass_hat_curve
from passhat.metrics.extrapolate import extrapolate
from passhat.metrics.summary import scenario_counts
from passhat.store import ResultStore


def default_run(folder: Path) -> Path:
    """The default evaluation, stored under folder; its run folder."""
    subprocess.run([sys.executable, "-m", "passhat.cli", "run", "--out", str(folder)], check=True, stdout=subprocess.DEVNULL)
    (run,) = [p for p in folder.iterdir() if p.is_dir()]
    return run


def counts_of(run_dir: Path) -> list[tuple[int, int]]:
    with ResultStore.open(run_dir) as store:
        return list(scenario_counts(t.to_result() for t in store.trial_rows()).values())


def time_calls(run_dir: Path, calls: int) -> None:
    """Print the CPU seconds of `calls` extrapolate calls on the run's counts, with their median."""
    counts = counts_of(run_dir)
    exact = pass_hat_curve([c for c, _ in counts], [n for _, n in counts])
    seconds = []
    for _ in range(calls):
        start = time.process_time()
        extrapolate(counts, exact)
        seconds.append(time.process_time() - start)
    print(
        f"{len(counts)} scenarios, load {os.getloadavg()[0]:.1f}: extrapolate CPU s per call",
        " ".join(f"{s:.3f}" for s in seconds),
    )
    print(f"median {statistics.median(seconds):.3f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, help="a stored run's folder (default: make the default run)")
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another passhat checkout to time on the same counts (before/after)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = opts.run_dir or default_run(Path(tmp))
        print(f"passhat from {Path(passhat.__file__).resolve().parents[2]}:")
        time_calls(run_dir, opts.calls)
        if opts.against:
            env = {**os.environ, "PYTHONPATH": str(opts.against.resolve() / "src")}
            args = [sys.executable, __file__, "--run-dir", str(run_dir), "--calls", str(opts.calls)]
            subprocess.run(args, env=env, check=True)


if __name__ == "__main__":
    main()
