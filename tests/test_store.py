"""The results store: round trips, duplicate rules, resume keys, and durability across SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from passhat.errors import UserError
from passhat.metrics import TrialOutcome
from passhat.store import STORE_FILE, DuplicateTrialError, ResultStore, TrialRecord, list_runs

CONFIG = {"domain": "retail", "personas": ["calm", "angry"], "trials": 8, "seed": 7, "nested": {"k": [1, 2]}}


def judged(
    task: str = "t1", persona: str = "calm", trial: int = 0, reward: int = 1, signature: str | None = None
) -> TrialRecord:
    return TrialRecord(
        task, persona, trial, seed=1000 + trial, reward=reward, signature=signature, infra_error=None,
        events=[{"kind": "message", "role": "user", "text": "héllo"}, {"kind": "tool", "args": {"id": 3}}],
        grade={"reward": reward, "graders": {"state": True}}, started=1.5, finished=2.25,
    )  # fmt: skip


def infra(task: str = "t1", persona: str = "calm", trial: int = 0) -> TrialRecord:
    return TrialRecord(
        task, persona, trial, seed=1000 + trial, reward=None, signature="infra_error",
        infra_error="Traceback: model endpoint unreachable", events=[], grade={}, started=1.0, finished=1.1,
    )  # fmt: skip


def test_create_open_round_trip(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "r1"
    with ResultStore.create(run_dir, "r1", CONFIG) as store:
        assert store.run_id == "r1" and store.config == CONFIG
    assert (run_dir / STORE_FILE).is_file()
    with ResultStore.open(run_dir) as store:
        assert store.run_id == "r1"
        assert store.config == CONFIG
        assert store.trials() == []


def test_config_is_a_copy(tmp_path: Path) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.config["domain"] = "airline"
        assert store.config["domain"] == "retail"


def test_create_refuses_existing_store(tmp_path: Path) -> None:
    ResultStore.create(tmp_path, "r1", CONFIG).close()
    with pytest.raises(UserError, match=str(tmp_path / STORE_FILE)):
        ResultStore.create(tmp_path, "r1", {"other": True})
    with ResultStore.open(tmp_path) as store:
        assert store.config == CONFIG


def test_open_missing_raises_user_error_naming_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(UserError, match=str(missing)):
        ResultStore.open(missing)
    assert not missing.exists()


def test_open_foreign_files_raise_user_error(tmp_path: Path) -> None:
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / STORE_FILE).write_text("not a database at all " * 100)
    (tmp_path / "other").mkdir()
    sqlite3.connect(tmp_path / "other" / STORE_FILE).execute("CREATE TABLE x (y)").connection.close()
    for name in ("text", "other"):
        with pytest.raises(UserError, match=str(tmp_path / name / STORE_FILE)):
            ResultStore.open(tmp_path / name)


def test_record_and_trials_round_trip_in_key_order(tmp_path: Path) -> None:
    records = [judged("t2", "calm", 0), judged("t1", "calm", 1, 0, "no_write"), judged("t1", "angry", 0), infra()]
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        for record in records:
            store.record(record)
    with ResultStore.open(tmp_path) as store:
        stored = store.trials()
    assert stored == sorted(records, key=lambda r: r.key)
    assert [t.key for t in stored] == [("t1", "angry", 0), ("t1", "calm", 0), ("t1", "calm", 1), ("t2", "calm", 0)]
    assert stored[0].events[0]["text"] == "héllo"


def test_to_outcome() -> None:
    assert judged(reward=0, signature="no_write").to_outcome() == TrialOutcome("t1", "calm", 0, 0, "no_write", False)
    assert infra().to_outcome() == TrialOutcome("t1", "calm", 0, None, "infra_error", True)


def test_record_validates_reward() -> None:
    with pytest.raises(ValueError):
        judged(reward=2)
    with pytest.raises(ValueError):
        TrialRecord("t", "p", 0, 0, 1, None, "boom", [], {}, 0.0, 0.0)


def test_duplicate_judged_trial_raises_and_keeps_the_first(tmp_path: Path) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.record(judged(reward=1))
        with pytest.raises(DuplicateTrialError):
            store.record(judged(reward=0, signature="no_write"))
        with pytest.raises(DuplicateTrialError):
            store.record(infra())
        assert [t.reward for t in store.trials()] == [1]


def test_duplicate_replaces_an_infra_error(tmp_path: Path) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.record(infra())
        store.record(infra())  # a retry that failed again replaces the first failure
        store.record(judged(reward=0, signature="no_write"))
        assert store.trials() == [judged(reward=0, signature="no_write")]


def test_completed_keys_skip_trials_that_could_not_be_judged(tmp_path: Path) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.record(judged("t1", "calm", 0))
        store.record(judged("t1", "calm", 1, 0, "user_simulator_error"))
        store.record(infra("t1", "calm", 2))
        assert store.completed_keys() == {("t1", "calm", 0)}  # resume re-runs the other two


def test_a_rerun_replaces_a_user_simulator_error(tmp_path: Path) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.record(judged("t1", "calm", 1, 0, "user_simulator_error"))
        store.record(judged("t1", "calm", 1, 1, None))
        assert [(t.reward, t.signature) for t in store.trials()] == [(1, None)]


def test_durability_settings(tmp_path: Path) -> None:
    ResultStore.create(tmp_path, "r1", CONFIG).close()
    with ResultStore.open(tmp_path) as store:
        conn = store._conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


def test_list_runs_newest_first_then_unreadable_stores_skipping_other_folders(tmp_path: Path) -> None:
    for run_id in ("b-first", "a-second", "c-third"):
        ResultStore.create(tmp_path / run_id, run_id, {"id": run_id}).close()
    with ResultStore.open(tmp_path / "c-third") as store:
        store.record(judged())
        store.record(infra(trial=1))  # not done: resume re-runs it
    (tmp_path / "notes").mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / STORE_FILE).write_bytes(b"")
    (tmp_path / "file.txt").write_text("x")
    runs = list_runs(tmp_path)
    assert [r.folder for r in runs] == ["c-third", "a-second", "b-first", "broken"]
    assert runs[0].config == {"id": "c-third"} and runs[0].run_id == "c-third" and runs[0].done == 1
    assert runs[0].created >= runs[1].created >= runs[2].created
    assert runs[-1].error and "broken" in runs[-1].error and runs[-1].run_id is None
    assert list_runs(tmp_path / "absent") == []


def test_create_under_a_file_is_a_user_error_naming_the_path(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    with pytest.raises(UserError, match="cannot create the results store .*taken"):
        ResultStore.create(tmp_path / "taken" / "r1", "r1", CONFIG)


@pytest.mark.parametrize(
    "sql, words",
    [("UPDATE run SET config = '[1, 2]'", "not a JSON object"), ("UPDATE run SET config = '{oops'", "not valid JSON"),
     ("DELETE FROM run", "no run row")],
)
def test_a_store_edited_by_hand_is_a_user_error_naming_the_file(tmp_path: Path, sql: str, words: str) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store._conn.execute(sql)
    with pytest.raises(UserError, match=words) as err:
        ResultStore.open(tmp_path)
    assert str(tmp_path / STORE_FILE) in str(err.value)


def test_update_config_is_stored(tmp_path: Path) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.update_config({**CONFIG, "early_stop": "k=2,min=0.5"})
        assert store.config["early_stop"] == "k=2,min=0.5"
    with ResultStore.open(tmp_path) as store:
        assert store.config == {**CONFIG, "early_stop": "k=2,min=0.5"}


def test_stored_config_validates_with_run_config_and_names_the_file(tmp_path: Path) -> None:
    from passhat.run.config import RunConfig, stored_config

    good = RunConfig(tasks=["retail-001"], personas=["baseline"]).model_dump()
    with ResultStore.create(tmp_path / "good", "good", good) as store:
        assert stored_config(store).tasks == ["retail-001"]
    with ResultStore.create(tmp_path / "bad", "bad", {**good, "trials": "many", "tasks": None}) as store:
        with pytest.raises(UserError, match="invalid run configuration") as err:
            stored_config(store)
    assert str(tmp_path / "bad" / STORE_FILE) in str(err.value) and "trials" in str(err.value)


CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from passhat.store import ResultStore, TrialRecord

    store = ResultStore.open(Path(sys.argv[1]))
    for i in range(1_000_000):
        task, persona, trial = f"t{i % 7}", ("calm", "angry")[i % 2], i
        events = [{"kind": "message", "text": "x" * 200, "n": j} for j in range(20)]
        now = time.time()
        store.record(TrialRecord(task, persona, trial, i, i % 2, None, None, events, {"i": i}, now, now))
        print(f"{task} {persona} {trial}", flush=True)
    """
)


def test_committed_trials_survive_sigkill(tmp_path: Path) -> None:
    ResultStore.create(tmp_path, "r1", CONFIG).close()
    with subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        reported = [child.stdout.readline() for _ in range(150)]
        with ResultStore.open(tmp_path) as reader:  # another process reads while the child writes
            seen_while_writing = reader.completed_keys()
        os.kill(child.pid, signal.SIGKILL)
        reported += child.stdout.read().splitlines(keepends=True)
    assert child.returncode == -signal.SIGKILL
    committed = {(t, p, int(i)) for t, p, i in (line.split() for line in reported if line.endswith("\n"))}
    assert len(committed) >= 150
    assert {key for key in committed if key[2] < 150} <= seen_while_writing

    with ResultStore.open(tmp_path) as store:
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        trials = store.trials()
        keys = [t.key for t in trials]
        assert len(keys) == len(set(keys))
        assert committed <= set(keys)
        assert len(keys) - len(committed) <= 1  # at most the commit the child made before it could print
        assert all(len(t.events) == 20 and t.grade == {"i": t.trial} for t in trials)
