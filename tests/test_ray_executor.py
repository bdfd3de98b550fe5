"""Trials as Ray actor calls (--executor ray): the same trials as in one process, this process the one writer of
the store; a Ray worker killed mid-run loses no trial and counts none twice; the flags' misuse is exit 2.

One local Ray instance (2 CPUs) serves the in-process tests: starting Ray costs seconds."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from test_steps import SMALL as STEPS_RUN
from test_steps import steps_of
from test_workers import KILL_MARKER, assert_interrupted_and_resumed, started_and_stopped

from passhat.cli import main
from passhat.run.ray_executor import RETRIES
from passhat.run.runner import execute
from passhat.run_config import RunConfig
from passhat.store import ResultStore

ray = pytest.importorskip("ray")

# Every test that starts Ray in the pytest process is in this file: pytest-xdist (--dist loadfile) runs a file's
# tests in one worker, one after another as without xdist, where two workers' ray.init() at once would start two
# local Ray instances competing for the same 2 CPUs (each told num_cpus=2) and the same /tmp/ray session folder.

SMALL = {"personas": ["baseline", "incoherent"], "tasks": ["retail-001", "retail-003"], "trials": 2}


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield
    ray.shutdown()


def stored(tmp_path: Path, name: str, executor: str, workers: int = 2, **config: Any) -> tuple[int, list]:
    cfg = RunConfig(**{**SMALL, **config})
    with ResultStore.create(tmp_path / name, name, cfg.model_dump()) as store:
        ran = asyncio.run(execute(cfg, store, 4, workers=workers, executor=executor))  # type: ignore[arg-type]
        return ran, store.trials()


def per_trial(trials: list) -> dict:
    return {t.key: (t.seed, t.reward, t.signature, t.infra_error, t.events, t.grade) for t in trials}


def test_ray_actors_store_the_same_trials_as_one_process(tmp_path):
    _, one = stored(tmp_path, "one", "local", workers=1, agent="reference:flaky", seed=3)
    ran, on_ray = stored(tmp_path, "ray", "ray", agent="reference:flaky", seed=3)
    assert ran == len(one) == 8
    assert per_trial(on_ray) == per_trial(one)


def test_a_ray_worker_killed_mid_run_has_its_trials_run_again_none_lost_none_twice(tmp_path, monkeypatch):
    monkeypatch.setenv(KILL_MARKER, str(tmp_path / "killed"))
    ran, trials = stored(tmp_path, "r", "ray", agent="python:test_workers:create_killer")
    assert (tmp_path / "killed").exists(), "a Ray worker must be killed for this test to mean anything"
    assert ran == len(trials) == 8  # every planned trial stored exactly once
    assert all(t.infra_error is None for t in trials)  # the killed worker's trials ran again on its restart


def test_a_trial_that_kills_every_worker_it_runs_in_is_an_infra_error_after_the_retries(tmp_path, monkeypatch):
    monkeypatch.delenv(KILL_MARKER, raising=False)
    one = {"tasks": ["retail-001"], "personas": ["baseline"], "trials": 1}
    ran, trials = stored(tmp_path, "r", "ray", agent="python:test_workers:create_killer", **one)
    assert ran == len(trials) == 1
    assert (
        trials[0].reward is None and "Ray worker" in trials[0].infra_error and f"after {RETRIES} retries" in trials[0].infra_error
    )


def test_ray_actors_record_the_same_steps(tmp_path: Path):
    """A trial's steps (test_steps.py) are the same recorded by a Ray actor as in one process."""
    with ResultStore.create(tmp_path / "one", "one", STEPS_RUN.model_dump()) as store:
        one = steps_of(store, workers=1)
    with ResultStore.create(tmp_path / "ray", "ray", STEPS_RUN.model_dump()) as store:
        assert steps_of(store, workers=2, executor="ray") == one


def run_cli(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", *args])


def test_a_cli_run_on_ray_with_early_stop_accounts_for_every_planned_trial(tmp_path):
    # Ray is already started in this process (the fixture): the run uses it and leaves it running.
    flags = ["--agent", "reference:hasty", "--trials", "3", "--tasks", "retail-001,retail-003", "--personas", "baseline"]
    done = run_cli(*flags, "--executor", "ray", "--gate", "k=3,min=0.9", "--early-stop", "--out", str(tmp_path), "--run-id", "r")
    assert done.exit_code in (0, 1), done.output
    with ResultStore.open(tmp_path / "r") as store:
        stored_trials = len(store.trials())
    saved = int(done.output.split("early stop: ")[1].split(" of ")[0])
    assert stored_trials + saved == 6 and ray.is_initialized()


@pytest.mark.slow
def test_ctrl_c_on_ray_exits_130_keeps_what_was_stored_and_resumes(tmp_path):
    """The run's own process starts (or joins) Ray; Ctrl-C stops it like a run on workers: what was stored stays."""
    assert_interrupted_and_resumed(tmp_path, started_and_stopped(tmp_path, "int", signal.SIGINT, "--executor", "ray"))


def test_ray_address_without_the_ray_executor_is_a_usage_error(tmp_path):
    done = run_cli("--ray-address", "127.0.0.1:6379", "--out", str(tmp_path))
    assert done.exit_code == 2 and "add --executor ray" in done.output
    assert not any(tmp_path.iterdir()), "no run folder is made for a refused run"


def test_the_ray_executor_without_ray_installed_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    done = run_cli("--executor", "ray", "--out", str(tmp_path))
    assert done.exit_code == 2 and "pip install 'passhat[ray]'" in done.output
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("environ", "token_file", "mode"),
    [
        ({}, True, "token"),  # `ray start --head` (Ray >= 2.59) wrote ~/.ray/auth_token: join in token mode
        ({"RAY_AUTH_TOKEN": "t" * 32}, False, "token"),
        ({"RAY_AUTH_TOKEN_PATH": "/secrets/ray"}, False, "token"),
        ({}, False, None),  # no token anywhere: Ray's own default
        ({"RAY_AUTH_MODE": "disabled"}, True, "disabled"),  # what the user said wins
    ],
)
def test_joining_a_cluster_gives_its_token_when_there_is_one(tmp_path, monkeypatch, environ, token_file, mode):
    from passhat.run.ray_executor import _authenticate_as_the_cluster_does

    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path))
    if token_file:
        (tmp_path / ".ray").mkdir()
        (tmp_path / ".ray" / "auth_token").write_text("x" * 32)
    _authenticate_as_the_cluster_does()
    assert os.environ.get("RAY_AUTH_MODE") == mode
