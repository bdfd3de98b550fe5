"""The command line: every command works, and every mistake a user can make ends in one clear
paragraph with exit status 2 — never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from passhat.cli import main
from passhat.domains import load_task_files
from passhat.errors import UserError

SMALL = ["--tasks", "retail-001,retail-002", "--personas", "baseline,impatient", "--trials", "3"]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    "args,named",
    [
        (["run", "--domain", "bakery"], "--domain"),
        (["run", "--agent", "reference:sloppy"], "--agent"),
        (["run", "--user", "telepathic"], "--user"),
        (["run", "--personas", "baseline,grumpy"], "--personas"),
        (["run", "--tasks", "retail-001,retail-999"], "--tasks"),
        (["run", "--resume", "no-such-run"], "--resume"),
        (["run", "--run-id", "../escape"], "--run-id"),
        (["report", "no-such-run"], "RUN_ID"),
        (["tasks", "--domain", "bakery"], "--domain"),
        (["tasks", "show", "retail-999"], "retail-999"),
        (["check", "--tasks", "nope"], "--tasks"),
    ],
)
def test_bad_input_is_one_clear_paragraph_and_exit_2(tmp_path, args, named):
    result = invoke(*args, *(["--out", str(tmp_path)] if args[0] in ("run", "report") else []))
    assert result.exit_code == 2, result.output
    assert named in result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("error:")


@pytest.mark.parametrize("args", [["run", "--trials", "0"], ["run", "--mode", "lenient"], ["run", "--bogus"]])
def test_bad_flags_are_usage_errors(args):
    result = invoke(*args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_broken_task_files_name_the_file_and_the_field(tmp_path):
    (tmp_path / "a.yaml").write_text("id: a\nsummary: s\ncustomer: {customer_id: C-1}\n")
    with pytest.raises(UserError) as err:
        load_task_files(tmp_path)
    message = str(err.value)
    assert "a.yaml" in message and "customer.first_name" in message and "goals" in message
    (tmp_path / "a.yaml").write_text("id: [unclosed\n")
    with pytest.raises(UserError, match="a.yaml is not valid YAML"):
        load_task_files(tmp_path)


def test_run_then_report_and_json(tmp_path):
    out, path = tmp_path / "runs", tmp_path / "report.json"
    result = invoke("run", *SMALL, "--out", str(out), "--run-id", "r1", "--json", str(path))
    assert result.exit_code == 0, result.output
    assert "pass^k" in result.output and "by persona" in result.output
    doc = json.loads(path.read_text())
    assert doc["run_id"] == "r1"
    assert doc["config"]["personas"] == ["baseline", "impatient"] and doc["config"]["trials"] == 3
    m = doc["metrics"]
    assert m["scenarios"] == 4 and m["trials_per_scenario"] == 3
    assert set(m["pass_hat_k"]) == set(m["pass_at_k"]) == {"1", "2", "3"}
    assert set(m["by_persona"]) == {"baseline", "impatient"}
    assert m["infra_errors"] == 0
    assert {(s["task_id"], s["persona"]) for s in doc["scenarios"]} == {
        (t, p) for t in ("retail-001", "retail-002") for p in ("baseline", "impatient")
    }
    assert all(len(s["rewards"]) == 3 for s in doc["scenarios"])

    again = invoke("report", "r1", "--out", str(out), "--json", str(tmp_path / "again.json"))
    assert again.exit_code == 0
    assert json.loads((tmp_path / "again.json").read_text()) == doc
    assert "r1" in invoke("runs", "--out", str(out)).output


def test_resume_refuses_to_change_the_configuration(tmp_path):
    invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "r1")
    result = invoke("run", "--resume", "r1", "--trials", "5", "--out", str(tmp_path))
    assert result.exit_code == 2 and "--trials" in result.output


def test_resume_of_a_finished_run_runs_nothing(tmp_path):
    invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "r1")
    result = invoke("run", "--resume", "r1", "--out", str(tmp_path))
    assert result.exit_code == 0


def test_listing_commands():
    assert "retail" in invoke("domains").output
    listed = invoke("tasks")
    assert listed.exit_code == 0 and "retail-001" in listed.output
    shown = invoke("tasks", "show", "retail-001")
    assert shown.exit_code == 0 and "goals:" in shown.output


def test_check_proves_tasks():
    result = invoke("check", "--tasks", "retail-001,retail-002", "-v")
    assert result.exit_code == 0, result.output
    assert "2 of 2 tasks hold" in result.output
