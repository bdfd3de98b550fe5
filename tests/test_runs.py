"""Runs: seeded trials reproduce exactly, concurrency changes nothing, and a run killed with SIGKILL
and resumed ends with the same per-trial results as one never interrupted."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_workers import INTERRUPTED, STORED_BEFORE_STOP, _count, wait_until_stored

from passhat.run.runner import execute
from passhat.run_config import RunConfig
from passhat.store import ResultStore

PASSHAT = str(Path(sys.executable).parent / "passhat")


def run_store(tmp_path: Path, name: str, concurrency: int = 4, **config) -> list:
    cfg = RunConfig(
        **{"personas": ["baseline", "incoherent"], "tasks": ["retail-001", "retail-003", "retail-010"], "trials": 3, **config}
    )
    with ResultStore.create(tmp_path / name, name, cfg.model_dump()) as store:
        asyncio.run(execute(cfg, store, concurrency))
        return store.trials()


def outcomes(trials) -> dict:
    return {t.key: (t.reward, t.signature, t.events) for t in trials}


def test_same_seed_same_trajectories_whatever_the_concurrency(tmp_path):
    a = run_store(tmp_path, "a", concurrency=1, agent="reference:flaky")
    b = run_store(tmp_path, "b", concurrency=8, agent="reference:flaky")
    assert outcomes(a) == outcomes(b)
    assert len(a) == 18


def test_different_seeds_give_different_trajectories(tmp_path):
    a = run_store(tmp_path, "a", seed=1)
    b = run_store(tmp_path, "b", seed=2)
    assert [t.events for t in a] != [t.events for t in b]


@pytest.mark.slow
def test_resume_after_sigkill_matches_an_uninterrupted_run(tmp_path):
    common = [*INTERRUPTED, "--out", str(tmp_path), "--concurrency", "2"]
    subprocess.run([PASSHAT, "run", *common, "--run-id", "whole"], check=True, capture_output=True)
    with ResultStore.open(tmp_path / "whole") as store:
        whole = store.trials()

    child = subprocess.Popen(
        [PASSHAT, "run", *common, "--run-id", "killed"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    db = tmp_path / "killed" / "results.sqlite"
    wait_until_stored(child, db, len(whole) // 3)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    partial = _count(db)
    assert 0 < partial < len(whole), "the run must be killed mid-way for this test to mean anything"

    resumed = subprocess.run([PASSHAT, "run", "--resume", "killed", "--out", str(tmp_path)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    with ResultStore.open(tmp_path / "killed") as store:
        after = store.trials()
    assert len(after) == len(whole)
    assert {t.key: (t.reward, t.signature) for t in after} == {t.key: (t.reward, t.signature) for t in whole}


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_with_exit_130_and_the_run_resumes(tmp_path):
    common = [*INTERRUPTED, "--out", str(tmp_path), "--concurrency", "2"]
    child = subprocess.Popen(
        [PASSHAT, "run", *common, "--run-id", "int"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    db = tmp_path / "int" / "results.sqlite"
    wait_until_stored(child, db, STORED_BEFORE_STOP)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr
    stored = _count(db)
    assert f"interrupted: {stored} of " in stderr and f"passhat run --resume int --out {tmp_path}" in stderr
    with ResultStore.open(tmp_path / "int") as store:
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert len(store.completed_keys()) == stored
    resumed = subprocess.run([PASSHAT, "run", "--resume", "int", "--out", str(tmp_path)], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
