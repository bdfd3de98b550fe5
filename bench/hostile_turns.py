"""Wall time, peak memory and store size of a run against an agent whose answers carry hundreds of
megabyte tool calls, with passhat's turn bounds (the defaults) and without them (bounds set out of reach).

    .venv/bin/python bench/hostile_turns.py                       # both, 20 trials each
    .venv/bin/python bench/hostile_turns.py --calls 300            # a workload the unbounded run can still store

Each mode runs in its own process (so peak RSS is its own): trials of retail-001 one after another,
each stored in a results store as a run stores it. The agent answers its first ``--answers`` turns
with ``--calls`` calls of get_order whose arguments are ``--argument-bytes`` of JSON text, as a model
would write them, then says goodbye. Without bounds every call runs and is stored; get_order's
not-found message repeats the id, so each call stores about twice its arguments, and a trial of 500
megabyte calls is over SQLite's 1 GB limit on one value: the unbounded run fails on its first trial
(reported, with its figures so far; a real run goes on running trials it cannot store).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from passhat.agents.base import AgentTurn, ToolCall
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, TurnBounds, run_trial
from passhat.store import ResultStore, TrialRecord
from passhat.trajectory import Event

OUT_OF_REACH = TurnBounds(10**12, 10**12, 10**12)  # bounds no answer meets: the harness as it was before it had them


class Hostile:
    def __init__(self, calls: int, argument_bytes: int, answers: int):
        arguments = json.dumps({"order_id": "#R" + "7" * max(0, argument_bytes - 17)})
        self._burst = AgentTurn("Let me check that.", tuple(ToolCall(f"c{i}", "get_order", arguments) for i in range(calls)))
        self._left = answers

    async def act(self, events: list[Event]) -> AgentTurn:
        self._left -= 1
        return self._burst if self._left >= 0 else AgentTurn("I am sorry, I cannot help with that. Goodbye.")


def measure(bounds: TurnBounds, trials: int, calls: int, argument_bytes: int, answers: int) -> dict[str, object]:
    """Trials of retail-001 one after another, each stored as the runner stores it; stops at the first
    trial that cannot be run or stored. Its wall time, this process's peak RSS and the store's size."""
    domain, persona = load_domain("retail"), PERSONAS["baseline"]
    task = domain.tasks["retail-001"]
    customer = resolve_user("scripted")
    judged, failure = 0, None
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        with ResultStore.create(Path(folder) / "run", "run", {}) as store:
            for i in range(trials):
                spec = TrialSpec(task, persona, i, trial_seed(0, task.id, persona.name, i))
                try:
                    out = asyncio.run(
                        run_trial(
                            domain, spec, lambda _: Hostile(calls, argument_bytes, answers), customer, max_turns=3, bounds=bounds
                        )
                    )
                    store.record(
                        TrialRecord(
                            task.id,
                            persona.name,
                            i,
                            spec.seed,
                            out.grade.reward,
                            out.grade.signature,
                            None,
                            [e.to_dict() for e in out.events],
                            out.grade.to_dict(),
                            0.0,
                            0.0,
                        )
                    )
                except (sqlite3.Error, MemoryError) as exc:  # a trial too big to store or to hold: a figure too
                    failure = f"trial {i}: {type(exc).__name__}: {exc}"
                    break
                judged += 1
        wall = time.perf_counter() - started
        stored = sum(f.stat().st_size for f in (Path(folder) / "run").rglob("*") if f.is_file())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {
        "trials": trials,
        "judged": judged,
        "wall_s": wall,
        "peak_rss_mb": peak,
        "store_mb": stored / 2**20,
        "failure": failure,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20, help="trials of the bounded run")
    parser.add_argument("--unbounded-trials", type=int, default=20, help="trials of the run without bounds")
    parser.add_argument("--calls", type=int, default=500, help="tool calls per hostile answer")
    parser.add_argument("--argument-bytes", type=int, default=1_000_000, help="JSON bytes of each call's arguments")
    parser.add_argument("--answers", type=int, default=1, help="hostile answers per trial")
    parser.add_argument("--mode", choices=["bounded", "unbounded"], help=argparse.SUPPRESS)  # a child's one run
    args = parser.parse_args()
    workload = (args.calls, args.argument_bytes, args.answers)
    if args.mode:
        trials = args.trials if args.mode == "bounded" else args.unbounded_trials
        print(json.dumps(measure(TurnBounds() if args.mode == "bounded" else OUT_OF_REACH, trials, *workload)))
        return
    print(f"agent: {args.answers} answer(s) a trial of {args.calls} calls x {args.argument_bytes:,} bytes of arguments")
    print(f"{'mode':<10} {'trials':>6} {'judged':>6} {'wall s':>8} {'s/judged':>8} {'peak RSS MB':>12} {'store MB':>9}")
    for mode in ("bounded", "unbounded"):
        child = subprocess.run(
            [sys.executable, __file__, "--mode", mode, *sys.argv[1:]], capture_output=True, text=True, check=True
        )
        r = json.loads(child.stdout.strip().splitlines()[-1])
        print(
            f"{mode:<10} {r['trials']:>6} {r['judged']:>6} {r['wall_s']:>8.1f} {r['wall_s'] / max(1, r['judged']):>8.2f} "
            f"{r['peak_rss_mb']:>12.0f} {r['store_mb']:>9.1f}" + (f"  run failed: {r['failure']}" if r["failure"] else "")
        )


if __name__ == "__main__":
    main()
