"""Report at scale: CPU time and peak memory of `passhat report` for runs of 1,000, 10,000 and 100,000 trials.

Fills a results store per size with synthetic trials (tasks × 5 personas × 8 trials; per-scenario success
drawn from a known always / sometimes / never mixture; a short transcript, a grade and steps per trial), then runs
`passhat report RUN --json --html --junit` on it in a fresh process of its own, so that one size's peak RSS
never mixes with another's or with the filling. Prints one line per size: CPU and wall seconds of the report,
its peak RSS (getrusage(RUSAGE_SELF).ru_maxrss), the HTML's size. The report's figures on the largest run
are printed too, against the truth the trials were drawn from.
Run with `make bench` or `.venv/bin/python bench/report_scale.py [SIZE ...]`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PERSONAS, TRIALS = ("baseline", "impatient", "skeptical", "emotional", "incoherent"), 8
SIZES = (1_000, 10_000, 100_000)


def transcript(task: str, passed: bool) -> tuple[list[dict], dict]:
    events = [
        {"kind": "user", "text": f"Hi, I need help with my order for {task}. <it's urgent>"},
        {"kind": "agent", "text": "Sure. Could you tell me the email address on your account?"},
        {"kind": "user", "text": "It is someone@example.com."},
        {
            "kind": "tool",
            "call_id": "call_1",
            "name": "find_customer_by_email",
            "args": {"email": "someone@example.com"},
            "result": {"status": "ok", "data": "C-100001"},
        },
        {"kind": "agent", "text": "I can cancel order #R1000001 and refund $42.00. Shall I go ahead? Please answer yes or no."},
        {"kind": "user", "text": "Yes, please."},
        {"kind": "end", "text": "satisfied"},
    ]
    diffs = (
        []
        if passed
        else [{"table": "orders", "key": "#R1000001", "actual": {"status": "pending"}, "expected": {"status": "cancelled"}}]
    )
    return events, {"reward": int(passed), "details": {"state_differences": diffs, "missing_facts": []}}


PLAN = (  # a task's plan is its first 2-4 of these steps: (tool, whether it writes, the entity it acts on)
    ("find_customer_by_email", False, "C-100001"),
    ("get_order_details", False, "#R1000001"),
    ("cancel_pending_order", True, "#R1000001"),
    ("get_order_details", False, "#R1000001"),
)


def steps(task_number: int, trial: int, passed: bool, conversation: dict) -> dict:
    """How the trial went along its task's plan, as a run stores it: every step right in a passing trial, a failing
    one going wrong at one step and missing the rest; and its conversation's shape."""
    plan = PLAN[: 2 + task_number % 3]
    wrong = len(plan) if passed else (task_number + trial) % len(plan)
    marks = ["right" if i < wrong else "wrong" if i == wrong else "missed" for i in range(len(plan))]
    return {
        "outcome": None,
        "steps": [
            {"tool": tool, "write": write, "entity": entity, "mark": m}
            for (tool, write, entity), m in zip(plan, marks, strict=True)
        ],
        "conversation": conversation,
    }


def truth():  # type: ignore[no-untyped-def]
    from passhat.metrics.extrapolate import Mixture

    return Mixture((0.6, 0.3, 0.1), (1.0, 0.85, 0.0))


def fill(run_dir: Path, size: int) -> None:
    import numpy as np

    from passhat.metrics.consistency import conversation_of_events
    from passhat.metrics.simulate import simulate_rewards
    from passhat.store import ResultStore, TrialRecord

    tasks = [f"task-{i:05d}" for i in range(size // (len(PERSONAS) * TRIALS))]
    rewards = simulate_rewards(truth(), len(tasks) * len(PERSONAS), TRIALS, np.random.default_rng(0))
    config = {
        "domain": "retail",
        "agent": "synthetic",
        "user": "scripted",
        "mode": "strict",
        "seed": 0,
        "personas": list(PERSONAS),
        "tasks": tasks,
        "trials": TRIALS,
    }
    with ResultStore.create(run_dir, run_dir.name, config) as store:
        for s, (task, persona) in enumerate((t, p) for t in tasks for p in PERSONAS):
            for i in range(TRIALS):
                passed = bool(rewards[s, i])
                events, grade = transcript(task, passed)
                signature = None if passed else "wrong_arguments"
                record = TrialRecord(task, persona, i, s * TRIALS + i, int(passed), signature, None, events, grade, 0.0, 0.0)
                shape = conversation_of_events(events).to_json()
                store.record(dataclasses.replace(record, steps=steps(s // len(PERSONAS), i, passed, shape)))


def report(run_dir: Path) -> None:
    """`passhat report` of the run, in this process; its cost on one line of JSON."""
    from passhat.cli import main

    files = {ext: run_dir.parent / f"{run_dir.name}.{ext}" for ext in ("json", "html", "xml")}
    args = ["report", run_dir.name, "--out", str(run_dir.parent), "--json", str(files["json"]), "--html", str(files["html"])]
    t0, c0 = time.perf_counter(), time.process_time()
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            main([*args, "--junit", str(files["xml"])], standalone_mode=False)
        finally:
            sys.stdout = stdout
    cost = {
        "wall": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "html_mib": files["html"].stat().st_size / 2**20,
    }
    print(json.dumps(cost))


def in_own_process(*args: str) -> str:
    done = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return done.stdout


def main(sizes: list[int]) -> None:
    print(f"{'trials':>8} {'report CPU':>11} {'wall':>8} {'peak RSS':>10} {'HTML':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            run_dir = Path(tmp) / f"run{size}"
            in_own_process("--fill", str(run_dir), str(size))
            cost = json.loads(in_own_process("--report", str(run_dir)).splitlines()[-1])
            print(
                f"{size:>8,} {cost['cpu']:>9.2f} s {cost['wall']:>6.2f} s {cost['rss_mib']:>6.0f} MiB "
                f"{cost['html_mib']:>5.1f} MiB",
                flush=True,
            )
        document = json.loads((Path(tmp) / f"run{sizes[-1]}.json").read_text())
    m, x = document["metrics"], document["metrics"]["extrapolated"]
    print(
        f"largest run: {m['scenarios']:,} scenarios; pass^8 {m['pass_hat_k']['8']:.3f}; model {x['model']}, "
        f"pass^1000 {x['pass_hat_k']['1000']:.3f} (truth {float(truth().pass_hat(1000)):.3f})"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fill"]:
        fill(Path(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1:2] == ["--report"]:
        report(Path(sys.argv[2]))
    else:
        main([int(a) for a in sys.argv[1:]] or list(SIZES))
