"""Workers and the progress bar: trials per second of a reference run with --workers 1 and 2 (and with two Ray
actors on a local Ray instance, when Ray is installed), and what the progress bar costs in CPU per wall second
(rich's own refresh thread against passhat's redraws from the run's loop). Run with `.venv/bin/python bench/workers.py [trials per scenario]`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import os
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from passhat.cli.run import REDRAWS_PER_SECOND, Throttle
from passhat.run.executors import Executor
from passhat.run.runner import execute, new_config
from passhat.store import ResultStore

STREAM_SECONDS = 3.0  # how long the progress bar is fed
STREAM_RATE = 200  # trials per second it is fed


def bench_workers(trials: int) -> None:
    """--workers 1 and 2, and --executor ray with 2 actors on a local Ray instance started beforehand (its start,
    seconds, is not the run's: a cluster is started once and serves many runs)."""
    config = new_config(domain="retail", agent="reference:flaky", user="scripted", personas="all", tasks="", trials=trials)
    rows: list[tuple[str, int, Executor]] = [("--workers 1", 1, "local"), ("--workers 2", 2, "local")]
    if importlib.util.find_spec("ray"):
        import ray

        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, logging_level="ERROR")
        rows.append(("--executor ray --workers 2", 2, "ray"))
    for label, workers, executor in rows:
        with tempfile.TemporaryDirectory() as tmp:
            store = ResultStore.create(Path(tmp) / "r", "r", config.model_dump())
            wall0, cpu0 = time.perf_counter(), time.process_time()
            ran = asyncio.run(execute(config, store, 8, workers=workers, executor=executor))
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            store.close()
        print(
            f"{label}: {ran} trials in {wall:5.1f} s = {ran / wall:6.0f} trials/s; "
            f"CPU {cpu * 1e3 / ran:.2f} ms per trial in the run's process (the writer)"
        )


def bench_progress(calm: bool) -> float:
    """CPU seconds per wall second of a bar fed STREAM_RATE trials a second (the feeding itself sleeps)."""
    out = Console(file=io.StringIO(), force_terminal=True, width=100)
    columns = [TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    total = int(STREAM_SECONDS * STREAM_RATE)
    with Progress(*columns, console=out, transient=True, auto_refresh=not calm) as progress:
        bar = progress.add_task("trials", total=total)
        redraw = Throttle(progress.refresh, 1 / REDRAWS_PER_SECOND) if calm else (lambda: None)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for _ in range(total):
            progress.update(bar, advance=1)
            redraw()
            time.sleep(1 / STREAM_RATE)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return cpu / wall


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    bench_workers(trials)
    # the sleeps' own cost is in both figures; the difference is the refresh thread's
    print(
        f"progress bar, rich auto-refresh (10/s, its own thread): {bench_progress(calm=False) * 1e3:.1f} ms CPU per wall second"
    )
    print(
        f"progress bar, redrawn from the run's loop (≤ {REDRAWS_PER_SECOND}/s): {bench_progress(calm=True) * 1e3:.1f} ms CPU per wall second"
    )


if __name__ == "__main__":
    main()
