"""Trials in worker processes (--workers N): the same trials as in one process, the parent the one writer of
the store; resume, Ctrl-C and early stop as in one process; a worker that dies loses no trial and counts none
twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from passhat.metrics.gate import parse_gate
from passhat.run.evaluate import evaluate
from passhat.run.runner import execute
from passhat.run.workers import RETRIES, share, worker_count
from passhat.run_config import RunConfig
from passhat.store import ResultStore

PASSHAT = str(Path(sys.executable).parent / "passhat")
SMALL = {"personas": ["baseline", "incoherent"], "tasks": ["retail-001", "retail-003", "retail-010"], "trials": 3}
KILL_MARKER = "PASSHAT_TEST_KILL_MARKER"  # the file whose creation marks the one worker the killer agent kills


def stored(tmp_path: Path, name: str, workers: int, concurrency: int = 4, **config: Any) -> list:
    cfg = RunConfig(**{**SMALL, **config})
    with ResultStore.create(tmp_path / name, name, cfg.model_dump()) as store:
        asyncio.run(execute(cfg, store, concurrency, workers=workers))
        return store.trials()


def per_trial(trials: list) -> dict:
    return {t.key: (t.seed, t.reward, t.signature, t.infra_error, t.events, t.grade) for t in trials}


def test_two_workers_store_the_same_trials_as_one_process(tmp_path):
    one = stored(tmp_path, "one", workers=1, agent="reference:flaky")
    two = stored(tmp_path, "two", workers=2, agent="reference:flaky")
    assert len(one) == 18
    assert per_trial(two) == per_trial(one)


def test_the_audit_trail_is_written_by_the_parent_alone_with_workers(tmp_path):
    one = stored(tmp_path, "one", workers=1, guard=["audit"])
    two = stored(tmp_path, "two", workers=2, guard=["audit"])
    assert {t.key: t.reward for t in two} == {t.key: t.reward for t in one}
    verified = subprocess.run([PASSHAT, "audit", "verify", "two", "--out", str(tmp_path)], capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_limits_are_split_between_workers_never_multiplied():
    assert share(5, 2) == [3, 2] and sum(share(256, 3)) == 256
    scripted = RunConfig(**SMALL)
    assert worker_count(scripted, workers=8, concurrency=3) == 3  # a worker with no trial in flight would idle
    models = RunConfig(**SMALL, agent="llm:openai/m", agent_base_url="http://127.0.0.1:9/v1", max_connections=2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        assert worker_count(models, workers=8, concurrency=64) == 2  # nor one with no connection


def test_early_stop_with_workers_reaches_the_full_runs_decision(tmp_path):
    gate = parse_gate("k=3,min=0.9")
    cfg = RunConfig(**{**SMALL, "agent": "reference:hasty"})
    decisions = {}
    for name, workers, stop in (("full", 1, False), ("early", 2, True)):
        with ResultStore.create(tmp_path / name, name, cfg.model_dump()) as store:
            result = evaluate(cfg, store, 4, gate, stop, workers=workers)
            decisions[name] = result.decision.meets
            assert len(result.outcomes) + result.skipped == result.planned
    assert decisions["early"] == decisions["full"]


class _Killer:
    """Kills its own process at its first answer: once per run when KILL_MARKER names a file (the first to create
    it), every time when it names none."""

    async def respond(self, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        marker = os.environ.get(KILL_MARKER)
        if marker:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return {"message": "I'm sorry, I cannot help with that.", "tool_calls": []}
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


class _KillerAgent:
    def new_conversation(self, trial: Any) -> _Killer:
        return _Killer()


def create_killer() -> _KillerAgent:
    return _KillerAgent()


@pytest.mark.slow
def test_a_worker_killed_mid_run_has_its_trials_run_again_none_lost_none_twice(tmp_path, monkeypatch):
    monkeypatch.setenv(KILL_MARKER, str(tmp_path / "killed"))
    cfg = RunConfig(**{**SMALL, "agent": "python:test_workers:create_killer"})
    with ResultStore.create(tmp_path / "r", "r", cfg.model_dump()) as store:
        ran = asyncio.run(execute(cfg, store, 4, workers=2))
        trials = store.trials()
    assert (tmp_path / "killed").exists(), "a worker must be killed for this test to mean anything"
    assert ran == len(trials) == 18  # every planned trial stored exactly once
    assert all(t.infra_error is None for t in trials)  # the killed worker's trials ran again in the fresh one


def test_a_trial_that_kills_every_worker_it_runs_in_is_an_infra_error_after_the_retries(tmp_path, monkeypatch):
    monkeypatch.delenv(KILL_MARKER, raising=False)
    cfg = RunConfig(**{**SMALL, "agent": "python:test_workers:create_killer", "tasks": ["retail-001"], "trials": 1})
    with ResultStore.create(tmp_path / "r", "r", cfg.model_dump()) as store:
        ran = asyncio.run(execute(cfg, store, 4, workers=2))
        trials = store.trials()
    assert ran == len(trials) == 2  # two personas, one worker each: each trial killed its worker three times
    assert all(
        t.reward is None and f"died (exit code -9) before it finished, after {RETRIES} retries" in t.infra_error for t in trials
    )
    with ResultStore.resume(tmp_path / "r") as store:  # resume runs them again
        monkeypatch.setenv(KILL_MARKER, str(tmp_path / "killed"))  # ... with an agent that kills once only
        assert asyncio.run(execute(cfg, store, 4, workers=2)) == 2
        assert all(t.infra_error is None for t in store.trials()) and len(store.trials()) == 2


def _count(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT count(*) FROM trials").fetchone()[0]
    except sqlite3.Error:
        return 0


# The interrupted runs: 10 tasks × 5 personas × 6 trials (300 trials), enough that a stop after 20 stored lands
# mid-run, and a resume (and the uninterrupted reference) that costs seconds, not the default run's 1,560 trials.
INTERRUPTED = ["--trials", "6", "--seed", "7", "--tasks", ",".join(f"retail-{i:03d}" for i in range(1, 11))]
STORED_BEFORE_STOP = 20
STORED_WAIT_SECONDS = 600  # a wait for a condition: under heavy load it passes late, never proceeds without it


def wait_until_stored(child: subprocess.Popen, db: Path, at_least: int) -> None:
    """Wait until the run ``child`` has stored ``at_least`` trials in ``db``: a wait for the condition, which under
    heavy load passes late; if it never holds (the run exits first, or STORED_WAIT_SECONDS pass), the run is killed
    and the test fails saying so, rather than stopping a run that has not started storing."""
    deadline = time.monotonic() + STORED_WAIT_SECONDS
    while _count(db) < at_least and child.poll() is None:
        if time.monotonic() > deadline:
            child.kill()
            child.communicate()
            pytest.fail(f"{db.parent.name}: {_count(db)} trials stored in {STORED_WAIT_SECONDS} s, fewer than {at_least}")
        time.sleep(0.02)
    if child.poll() is not None:
        _, stderr = child.communicate()
        pytest.fail(
            f"{db.parent.name} exited ({child.returncode}) with {_count(db)} trials stored, before it was stopped: {stderr}"
        )


def started_and_stopped(tmp_path: Path, run_id: str, stop: signal.Signals, *flags: str) -> subprocess.Popen:
    """A CLI run with two workers (and ``flags``), sent ``stop`` once a few trials are stored (the test waits for
    trials, not for time)."""
    common = [*INTERRUPTED, "--out", str(tmp_path), "--concurrency", "4", "--workers", "2", *flags]
    child = subprocess.Popen(
        [PASSHAT, "run", *common, "--run-id", run_id], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wait_until_stored(child, tmp_path / run_id / "results.sqlite", STORED_BEFORE_STOP)
    child.send_signal(stop)
    return child


@pytest.mark.slow
def test_ctrl_c_with_workers_exits_130_keeps_what_was_stored_and_resumes(tmp_path):
    assert_interrupted_and_resumed(tmp_path, started_and_stopped(tmp_path, "int", signal.SIGINT))


def assert_interrupted_and_resumed(tmp_path: Path, child: subprocess.Popen) -> None:
    """The run ``int`` stopped by Ctrl-C: exit 130, no traceback, the trials stored before it kept and said, and a
    resume that finishes it."""
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr
    kept = _count(tmp_path / "int" / "results.sqlite")
    assert f"interrupted: {kept} of " in stderr
    resumed = subprocess.run(
        [PASSHAT, "run", "--resume", "int", "--out", str(tmp_path), "--workers", "2"], capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr


@pytest.mark.slow
def test_a_run_with_workers_killed_and_resumed_matches_an_uninterrupted_one(tmp_path):
    child = started_and_stopped(tmp_path, "killed", signal.SIGKILL)
    child.communicate(timeout=60)
    partial = _count(tmp_path / "killed" / "results.sqlite")
    resumed = subprocess.run(
        [PASSHAT, "run", "--resume", "killed", "--out", str(tmp_path), "--workers", "2"], capture_output=True, text=True
    )
    assert resumed.returncode in (0, 1), resumed.stderr
    whole = subprocess.run(
        [PASSHAT, "run", *INTERRUPTED, "--out", str(tmp_path), "--workers", "1", "--run-id", "whole"],
        capture_output=True,
        text=True,
    )
    assert whole.returncode in (0, 1), whole.stderr
    with ResultStore.open(tmp_path / "killed") as store, ResultStore.open(tmp_path / "whole") as reference:
        after, expected = store.trials(), reference.trials()
    assert 0 < partial < len(expected), "the run must be killed mid-way for this test to mean anything"
    assert {t.key: (t.reward, t.signature) for t in after} == {t.key: (t.reward, t.signature) for t in expected}


class _Exited(Exception):
    """os._exit, caught: the test process must live on."""


def test_a_worker_whose_run_process_is_gone_exits_at_once_finishing_nothing(monkeypatch):
    """With the run's process dead nobody stores a record, so a worker that sees its pipe close exits on the
    spot instead of cancelling trials and closing clients first (workers outlived a SIGKILLed run by 1-5 s)."""
    import multiprocessing

    from passhat.run import workers

    keys, run_end = multiprocessing.Pipe(duplex=False)
    records_end, records = multiprocessing.Pipe(duplex=False)
    run_end.close()  # what the kernel does to the run's end when the run's process is killed

    def exited(code: int) -> None:
        raise _Exited(code)

    monkeypatch.setattr(workers.os, "_exit", exited)
    with pytest.raises(_Exited) as how:
        asyncio.run(workers._serve(keys, records, RunConfig(**SMALL), None))
    assert how.value.args == (0,)
    records.close()
    records_end.close()
