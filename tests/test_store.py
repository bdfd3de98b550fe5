"""The results store: round trips, duplicate rules, resume keys, durability across SIGKILL, one writer per
run, a trial and its audit entries in one transaction, and a store a kill left half-created."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_web_queries import PERSONAS, TASKS, synthetic_run, trial

from passhat.cli import main
from passhat.errors import UserError
from passhat.metrics import TrialResult
from passhat.run_config import RunConfig
from passhat.store import STORE_FILE, DuplicateTrialError, ResultStore, TrialRecord, list_runs
from passhat.store.results import SCHEMA_VERSION
from passhat.trajectory import USER_SIMULATOR_ERROR

CONFIG = {"domain": "retail", "personas": ["calm", "angry"], "trials": 8, "seed": 7, "nested": {"k": [1, 2]}}


def judged(task: str = "t1", persona: str = "calm", trial: int = 0, reward: int = 1, signature: str | None = None) -> TrialRecord:
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


def test_light_rows_carry_every_trial_s_verdict_and_records_fetch_only_the_chosen(tmp_path: Path) -> None:
    trials = [judged("t2", reward=0, signature="wrong_arguments"), judged("t1"), infra("t1", "calm", 1)]
    with ResultStore.create(tmp_path / "r", "r", {}) as store:
        for t in trials:
            store.record(t)
        rows = store.trial_rows()
        assert [r.to_result() for r in rows] == [t.to_result() for t in store.trials()]
        assert [(r.key, r.seed) for r in rows] == [(t.key, t.seed) for t in store.trials()]
        assert list(store.records([("t2", "calm", 0), ("t1", "calm", 1), ("t9", "calm", 0)])) == [trials[0], trials[2]]


def test_a_reports_pass_gets_every_trial_with_only_the_events_a_fault_or_a_guard_marked(tmp_path: Path) -> None:
    fault = {"kind": "tool", "name": "get", "fault": {"class": "timeout"}}
    ticket = {"kind": "tool", "name": "refund", "guard": {"guard": "human_gate", "decision": "ticket"}}
    said = {"kind": "agent", "text": 'a "fault" named in words is no fault'}
    marked = dataclasses.replace(judged("t1"), events=[said, fault, {"kind": "user", "text": "ok"}, ticket])
    with ResultStore.create(tmp_path / "r", "r", {}) as store:
        for t in (marked, judged("t2"), infra("t3")):
            store.record(t)
        read = list(store.report_trials())
    assert [t.key for t in read] == [("t1", "calm", 0), ("t2", "calm", 0), ("t3", "calm", 0)]
    assert [t.events for t in read] == [[fault, ticket], [], []]
    assert [(t.reward, t.grade, t.steps) for t in read] == [
        (m.reward, m.grade, m.steps) for m in (marked, judged("t2"), infra("t3"))
    ]


def test_to_outcome() -> None:
    assert judged(reward=0, signature="no_write").to_result() == TrialResult("t1", "calm", 0, 0, "no_write", False)
    assert infra().to_result() == TrialResult("t1", "calm", 0, None, "infra_error", True)


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
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_list_runs_newest_first_then_unreadable_stores_skipping_other_folders(tmp_path: Path) -> None:
    for run_id in ("b-first", "a-second", "c-third"):
        ResultStore.create(tmp_path / run_id, run_id, {"id": run_id}).close()
    with ResultStore.open(tmp_path / "c-third") as store:
        store.record(judged())
        store.record(infra(trial=1))  # not done: resume re-runs it
        store.record(judged(trial=2, reward=0, signature=USER_SIMULATOR_ERROR))  # nor this one
        assert store.judged_count() == len(store.completed_keys()) == 1
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
    [
        ("UPDATE run SET config = '[1, 2]'", "not a JSON object"),
        ("UPDATE run SET config = '{oops'", "not valid JSON"),
        ("DELETE FROM run", "no run row"),
    ],
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
    from passhat.run_config import stored_config

    good = RunConfig(tasks=["retail-001"], personas=["baseline"]).model_dump()
    with ResultStore.create(tmp_path / "good", "good", good) as store:
        assert stored_config(store).tasks == ["retail-001"]
    with ResultStore.create(tmp_path / "bad", "bad", {**good, "trials": "many", "tasks": None}) as store:
        with pytest.raises(UserError, match="invalid run configuration") as err:
            stored_config(store)
    assert str(tmp_path / "bad" / STORE_FILE) in str(err.value) and "trials" in str(err.value)


# what a store of an older passhat holds: the run's first keys, none of those added since (paraphrase, the turn
# bounds, the operator, the gates, the fingerprint, the version, the import)
OLD_KEYS = {"domain", "agent", "user", "mode", "seed", "tasks", "personas", "trials"}


def readers(out: Path) -> list[list[str]]:
    """Each command that reads a stored run's configuration, on the run "r" under ``out``."""
    return [
        ["report", "r", "--json", str(out / "r.json")],
        ["gate", "r", "--k", "2", "--min-pass-hat-k", "0.5"],
        ["compare", "r", "r"],
        ["export", "r", "-o", str(out / "r.eval.json")],
        ["export", "r", "--format", "otel", "-o", str(out / "r.otel.json")],
    ]


def test_a_run_stored_by_an_older_passhat_opens_in_every_reader_with_the_records_defaults(tmp_path: Path) -> None:
    synthetic_run(tmp_path, "r", [trial(t, p, i) for t in TASKS for p in PERSONAS for i in range(2)], planned=2)
    with ResultStore.open(tmp_path / "r") as store:
        assert set(store.config) == OLD_KEYS
    for args in readers(tmp_path):
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)], catch_exceptions=False)
        assert result.exit_code == 0, (args, result.output)
    assert set(json.loads((tmp_path / "r.json").read_text())["config"]) == OLD_KEYS  # the report shows what is stored
    metadata = json.loads((tmp_path / "r.eval.json").read_text())["eval"]["metadata"]
    assert metadata["paraphrase"] == 0 and metadata["operator"] == "simulated"  # the export, the record's defaults
    listed = CliRunner().invoke(main, ["runs", "--out", str(tmp_path)])
    assert listed.exit_code == 0 and "12/12" in listed.output and "unreadable" not in listed.output


def test_a_damaged_run_configuration_is_a_user_error_naming_the_store_in_every_reader(tmp_path: Path) -> None:
    synthetic_run(tmp_path, "r", [trial("t1", "baseline", 0)], planned="many", personas="all", colour="blue")
    for args in [*readers(tmp_path), ["certify", "r", "-o", str(tmp_path / "record.json")]]:
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)])
        assert result.exit_code == 2, (args, result.output)
        assert f"{tmp_path / 'r' / STORE_FILE} holds an incomplete or invalid run configuration" in result.output
        assert "trials" in result.output and "colour" in result.output and "bug" not in result.output
    listed = CliRunner().invoke(main, ["runs", "--out", str(tmp_path)])
    assert listed.exit_code == 0 and "unreadable" in listed.output and "invalid run configuration" in listed.output


CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from passhat.store import ResultStore, TrialRecord

    store = ResultStore.resume(Path(sys.argv[1]))
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


def test_a_trial_and_its_audit_entries_are_stored_together_or_not_at_all(tmp_path: Path) -> None:
    sealed: list[str] = []

    def seal(*rows: tuple[int, str]):
        return lambda digest: sealed.append(digest) or rows

    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.record(judged(), seal((1, '{"seq": 1}'), (2, '{"seq": 2}')))
        with pytest.raises(DuplicateTrialError):
            store.record(judged(reward=0, signature="no_write"), seal((3, '{"seq": 3}')))
        with pytest.raises(sqlite3.IntegrityError):  # an entry number taken twice (two writers): nor the trial
            store.record(judged(trial=1), seal((2, '{"seq": 2}')))
        rows, digests = store.audit_state()
    assert rows == [(1, '{"seq": 1}'), (2, '{"seq": 2}')]
    assert digests == {("t1", "calm", 0): sealed[0]}  # what was sealed is the digest of the row as stored


def test_a_second_writer_is_refused_while_the_first_holds_the_run_and_admitted_after(tmp_path: Path) -> None:
    first = ResultStore.create(tmp_path, "r1", CONFIG)
    for second in (lambda: ResultStore.resume(tmp_path), lambda: ResultStore.create(tmp_path, "r1", CONFIG)):
        with pytest.raises(UserError, match=f"being written by another passhat process \\(pid {os.getpid()}\\)"):
            second()
    with ResultStore.open(tmp_path) as reader:  # reading needs no lock: a report while the run goes on
        assert reader.run_id == "r1"
    first.close()
    with ResultStore.resume(tmp_path) as again:
        again.record(judged())
    assert len(ResultStore.open(tmp_path).trials()) == 1


HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from passhat.store import ResultStore

    store = ResultStore.resume(Path(sys.argv[1]))
    print("holding", flush=True)
    sys.stdin.read()
    """
)


def test_the_lock_of_a_killed_writer_is_released_with_its_process(tmp_path: Path) -> None:
    ResultStore.create(tmp_path, "r1", CONFIG).close()
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None and child.stdout.readline() == "holding\n"
        with pytest.raises(UserError, match=f"pid {child.pid}"):
            ResultStore.resume(tmp_path)
        os.kill(child.pid, signal.SIGKILL)
    ResultStore.resume(tmp_path).close()


def test_a_second_passhat_run_resume_exits_2_saying_why(tmp_path: Path) -> None:
    config = RunConfig(tasks=["retail-001"], personas=["baseline"], trials=1).model_dump()
    with ResultStore.create(tmp_path / "r1", "r1", config):
        result = CliRunner().invoke(main, ["run", "--resume", "r1", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "being written by another passhat process" in result.output and "Traceback" not in result.output
    assert CliRunner().invoke(main, ["run", "--resume", "r1", "--out", str(tmp_path)]).exit_code == 0


def _empty_file(path: Path) -> None:
    path.touch()


def _database_without_tables(path: Path) -> None:
    sqlite3.connect(path).execute("PRAGMA journal_mode = WAL").connection.close()


@pytest.mark.parametrize("leftover", [_empty_file, _database_without_tables])
def test_a_store_a_kill_left_holding_nothing_is_no_run_and_its_id_is_reused(tmp_path: Path, leftover) -> None:
    tmp_path.joinpath("r1").mkdir()
    leftover(tmp_path / "r1" / STORE_FILE)
    with pytest.raises(UserError, match="killed while its store was being created .* reuses the id"):
        ResultStore.resume(tmp_path / "r1")
    with ResultStore.create(tmp_path / "r1", "r1", CONFIG) as store:
        note = (
            f"run id 'r1': its store {tmp_path / 'r1' / STORE_FILE} held nothing (a run killed while creating it); created afresh"
        )
        assert store.notes == [note]
        store.record(judged())
    with ResultStore.open(tmp_path / "r1") as store:
        assert store.config == CONFIG and len(store.trials()) == 1


@pytest.mark.parametrize("content", ["text", "tables"])
def test_a_file_that_holds_something_is_never_replaced(tmp_path: Path, content: str) -> None:
    path = tmp_path / STORE_FILE
    if content == "text":
        path.write_text("someone's notes")
    else:
        sqlite3.connect(path).execute("CREATE TABLE mine (x)").connection.close()
    before = path.read_bytes()
    with pytest.raises(UserError, match="already exists"):
        ResultStore.create(tmp_path, "r1", CONFIG)
    assert path.read_bytes() == before


def test_a_store_of_the_previous_schema_is_read_but_not_resumed(tmp_path: Path) -> None:
    with ResultStore.create(tmp_path, "r1", CONFIG) as store:
        store.record(judged())
        store._conn.execute("DROP TABLE audit")
        store._conn.execute("PRAGMA user_version = 2")
    with ResultStore.open(tmp_path) as store:
        assert len(store.trials()) == 1 and store.audit_state()[0] is None
    with pytest.raises(UserError, match="older passhat .*schema 2"):
        ResultStore.resume(tmp_path)


# damaged stores: the user's data, named in a UserError (exit 2), never "a bug in passhat"


def damaged_run(out: Path, sql: str) -> Path:
    """A finished run folder under ``out`` whose store ``sql`` then damages, as an editor or a bad disk would."""
    folder = synthetic_run(
        out, "damaged", [trial(t, p, i, "fail" if i else "pass") for t in TASKS for p in PERSONAS for i in range(3)], planned=3
    )
    with sqlite3.connect(folder / STORE_FILE) as db:
        db.execute(sql)
    db.close()
    return folder


def test_a_store_without_its_trials_table_is_a_user_error_naming_it(tmp_path: Path) -> None:
    folder = damaged_run(tmp_path, "DROP TABLE trials")
    with pytest.raises(UserError, match=f"{folder / STORE_FILE} has no trials table"):
        ResultStore.open(folder)
    assert list_runs(tmp_path)[0].error is not None
    result = CliRunner().invoke(main, ["report", "damaged", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "has no trials table" in result.output and "bug" not in result.output


# (damage, the column named): each ended some command with "This is a bug in passhat"
TRIAL_DAMAGE = {
    "events": "events = '{broken'",
    "grade": "grade = '[oops'",
    "usage": "usage = '[]'",
    "reward": "reward = 'x'",
    "started": "started = 'x'",
    "trial": "trial = 'x'",
    "signature": "signature = 'martian'",  # no failure signature passhat knows
}


@pytest.mark.parametrize("column", TRIAL_DAMAGE)
def test_a_damaged_column_of_one_trial_is_a_user_error_naming_the_store_the_trial_and_the_column(
    tmp_path: Path, column: str
) -> None:
    folder = damaged_run(tmp_path, f"UPDATE trials SET {TRIAL_DAMAGE[column]} WHERE task_id = 't1' AND trial = 0")
    with ResultStore.open(folder) as store, pytest.raises(UserError, match=f"its {column} column") as caught:
        store.trials()
    assert str(folder / STORE_FILE) in str(caught.value) and "of task 't1' with persona" in str(caught.value)
    export = ["export", "damaged", "-o", str(tmp_path / "e.json")]
    for args in (["report", "damaged"], ["compare", "damaged", "damaged"], ["traffic", "damaged", "--per-day", "9"], export):
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)])
        assert "bug" not in result.output and result.exit_code in (0, 2), (args, result.output)
        assert result.exit_code == 0 or f"its {column} column" in result.output, (args, result.output)


def test_a_run_row_of_another_shape_is_a_user_error_naming_the_store(tmp_path: Path) -> None:
    folder = damaged_run(tmp_path, "UPDATE run SET created = 'x'")
    with pytest.raises(UserError, match=str(folder / STORE_FILE)):
        ResultStore.open(folder)
    assert "bug" not in CliRunner().invoke(main, ["runs", "--out", str(tmp_path)]).output
