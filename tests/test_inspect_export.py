"""`passhat export --format inspect`: the log is one that inspect-ai's own reader loads, with a sample per
scenario, its trials as epochs, the reward and failure signature as scores, the conversation in Inspect's
message schema, the run's configuration as metadata, and passhat's own figures as the eval's results."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from inspect_ai import log as inspect_log

from passhat.cli import main
from passhat.export import write_inspect_log
from passhat.export.inspect_log import inspect_log_name
from passhat.report import build_report
from passhat.run.runner import execute
from passhat.run_config import RunConfig, stored_config
from passhat.store import ResultStore, TrialRecord

TASKS, PERSONAS, TRIALS = ["retail-001", "retail-003"], ["baseline", "impatient"], 3


@pytest.fixture(scope="module")
def flaky_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run whose scenarios pass some trials and fail others."""
    out = tmp_path_factory.mktemp("runs")
    config = RunConfig(agent="reference:flaky", personas=PERSONAS, tasks=TASKS, trials=TRIALS, seed=3)
    with ResultStore.create(out / "flaky", "flaky", config.model_dump()) as store:
        asyncio.run(execute(config, store, 4))
    return out


def export(out: Path, path: Path, run: str = "flaky") -> Path:
    with ResultStore.open(out / run) as store:
        write_inspect_log(path, store.run_id, store.created, stored_config(store), store.trials())
    return path


def test_samples_are_scenarios_and_epochs_are_their_trials(flaky_run, tmp_path):
    log = inspect_log.read_eval_log(str(export(flaky_run, tmp_path / "log.json")))
    with ResultStore.open(flaky_run / "flaky") as store:
        trials = {(t.task_id, t.persona, t.trial): t for t in store.trials()}
    assert log.status == "success"
    assert log.eval.config.epochs == TRIALS
    assert log.eval.dataset.sample_ids == [f"{t}/{p}" for t in TASKS for p in PERSONAS]
    assert {(s.id, s.epoch) for s in log.samples} == {(f"{t}/{p}", i + 1) for t, p, i in trials}
    for sample in log.samples:
        task, persona = sample.id.split("/")
        trial = trials[(task, persona, sample.epoch - 1)]
        assert sample.scores["reward"].value == trial.reward
        assert sample.scores["reward"].explanation == (trial.signature or "passed")
        assert sample.scores["reward"].metadata["signature"] == trial.signature
        assert {"state", "output", "trajectory"} <= set(sample.scores)
        assert sample.metadata["seed"] == trial.seed
    assert {s.scores["reward"].value for s in log.samples} == {0, 1}, "the run should hold passes and failures"


def test_the_conversation_is_in_inspects_message_schema(flaky_run, tmp_path):
    log = inspect_log.read_eval_log(str(export(flaky_run, tmp_path / "log.json")))
    with ResultStore.open(flaky_run / "flaky") as store:
        first = store.trials()[0]
    sample = next(s for s in log.samples if s.id == f"{first.task_id}/{first.persona}" and s.epoch == first.trial + 1)
    said = [e for e in first.events if e["kind"] in ("user", "agent")]
    spoken = [m for m in sample.messages if m.role in ("user", "assistant") and m.text]
    assert [(m.role, m.text) for m in spoken] == [("user" if e["kind"] == "user" else "assistant", e["text"]) for e in said]
    assert sample.input == said[0]["text"]
    calls = [e for e in first.events if e["kind"] == "tool"]
    assert calls, "the trial should call tools"
    made = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
    assert [(c.function, c.arguments) for c in made] == [(e["name"], e["args"]) for e in calls]
    results = {m.tool_call_id: json.loads(m.text) for m in sample.messages if m.role == "tool"}
    assert [results[c.id] for c in made] == [e["result"] for e in calls]


def test_results_are_passhats_own_figures_and_the_config_is_metadata(flaky_run, tmp_path):
    path = export(flaky_run, tmp_path / "log.json")
    with ResultStore.open(flaky_run / "flaky") as store:
        report, config = build_report(store), store.config
    header = inspect_log.read_eval_log(str(path), header_only=True)  # what `inspect view` lists
    assert header.eval.metadata == config
    assert header.eval.model == "reference:flaky"
    reward = next(s for s in header.results.scores if s.name == "reward")
    m = report.metrics
    assert reward.metrics["avg_reward"].value == pytest.approx(m.avg_reward)
    assert reward.metrics[f"pass^{TRIALS}"].value == pytest.approx(m.pass_hat_k[TRIALS])
    assert reward.metrics[f"pass@{TRIALS}"].value == pytest.approx(m.pass_at_k[TRIALS])
    assert header.results.total_samples == len(TASKS) * len(PERSONAS) * TRIALS


def record(task: str, trial: int, **fields) -> TrialRecord:
    base = dict(persona="baseline", seed=trial, reward=1, signature=None, infra_error=None, started=1.0, finished=2.0)
    base.update(grade={"reward": 1, "signature": None, "state_ok": True, "output_ok": True, "trajectory_ok": True, "details": {}})
    return TrialRecord(
        task_id=task, trial=trial, events=fields.pop("events", [{"kind": "user", "text": "hi"}]), **{**base, **fields}
    )


def hand_made_run(tmp_path: Path, trials: list[TrialRecord], planned: int = 1) -> Path:
    config = RunConfig(agent="llm:openai/gpt-test", personas=["baseline"], tasks=["t1"], trials=planned)
    with ResultStore.create(tmp_path / "hand", "hand", config.model_dump()) as store:
        for trial in trials:
            store.record(trial)
    return tmp_path


def test_trials_that_could_not_be_judged_are_sample_errors_without_scores(tmp_path):
    run = hand_made_run(
        tmp_path,
        [
            record("t1", 0),
            record("t1", 1, reward=None, signature="infra_error", infra_error="Traceback ...\nTimeoutError: model API down"),
            record("t1", 2, reward=0, signature="user_simulator_error"),
        ],
        planned=3,
    )
    log = inspect_log.read_eval_log(str(export(run, tmp_path / "log.json", "hand")))
    by_epoch = {s.epoch: s for s in log.samples}
    assert by_epoch[1].scores["reward"].value == 1 and by_epoch[1].error is None
    assert by_epoch[2].scores is None and by_epoch[2].error.message == "infra_error: TimeoutError: model API down"
    assert "Traceback" in by_epoch[2].error.traceback
    assert by_epoch[3].scores is None and by_epoch[3].error.message.startswith("user_simulator_error")
    reward = next(s for s in log.results.scores if s.name == "reward")
    assert (reward.scored_samples, reward.unscored_samples) == (1, 2)
    assert reward.metrics["avg_reward"].value == 1.0  # only the judged trial counts
    assert log.eval.model == "openai/gpt-test"  # Inspect's provider/model


def test_tool_errors_bad_arguments_and_passhats_annotations_reach_the_tool_messages(tmp_path):
    fault = {"class": "timeout", "actual": {"status": "ok", "data": 1}}
    events = [
        {"kind": "user", "text": "close my account"},
        {"kind": "tool", "call_id": "c1", "name": "close", "args": "not json", "result": {"status": "error", "error": {"type": "bad_arguments", "message": "args must be an object", "retryable": False}}},
        {"kind": "tool", "call_id": "c2", "name": "close", "args": {"id": "A-1"}, "result": {"status": "error", "error": {"type": "timeout", "message": "timed out", "retryable": True}}, "fault": fault},
        {"kind": "agent", "text": "Done."},
        {"kind": "end", "text": "satisfied"},
        {"kind": "guard", "call_id": None, "name": "close", "args": None, "result": {"status": "ok"}, "text": "ticket T-1 done by ops"},
    ]  # fmt: skip
    log = inspect_log.read_eval_log(
        str(export(hand_made_run(tmp_path, [record("t1", 0, events=events)]), tmp_path / "l.json", "hand"))
    )
    messages = log.samples[0].messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    bad = messages[1].tool_calls[0]
    assert bad.arguments == {} and "not json" in bad.parse_error
    assert messages[2].error.message == "args must be an object"
    assert messages[4].metadata == {"fault": fault}
    assert log.samples[0].metadata["end"] == "satisfied"
    assert log.samples[0].metadata["operator"][0]["text"] == "ticket T-1 done by ops"  # after the conversation: no message


def test_an_interrupted_run_is_a_cancelled_eval(tmp_path):
    log = inspect_log.read_eval_log(
        str(export(hand_made_run(tmp_path, [record("t1", 0)], planned=4), tmp_path / "l.json", "hand"))
    )
    assert log.status == "cancelled"
    assert (log.results.total_samples, log.results.completed_samples) == (4, 1)


def test_trials_are_read_once_as_a_stream(tmp_path):
    """The export takes any iterable of trials (a store's cursor) and never needs them all at once."""
    seen = []

    def stream() -> Iterator[TrialRecord]:
        for i in range(50):
            seen.append(i)
            yield record("t1", i)

    config = RunConfig(personas=["baseline"], tasks=["t1"], trials=50)
    assert write_inspect_log(tmp_path / "log.json", "r", 0.0, config, stream()) == 50
    assert seen == list(range(50))
    assert len(inspect_log.read_eval_log(str(tmp_path / "log.json")).samples) == 50


def test_a_failed_export_leaves_the_previous_log_and_no_partial_file(tmp_path):
    path = tmp_path / "log.json"
    path.write_text("previous")

    def broken() -> Iterator[TrialRecord]:
        yield record("t1", 0)
        raise RuntimeError("store went away")

    config = RunConfig(personas=["baseline"], tasks=["t1"], trials=2)
    with pytest.raises(RuntimeError):
        write_inspect_log(path, "r", 0.0, config, broken())
    assert path.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["log.json"]


def test_cli_writes_into_a_folder_under_the_name_inspect_view_lists(flaky_run, tmp_path):
    result = CliRunner().invoke(main, ["export", "flaky", "--format", "inspect", "-o", str(tmp_path), "--out", str(flaky_run)])
    assert result.exit_code == 0, result.output
    listed = inspect_log.list_eval_logs(str(tmp_path))
    assert len(listed) == 1
    assert len(inspect_log.read_eval_log(listed[0]).samples) == len(TASKS) * len(PERSONAS) * TRIALS


def test_a_folder_named_with_a_trailing_slash_is_made_as_the_readme_writes_it(flaky_run, tmp_path, monkeypatch):
    """`-o logs/` on a fresh clone, where logs does not exist yet: a name ending in / is a folder to make, not a file."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["export", "flaky", "--format", "inspect", "-o", "logs/", "--out", str(flaky_run)])
    assert result.exit_code == 0, result.output
    assert len(inspect_log.list_eval_logs(str(tmp_path / "logs"))) == 1
    bare = CliRunner().invoke(main, ["export", "flaky", "--format", "inspect", "-o", "logs2", "--out", str(flaky_run)])
    assert bare.exit_code == 2 and "a name ending in /" in bare.output and not (tmp_path / "logs2").exists()


def test_cli_refuses_a_log_name_inspect_cannot_read(flaky_run, tmp_path):
    result = CliRunner().invoke(main, ["export", "flaky", "-o", str(tmp_path / "log.txt"), "--out", str(flaky_run)])
    assert result.exit_code == 2
    assert "an Inspect eval log is a .json or .eval file" in result.output
    assert not (tmp_path / "log.txt").exists()


INSPECT = Path(sys.executable).parent / "inspect"


@pytest.mark.skipif(not INSPECT.exists() and shutil.which("inspect") is None, reason="the inspect command is not installed")
def test_the_log_is_valid_against_the_schema_inspect_log_schema_prints(flaky_run, tmp_path):
    """Strictly: every field Inspect's own log model requires is there (its reader fills defaults, the schema does not)."""
    command = str(INSPECT) if INSPECT.exists() else "inspect"
    api = json.loads(subprocess.run([command, "log", "schema"], capture_output=True, text=True, check=True).stdout)
    validator = jsonschema.Draft202012Validator({"$ref": "#/components/schemas/EvalLog", "components": api["components"]})
    log = json.loads(export(flaky_run, tmp_path / "log.json").read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:120]}" for e in validator.iter_errors(log)]
    assert errors == []


def test_the_answer_inspect_view_shows_is_the_agents_last_message(flaky_run, tmp_path):
    log = inspect_log.read_eval_log(str(export(flaky_run, tmp_path / "log.json")))
    for sample in log.samples:
        (choice,) = sample.output.choices
        assert choice.message.role == "assistant" and choice.message.text == sample.output.completion != ""


def test_inspects_file_name_parser_reads_the_task_and_the_eval_task_id(flaky_run, tmp_path):
    """A run id of passhat's own shape ("20261201-120000-abcd"): Inspect reads a file name's id up to its first "-"."""
    run_id = "20261201-120000-abcd"
    with ResultStore.open(flaky_run / "flaky") as store:
        name = inspect_log_name(run_id, store.created, stored_config(store))
        write_inspect_log(tmp_path / name, run_id, store.created, stored_config(store), store.trials())
    (listed,) = inspect_log.list_eval_logs(str(tmp_path))
    header = inspect_log.read_eval_log(listed, header_only=True)
    assert (listed.task, listed.task_id) == ("passhat-retail", header.eval.task_id)
    assert header.eval.run_id == run_id


def test_an_eval_file_is_inspects_native_log_holding_the_same_samples_and_scores(flaky_run, tmp_path):
    result = CliRunner().invoke(main, ["export", "flaky", "-o", str(tmp_path / "run.eval"), "--out", str(flaky_run)])
    assert result.exit_code == 0, result.output
    assert zipfile.is_zipfile(tmp_path / "run.eval"), "Inspect's .eval format is a zip archive"
    native = inspect_log.read_eval_log(str(tmp_path / "run.eval"))
    plain = inspect_log.read_eval_log(str(export(flaky_run, tmp_path / "run.json")))

    def by_sample(log: inspect_log.EvalLog) -> dict:
        return {(s.id, s.epoch): ({n: v.value for n, v in s.scores.items()}, [m.text for m in s.messages]) for s in log.samples}

    assert len(native.samples) == len(TASKS) * len(PERSONAS) * TRIALS
    assert by_sample(native) == by_sample(plain)
    assert native.results == plain.results and native.eval.metadata == plain.eval.metadata
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.eval", "run.json"], "no staging files are left behind"
    (listed,) = inspect_log.list_eval_logs(str(tmp_path))  # `inspect view` lists every .eval log, whatever its name
    assert listed.name.endswith("/run.eval") and "note:" not in result.output


def test_an_eval_file_without_inspect_ai_says_how_to_install_it(flaky_run, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # the import fails, as without inspect-ai
    result = CliRunner().invoke(main, ["export", "flaky", "-o", str(tmp_path / "run.eval"), "--out", str(flaky_run)])
    assert result.exit_code == 2
    assert "pip install 'passhat[inspect]'" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []
