"""CPU time of one `extrapolate` call (the fit beyond n that every report, traffic view and dashboard page pays).

Reads a stored run's (successes, judged trials) per scenario — by default it first makes one: the default
offline evaluation (`passhat run`, 260 scenarios × 8 trials) in a temporary folder — and times `extrapolate`
on them as `passhat report` calls it, `--calls` times, printing each call's CPU seconds and the median.
Run with `.venv/bin/python bench/extrapolate_speed.py [--run-dir runs/RUN_ID]`.
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
        return list(scenario_counts(t.to_outcome() for t in store.trial_rows()).values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, help="a stored run's folder (default: make the default run)")
    parser.add_argument("--calls", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        counts = counts_of(opts.run_dir or default_run(Path(tmp)))
    exact = pass_hat_curve([c for c, _ in counts], [n for _, n in counts])
    seconds = []
    for _ in range(opts.calls):
        start = time.process_time()
        extrapolate(counts, exact)
        seconds.append(time.process_time() - start)
    print(
        f"{len(counts)} scenarios, load {os.getloadavg()[0]:.1f}: extrapolate CPU s per call",
        " ".join(f"{s:.3f}" for s in seconds),
    )
    print(f"median {statistics.median(seconds):.3f} s")


if __name__ == "__main__":
    main()
