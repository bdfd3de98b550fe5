"""The command line: every command works, and every mistake a user can make ends in one clear
paragraph with exit status 2 — never a traceback."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from passhat.cli import main
from passhat.domains import load_task_files
from passhat.domains.retail.model import RetailTask
from passhat.errors import UserError

SMALL = ["--tasks", "retail-001,retail-002", "--personas", "baseline,impatient", "--trials", "3"]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    "args,named",
    [
        (["run", "--domain", "bakery"], "--domain"),
        (["run", "--agent", "reference:sloppy"], "--agent"),
        (["run", "--customer", "telepathic"], "--customer"),
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
        load_task_files(tmp_path, RetailTask)
    message = str(err.value)
    assert "a.yaml" in message and "customer.first_name" in message and "goals" in message
    (tmp_path / "a.yaml").write_text("id: [unclosed\n")
    with pytest.raises(UserError, match="a.yaml is not valid YAML"):
        load_task_files(tmp_path, RetailTask)


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


def stored_config(folder: Path) -> dict:
    from passhat.store import ResultStore

    with ResultStore.open(folder) as store:
        return store.config


def edit_config(folder: Path, **changes) -> None:
    from passhat.store import ResultStore

    with ResultStore.open(folder) as store:
        config = {k: v for k, v in {**store.config, **changes}.items() if v is not ...}
        store._conn.execute("UPDATE run SET config = ?", (json.dumps(config),))


def test_repeated_task_and_persona_ids_count_once(tmp_path):
    result = invoke(
        "run",
        "--tasks",
        "retail-001,retail-002,retail-001",
        "--personas",
        "baseline,impatient,baseline",
        "--trials",
        "2",
        "--out",
        str(tmp_path),
        "--run-id",
        "d",
    )
    assert result.exit_code == 0, result.output
    config = stored_config(tmp_path / "d")
    assert config["tasks"] == ["retail-001", "retail-002"] and config["personas"] == ["baseline", "impatient"]


def test_an_empty_list_of_tasks_or_personas_means_all_of_them(tmp_path):
    from passhat.customers.personas import PERSONAS
    from passhat.domains import load_domain
    from passhat.run.runner import new_config

    defaults = dict(domain="retail", agent="reference:flaky", user="scripted", faults="", guard="off")
    config = new_config(**defaults, tasks=",", personas=" , ")
    assert config.tasks == list(load_domain("retail").tasks) and config.personas == list(PERSONAS)


def test_ctrl_c_prints_how_to_finish_and_exits_130(tmp_path, monkeypatch, caplog):
    import gc

    import passhat.run.evaluate as evaluate_module

    real = evaluate_module.execute

    async def interrupted(config, store, concurrency, on_trial=None, *args, **kwargs):
        def then_ctrl_c(record):
            on_trial(record)
            if len(store.completed_keys()) == 3:
                signal.raise_signal(signal.SIGINT)  # as a terminal's Ctrl-C arrives: asyncio cancels the run

        return await real(config, store, 1, then_ctrl_c, *args, **kwargs)

    monkeypatch.setattr(evaluate_module, "execute", interrupted)
    result = invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "c")
    assert result.exit_code == 130, result.output
    assert f"interrupted: 3 of 12 trials stored; finish with `passhat run --resume c --out {tmp_path}`" in result.output
    assert "Traceback" not in result.output
    del result  # its exception's context holds the interrupted run's frames
    gc.collect()  # a task left holding the interrupt would log it when collected (mid-parse, it broke ast.parse)
    assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text
    monkeypatch.setattr(evaluate_module, "execute", real)
    resumed = invoke("run", "--resume", "c", "--out", str(tmp_path))
    assert resumed.exit_code == 0, resumed.output
    assert len(stored_config(tmp_path / "c")["tasks"]) == 2


@pytest.mark.parametrize("flag", ["--out", "--json", "--cache"])
def test_an_unusable_output_path_is_a_user_error_before_any_trial(tmp_path, flag):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    out = tmp_path / "runs"
    paths = {
        "--out": ["--out", str(blocker / "runs")],
        "--json": ["--out", str(out), "--json", str(blocker / "r.json")],
        "--cache": ["--out", str(out), "--cache", str(blocker / "sub" / "c.sqlite")],
    }
    result = invoke("run", *SMALL, "--run-id", "u", *paths[flag])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(("error:", "Usage:")) and "Traceback" not in result.output
    assert flag in result.output and str(blocker) in " ".join(result.output.split())
    assert not out.exists() and not (blocker.parent / "runs").exists()  # no run folder was made


def test_resume_refuses_changed_tasks_or_code_and_warns_for_old_stores(tmp_path):
    invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "r1")
    config = stored_config(tmp_path / "r1")
    assert len(config["tasks_fingerprint"]) == 16 and config["passhat_version"]
    edit_config(tmp_path / "r1", tasks_fingerprint="0" * 16)
    tasks = invoke("run", "--resume", "r1", "--out", str(tmp_path))
    assert tasks.exit_code == 2 and "task definitions" in tasks.output and "fresh run" in tasks.output
    edit_config(tmp_path / "r1", tasks_fingerprint=config["tasks_fingerprint"], passhat_version="0.0.1")
    code = invoke("run", "--resume", "r1", "--out", str(tmp_path))
    assert code.exit_code == 2 and "passhat 0.0.1" in code.output and "fresh run" in code.output
    edit_config(tmp_path / "r1", tasks_fingerprint=..., passhat_version=...)  # a store of an older passhat
    old = invoke("run", "--resume", "r1", "--out", str(tmp_path))
    assert old.exit_code == 0 and "warning:" in old.stderr and "older passhat" in old.stderr


def test_resume_of_a_store_with_an_invalid_config_names_the_file(tmp_path):
    invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "r1")
    edit_config(tmp_path / "r1", personas=..., trials=-3)
    result = invoke("run", "--resume", "r1", "--out", str(tmp_path))
    assert result.exit_code == 2 and result.output.startswith("error:") and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert "results.sqlite" in text and "personas" in text and "trials" in text


def test_resume_ignores_values_a_config_file_sets_but_not_typed_flags(tmp_path):
    invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "r1")
    config = tmp_path / "eval.toml"
    config.write_text('trials = 3\nmax-turns = 20\nrun-id = "other"\n')
    result = invoke("run", "--config", str(config), "--resume", "r1", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    typed = invoke("run", "--config", str(config), "--resume", "r1", "--out", str(tmp_path), "--seed", "4")
    assert typed.exit_code == 2 and "--seed" in typed.output and "--trials" not in typed.output


def test_runs_lists_folders_progress_and_unreadable_stores(tmp_path):
    invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "r1")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "results.sqlite").write_bytes(b"not a store")
    (tmp_path / "notes").mkdir()
    result = invoke("runs", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    rows = {line.split()[1]: line for line in result.stdout.splitlines() if line.split()[1:2] in (["r1"], ["broken"])}
    assert "12/12" in rows["r1"]  # done/planned: 2 tasks × 2 personas × 3 trials
    assert "unreadable" in rows["broken"] and "notes" not in result.stdout


# --- what a user types is text, never rich markup ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args,shown",
    [
        (["report", "[/bold]"], "'[/bold]'"),
        (["run", "--tasks", "[/x]"], "'[/x]'"),
        (["run", "--personas", "[/]"], "[/]"),
        (["run", "--tasks", "[bold]retail-001"], "'[bold]retail-001'"),  # markup would eat "[bold]"
        (["run", "--faults", "{tmp}/[/x].yaml"], "[/x].yaml"),
    ],
)
def test_markup_in_what_a_user_types_is_printed_as_typed(tmp_path, args, shown):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = invoke(*args, "--out", str(tmp_path))
    assert result.exit_code == 2 and result.exception is not None and isinstance(result.exception, SystemExit)
    assert result.output.startswith("error:") and shown in " ".join(result.output.split())


def test_the_config_file_message_keeps_its_prices_table(tmp_path):
    config = tmp_path / "eval.toml"
    config.write_text("bogus = 1\n")
    result = invoke("run", "--config", str(config), "--out", str(tmp_path))
    assert result.exit_code == 2 and "'bogus'" in result.output and "[prices]" in result.output


def test_names_from_a_stored_run_are_printed_as_text(tmp_path):
    invoke("run", "--tasks", "retail-001", "--personas", "baseline", "--trials", "1", "--out", str(tmp_path), "--run-id", "r1")
    edit_config(tmp_path / "r1", agent="llm:openai/[/x]", domain="retail")
    for args in (["report", "r1"], ["runs"]):
        result = invoke(*args, "--out", str(tmp_path))
        assert result.exit_code == 0 and result.exception is None, result.output
        assert "llm:openai/[/x]" in result.output


# --- flags: each mistake is exit 2 naming the flag, before any work -----------------------------------------------


LONG_NAME = "x" * 300


@pytest.mark.parametrize(
    "args,flag",
    [
        (["run", "--request-timeout", "nan"], "--request-timeout"),
        (["run", "--retry-backoff", "nan"], "--retry-backoff"),
        (["run", "--agent-temperature", "nan"], "--agent-temperature"),
        (["run", "--user-temperature", "inf"], "--user-temperature"),
        (["run", "--agent-base-url", "http://[::1"], "--agent-base-url"),
        (["run", "--user-base-url", "http://localhost:99999"], "--user-base-url"),
        (["run", "--agent", "llm:openai/gpt\udcff", "--agent-base-url", "http://127.0.0.1:9"], "'--agent'"),
        (["run", "--out", f"{{tmp}}/{LONG_NAME}"], "--out"),
        (["run", "--json", f"{{tmp}}/{LONG_NAME}/r.json"], "--json"),
        (["run", "--cache", f"{{tmp}}/{LONG_NAME}.sqlite"], "--cache"),
        (["run", "--cache", "{tmp}/fifo"], "--cache"),
        (["run", "--config", "{tmp}/fifo"], "--config"),
        (["run", "--json", "{tmp}/a-file/r.json"], "--json"),
        (["run", "--gate", "k=x,min=0.9"], "--gate"),
        (["report", "r1", "--html", "{tmp}/a-file/r.html"], "--html"),
        (["report", "r1", "--out", f"{{tmp}}/{LONG_NAME}"], "--out"),
        (["tasks", "show", "retail-999"], "TASK_ID"),
        (["runs", "--out", "{tmp}/missing"], "--out"),
    ],
)
def test_a_bad_flag_is_exit_2_naming_it(tmp_path, args, flag):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "a-file").write_text("x")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = invoke(*args, *(["--out", str(tmp_path)] if args[0] == "run" and "--out" not in args else []))
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert flag in text
    assert "invalid literal" not in text and "--tasks" not in text and "File exists" not in text
    assert "pass^" not in text  # nothing of a report was printed before the error
    assert not list(tmp_path.glob("*/results.sqlite"))  # no run was started


def test_legitimate_values_of_the_checked_flags_are_accepted(tmp_path):
    result = invoke(
        "run",
        "--tasks",
        "retail-001",
        "--personas",
        "baseline",
        "--trials",
        "1",
        "--out",
        str(tmp_path / "runs"),
        "--run-id",
        "r1",
        "--agent-temperature",
        "0.7",
        "--request-timeout",
        "0.5",
        "--retry-backoff",
        "0",
        "--agent-base-url",
        "http://[::1]:8000/v1",
        "--user-base-url",
        "https://models.example/v1",
        "--json",
        str(tmp_path / "new" / "folder" / "r.json"),
        "--cache",
        str(tmp_path / "c.sqlite"),
    )
    assert result.exit_code == 0, result.output
    config = stored_config(tmp_path / "runs" / "r1")
    assert config["agent_temperature"] == 0.7 and config["agent_base_url"] == "http://[::1]:8000/v1"
    assert (tmp_path / "new" / "folder" / "r.json").is_file()


def test_runs_of_an_empty_folder_says_so(tmp_path):
    result = invoke("runs", "--out", str(tmp_path))
    assert result.exit_code == 0 and "no runs in" in result.output and str(tmp_path) in result.output


def test_runs_never_cuts_a_run_id_or_the_early_stop_marker(tmp_path, monkeypatch):
    from rich.console import Console

    import passhat.cli.run as run_module

    run_id = "a-run-with-a-rather-long-name-2026-01-01"
    invoke(
        "run",
        "--tasks",
        "retail-001,retail-002",
        "--personas",
        "all",
        "--trials",
        "2",
        "--out",
        str(tmp_path),
        "--run-id",
        run_id,
        "--gate",
        "k=2,min=0.5",
        "--early-stop",
        "--concurrency",
        "1",  # so that a scenario is settled before all its trials are handed out
    )
    edit_config(tmp_path / run_id, agent="llm:openai/a-model-with-a-long-name-too")
    monkeypatch.setattr(run_module, "console", Console(width=80))  # not a terminal: output to a file or a pipe
    result = invoke("runs", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1:-1] for line in result.stdout.splitlines() if line.startswith("│")]
    assert "(early stop)" in result.stdout and "…" not in result.stdout
    assert "".join(cells[0].strip() for cells in rows) == run_id  # folded over lines at worst, never cut


def test_one_scenario_and_one_trial_are_singular(tmp_path):
    result = invoke("run", "--tasks", "retail-001", "--personas", "baseline", "--trials", "1", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "1 scenario (tasks × personas) × 1 trial;" in text and "1 trial to run" in text
    assert "1 scenarios" not in text and "1 trials" not in text
