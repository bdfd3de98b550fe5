"""Report at scale: metrics and the HTML report for a run of 100,000 trials.

Fills a results store with synthetic trials (2,500 tasks × 5 personas × 8 trials; per-scenario success
drawn from a known always / sometimes / never mixture; a short transcript and a grade per trial), then
times, on this machine: reading the store, every metric of the report (summary, bootstrap intervals,
model fit and extrapolation, partition, spread, compounding) and its typed model, the JSON, HTML and
JUnit files.
Run with `make bench` or `.venv/bin/python bench/report_scale.py`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from passhat.metrics.extrapolate import Mixture
from passhat.metrics.simulate import simulate_rewards
from passhat.report import build_report, write_json
from passhat.report.html import MAX_TRANSCRIPTS, write_html
from passhat.report.junit import write_junit
from passhat.store import ResultStore, TrialRecord

TASKS, PERSONAS, TRIALS = 2500, ("baseline", "impatient", "skeptical", "emotional", "incoherent"), 8
TRUTH = Mixture((0.6, 0.3, 0.1), (1.0, 0.85, 0.0))


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


def fill(run_dir: Path) -> None:
    rewards = simulate_rewards(TRUTH, TASKS * len(PERSONAS), TRIALS, np.random.default_rng(0))
    tasks = [f"task-{i:05d}" for i in range(TASKS)]
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
    with ResultStore.create(run_dir, "bench", config) as store:
        for s, (task, persona) in enumerate((t, p) for t in tasks for p in PERSONAS):
            for i in range(TRIALS):
                passed = bool(rewards[s, i])
                events, grade = transcript(task, passed)
                store.record(
                    TrialRecord(
                        task,
                        persona,
                        i,
                        s * TRIALS + i,
                        int(passed),
                        None if passed else "wrong_arguments",
                        None,
                        events,
                        grade,
                        0.0,
                        0.0,
                    )
                )


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    print(f"{label:<44} {time.perf_counter() - t0:7.2f} s wall  {time.process_time() - c0:7.2f} s CPU")
    return result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "bench"
        timed(f"fill the store ({TASKS * len(PERSONAS) * TRIALS:,} trials)", lambda: fill(run_dir))
        with ResultStore.open(run_dir) as store:
            trials = timed("read every trial from the store", store.trials)
            report = timed("metrics and the typed report (summary, CIs, fit, ...)", lambda: build_report(store, {}, trials))
        timed("JSON report", lambda: write_json(report, Path(tmp) / "report.json"))
        html = Path(tmp) / "report.html"
        timed(
            f"HTML report (transcripts capped at {MAX_TRANSCRIPTS:,})", lambda: write_html(report, trials, html, MAX_TRANSCRIPTS)
        )
        timed("JUnit report", lambda: write_junit(report, Path(tmp) / "junit.xml"))
        m, x = report.metrics, report.metrics.extrapolated
        print(
            f"HTML size {html.stat().st_size / 2**20:.1f} MiB; {m.scenarios:,} scenarios; pass^8 {m.pass_hat_k[8]:.3f}; "
            f"model {x.model}, pass^1000 {x.pass_hat_k[1000]:.3f} (truth {float(TRUTH.pass_hat(1000)):.3f})"
        )


if __name__ == "__main__":
    main()
