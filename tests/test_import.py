"""`passhat import`: another harness's results become a run every command reads — its figures those an independent
count of the source gives, its infra errors counted apart, no resume suggested, no writer lock left — and a malformed
or hostile source is one clear paragraph naming the file, line and field, exit 2, with nothing written."""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passhat.cli import main
from passhat.errors import UserError
from passhat.importers.common import write_run
from passhat.importers.jsonl import read_jsonl
from passhat.store import ResultStore


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def pass_hat_k(rows: list[dict], k: int) -> float:
    """pass^k as the source's own rows give it, computed apart from passhat: per task, C(c,k)/C(n,k) over its judged
    trials, averaged over the tasks."""
    per_task: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        if row.get("infra_error") is None:
            per_task[row["task"]].append(int(row["reward"]))
    return sum(math.comb(sum(r), k) / math.comb(len(r), k) for r in per_task.values()) / len(per_task)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def rows() -> list[dict]:
    """Ten tasks × six trials with seeded rewards, two tasks tagged, one with another persona, one trial an infra
    error, one with a transcript."""
    rng = random.Random(7)
    out = [{"task": f"task-{t}", "trial": i, "reward": int(rng.random() < 0.3 + 0.07 * t)} for t in range(10) for i in range(6)]
    out[0].update(tags=["refunds"], cost_usd=0.02, input_tokens=900, output_tokens=80, model="gpt-x")
    out[0]["messages"] = [
        {"role": "system", "content": "be helpful"},
        {"role": "user", "content": "refund my order"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "find_order", "arguments": {"id": 7}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"order": 7}'},
        {"role": "assistant", "content": "refunded"},
    ]
    out[6]["tags"] = ["refunds", "orders"]
    for row in out[54:]:  # task-9's scenario is with another persona
        row["persona"] = "impatient"
    del out[7]["reward"]
    out[7]["infra_error"] = "HTTP 503 from the model API"
    return out


def test_the_figures_are_those_of_an_independent_count_of_the_source(tmp_path, rows):
    source = write_jsonl(tmp_path / "results.jsonl", rows)
    result = invoke("import", str(source), "--format", "jsonl", "--run-id", "theirs", "--out", str(tmp_path / "runs"))
    assert result.exit_code == 0, result.output
    report = invoke("report", "theirs", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "r.json"), "--gate", "none")
    metrics = json.loads((tmp_path / "r.json").read_text())["metrics"]
    assert metrics["infra_errors"] == 1  # counted apart, never a failure
    assert metrics["scenarios"] == 10
    for k in range(1, 6):
        assert metrics["pass_hat_k"][str(k)] == pytest.approx(pass_hat_k(rows, k))
    assert set(metrics["by_tag"]) >= {"refunds", "orders"}
    assert set(metrics["by_persona"]) == {"default", "impatient"}
    assert metrics["cost_usd"] == pytest.approx(0.02)
    assert "--resume" not in report.output and "resume with" not in report.output


def test_an_imported_run_reads_like_any_run_and_leaves_no_writer_lock(tmp_path, rows):
    runs = tmp_path / "runs"
    for run_id, flip in (("before", 0), ("after", 1)):
        changed = [dict(r, reward=1 - r["reward"]) if flip and "reward" in r and r["trial"] == 0 else r for r in rows]
        assert invoke("import", str(write_jsonl(tmp_path / f"{run_id}.jsonl", changed)), "--format", "jsonl",
                      "--run-id", run_id, "--out", str(runs)).exit_code == 0  # fmt: skip
    assert sorted(p.name for p in runs.iterdir()) == ["after", "before"]  # no staging folder left
    assert sorted(p.name for p in (runs / "before").iterdir()) == ["results.sqlite"]
    assert invoke("compare", "before", "after", "--out", str(runs)).exit_code == 0
    assert invoke("gate", "before", "--k", "2", "--min-pass-hat-k", "0.1", "--out", str(runs)).exit_code in (0, 1)
    assert invoke("traffic", "before", "--per-day", "100", "--out", str(runs)).exit_code == 0
    html = invoke("report", "before", "--html", str(tmp_path / "r.html"), "--full", "--gate", "none", "--out", str(runs))
    assert html.exit_code == 0 and "refund my order" in (tmp_path / "r.html").read_text()
    exported = invoke("export", "before", "-o", str(tmp_path / "log.json"), "--out", str(runs))
    assert exported.exit_code == 0, exported.output
    with ResultStore.open(runs / "before") as store:
        first = store.trials()[0]
    assert [e["kind"] for e in first.events] == ["user", "tool", "agent"]
    assert first.events[1] == {"kind": "tool", "call_id": "c1", "name": "find_order", "args": {"id": 7},
                               "result": {"status": "ok", "data": '{"order": 7}'}}  # fmt: skip


def test_an_imported_run_is_not_resumed(tmp_path, rows):
    invoke("import", str(write_jsonl(tmp_path / "a.jsonl", rows)), "--format", "jsonl", "--run-id", "a", "--out", str(tmp_path))
    result = CliRunner().invoke(main, ["run", "--resume", "a", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "imported" in result.output and "Traceback" not in result.output


BAD_ROWS = [
    ({"task": "t", "trial": 0}, "a row needs a reward"),
    ({"task": "t", "trial": 0, "reward": 0.5}, "field `reward`"),
    ({"task": "t", "trial": -1, "reward": 1}, "field `trial`"),
    ({"task": "t", "trial": 0, "reward": 1, "infra_error": "x"}, "has no reward"),
    ({"task": "t", "trial": 0, "rewrad": 1, "reward": 1}, "field `rewrad`"),
    ({"task": "", "trial": 0, "reward": 1}, "field `task`"),
    ({"task": "t", "trial": 0, "reward": 1, "cost_usd": -1}, "field `cost_usd`"),
    ({"task": "t", "trial": 0, "reward": 1, "messages": [{"role": "robot"}]}, "field `messages.0.role`"),
    ({"task": "t", "trial": 0, "reward": 1, "signature": "wrong_arguments"}, "only a failed trial"),
]


@pytest.mark.parametrize(("bad", "said"), BAD_ROWS)
def test_a_malformed_row_names_the_file_line_and_field_and_nothing_is_written(tmp_path, bad, said):
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps({"task": "t", "trial": 1, "reward": 1}) + "\n\n" + json.dumps(bad) + "\n")
    result = invoke("import", str(source), "--format", "jsonl", "--run-id", "r", "--out", str(tmp_path / "runs"))
    assert result.exit_code == 2
    assert f"{source} line 3" in result.output and said in result.output, result.output
    assert "nothing was imported" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{not json\n", "line 1 is not valid JSON"),
        ("[1, 2]\n", "line 1 is not a JSON object"),
        ("[" * 100_000 + "\n", "line 1 nests JSON values too deeply"),
        ('{"task": "t", "trial": 0, "reward": 1}\n{"task": "t", "trial": 0, "reward": 0}\n', "line 2: trial 0 of task 't'"),
        ("\n\n", "holds no trial"),
        ('{"task": "t", "trial": 0, "reward": 1, "cost_usd": NaN}\n', "field `cost_usd`"),
        ('{"task": "t", "trial": 0, "reward": 1, "input_tokens": ' + "9" * 5000 + "}\n", "line 1 is not valid JSON"),
    ],
)
def test_a_malformed_file_is_one_clear_paragraph(tmp_path, text, said):
    source = tmp_path / "bad.jsonl"
    source.write_text(text)
    result = invoke("import", str(source), "--format", "jsonl", "--run-id", "r", "--out", str(tmp_path / "runs"))
    assert result.exit_code == 2
    assert said in result.output and "Traceback" not in result.output, result.output
    assert not (tmp_path / "runs").exists()


def test_a_run_id_in_use_is_refused_and_the_run_kept(tmp_path, rows):
    source = write_jsonl(tmp_path / "a.jsonl", rows)
    args = ("import", str(source), "--format", "jsonl", "--run-id", "a", "--out", str(tmp_path / "runs"))
    assert invoke(*args).exit_code == 0
    again = invoke(*args)
    assert again.exit_code == 2 and "already exists" in again.output
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["a"]


# Lines a hostile or broken writer could leave: JSON of any shape, rows with fields of any type, and raw text.
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=20
)
FIELDS = ["task", "trial", "reward", "persona", "tags", "infra_error", "termination", "signature", "cost_usd",
          "input_tokens", "output_tokens", "model_calls", "model", "messages"]  # fmt: skip
rows_st = st.dictionaries(st.sampled_from(FIELDS), values, max_size=8)
lines = st.one_of(rows_st.map(json.dumps), values.map(json.dumps), st.text(max_size=60))


@settings(max_examples=100, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(lines, max_size=6))
def test_hostile_files_never_crash_or_hang(tmp_path_factory, file_lines):
    folder = tmp_path_factory.mktemp("fuzz")
    source = folder / "x.jsonl"
    source.write_text("\n".join(file_lines), encoding="utf-8", errors="surrogatepass")
    try:
        run = write_run(folder / "runs", "r", read_jsonl(source))
    except UserError as exc:
        assert "\n" not in str(exc).strip() or len(str(exc)) < 2000  # one paragraph, bounded
        assert not (folder / "runs" / "r").exists()
        return
    with ResultStore.open(run) as store:
        assert store.trials()


TAU2 = Path(__file__).parent / "imports" / "tau2"
TAU2_OWN = {"avg_reward": 1 / 12, "pass_hat_k": {1: 1 / 12, 2: 0.0, 3: 0.0, 4: 0.0}}  # what τ²-bench computed (README)


def tau2_rows(document: dict) -> list[dict]:
    """The simulations as rows for the independent count: τ²-bench's success is a reward of 1, its infra errors
    left out."""
    return [
        {"task": s["task_id"], "reward": int(abs(s["reward_info"]["reward"] - 1) <= 1e-6)}
        if s["termination_reason"] != "infrastructure_error" else {"task": s["task_id"], "infra_error": "x"}
        for s in document["simulations"]
    ]  # fmt: skip


def report_metrics(tmp_path: Path, source: Path, run_id: str, fmt: str, *extra: str) -> dict:
    runs = tmp_path / "runs"
    result = invoke("import", str(source), "--format", fmt, "--run-id", run_id, "--out", str(runs), *extra)
    assert result.exit_code == 0, result.output
    invoke("report", run_id, "--out", str(runs), "--json", str(tmp_path / f"{run_id}.json"), "--gate", "none")
    return json.loads((tmp_path / f"{run_id}.json").read_text())


def test_a_tau2_results_file_gives_tau2s_own_figures(tmp_path):
    report = report_metrics(tmp_path, TAU2 / "results.json", "tau", "tau2")
    metrics, config = report["metrics"], report["config"]
    rows = tau2_rows(json.loads((TAU2 / "results.json").read_text()))
    assert metrics["avg_reward"] == pytest.approx(TAU2_OWN["avg_reward"])
    for k, value in TAU2_OWN["pass_hat_k"].items():
        assert metrics["pass_hat_k"][str(k)] == pytest.approx(value) == pytest.approx(pass_hat_k(rows, k))
    assert config["domain"] == "tau2:mock" and config["mode"] == "tau" and config["trials"] == 4
    assert config["agent"] == "tau2:llm_agent:openai/gpt-4.1-mini"
    assert config["imported"]["writer"].startswith("tau2-bench, git commit")
    assert "1.0 or later" in config["imported"]["writer"]
    assert metrics["model_calls"]["agent"]["model"] == "openai/gpt-4.1-mini" and metrics["cost_usd"] > 0
    with ResultStore.open(tmp_path / "runs" / "tau") as store:
        trial = store.trials()[0]
    assert trial.events[0] == {"kind": "agent", "text": "Hi! How can I help you today?"}
    assert trial.grade["imported"]["termination_reason"] == "user_stop"
    assert "reward_breakdown" in trial.grade["imported"]["reward_info"]


def test_the_folder_layout_is_the_same_run_as_its_results_file(tmp_path):
    whole = report_metrics(tmp_path, TAU2 / "results.json", "whole", "tau2")
    folder = report_metrics(tmp_path, TAU2 / "folder", "folder", "tau2")
    assert folder["metrics"]["pass_hat_k"] == whole["metrics"]["pass_hat_k"]
    assert folder["scenarios"] == whole["scenarios"]


def test_a_tau2_infrastructure_error_is_counted_apart(tmp_path):
    document = json.loads((TAU2 / "results.json").read_text())
    document["simulations"][4]["termination_reason"] = "infrastructure_error"  # edited: the stub never failed
    source = tmp_path / "results.json"
    source.write_text(json.dumps(document))
    report = report_metrics(tmp_path, source, "infra", "tau2")
    assert report["metrics"]["infra_errors"] == 1
    assert report["metrics"]["pass_hat_k"]["3"] == pytest.approx(pass_hat_k(tau2_rows(document), 3))
    assert all("--resume" not in caveat for caveat in report["caveats"])


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d["simulations"][2]["reward_info"].update(reward="high"), "simulation 2: field `reward_info.reward`"),
        (lambda d: d["simulations"][0].pop("task_id"), "simulation 0: field `task_id`"),
        (lambda d: d["simulations"][3].update(seed=2**70), "simulation 3: field `seed`"),  # more than SQLite holds
        (lambda d: d.pop("info"), "is not a τ²-bench results file"),
        (lambda d: d.update(simulations={"a": 1}), "field `simulations`"),
        (lambda d: d["simulations"][1].update(trial=0, task_id=d["simulations"][0]["task_id"]), "was already given"),
    ],
)
def test_a_malformed_tau2_file_names_the_simulation_and_field(tmp_path, edit, said):
    document = json.loads((TAU2 / "results.json").read_text())
    edit(document)
    source = tmp_path / "results.json"
    source.write_text(json.dumps(document))
    result = invoke("import", str(source), "--format", "tau2", "--run-id", "r", "--out", str(tmp_path / "runs"))
    assert result.exit_code == 2
    assert said in result.output and "Traceback" not in result.output, result.output
    assert not (tmp_path / "runs").exists()


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory) -> tuple[Path, Path, list[tuple[str, int, str | None]]]:
    """One eval written by inspect-ai's own writer as .eval and as .json: two samples × four epochs, scored `reward`
    (CORRECT or INCORRECT) and `judge` (0.5 throughout), one epoch ended in an error. Also the (sample, epoch, reward
    value) truth, for the independent count."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelUsage
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall

    truth = [("refund", e, "C" if e != 3 else "I") for e in range(1, 5)] + [("move", e, "CIIC"[e - 1]) for e in range(1, 5)]
    truth[6] = ("move", 3, None)  # the sample that errored
    conversation = [
        ChatMessageUser(content="refund order 7"),
        ChatMessageAssistant(content="", tool_calls=[ToolCall(id="c1", function="refund", arguments={"order": 7})]),
        ChatMessageTool(content="refunded", tool_call_id="c1", function="refund"),
        ChatMessageAssistant(content="Done."),
    ]
    samples = [
        EvalSample(
            id=sample, epoch=epoch, input="refund order 7", target="refunded", messages=conversation,
            scores={"reward": Score(value=value), "judge": Score(value=0.5)} if value else {},
            error=None if value else EvalError(message="RateLimitError: 429", traceback="", traceback_ansi=""),
            model_usage={"openai/gpt-4o": ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110, total_cost=0.001)},
        )
        for sample, epoch, value in truth
    ]  # fmt: skip
    spec = EvalSpec(created="2026-12-01T10:00:00+00:00", task="helpdesk", dataset=EvalDataset(name="helpdesk", samples=2),
                    model="openai/gpt-4o", config=EvalConfig(epochs=4), packages={"inspect_ai": "0.3.285"})  # fmt: skip
    folder = tmp_path_factory.mktemp("inspect")
    log = EvalLog(eval=spec, samples=samples, status="success")
    write_eval_log(log, str(folder / "helpdesk.eval"))
    write_eval_log(log, str(folder / "helpdesk.json"))
    return folder / "helpdesk.eval", folder / "helpdesk.json", truth


def test_an_inspect_log_of_either_format_gives_the_figures_of_its_scores(tmp_path, inspect_logs):
    binary, text, truth = inspect_logs
    rows = [{"task": s, "reward": int(v == "C")} if v else {"task": s, "infra_error": "x"} for s, _, v in truth]
    for log in (binary, text):
        report = report_metrics(tmp_path, log, log.suffix[1:], "inspect", "--score", "reward")
        metrics = report["metrics"]
        assert metrics["infra_errors"] == 1 and metrics["scenarios"] == 2
        for k in (1, 2, 3):
            assert metrics["pass_hat_k"][str(k)] == pytest.approx(pass_hat_k(rows, k))
        assert report["config"]["imported"]["score"] == "reward"
        assert report["config"]["imported"]["writer"] == "inspect_ai 0.3.285"
        assert report["config"]["agent"] == "inspect:openai/gpt-4o"
    with ResultStore.open(tmp_path / "runs" / "json") as store:
        trial = store.trials()[0]
    assert [e["kind"] for e in trial.events] == ["user", "tool", "agent"]
    assert trial.events[1]["result"] == {"status": "ok", "data": "refunded"}


def test_the_score_is_chosen_by_name_when_the_log_has_several(tmp_path, inspect_logs):
    binary, _, _ = inspect_logs
    runs = str(tmp_path / "runs")
    unchosen = invoke("import", str(binary), "--format", "inspect", "--run-id", "a", "--out", runs)
    assert unchosen.exit_code == 2 and "'judge', 'reward': choose one with --score NAME" in unchosen.output
    unknown = invoke("import", str(binary), "--format", "inspect", "--score", "bleu", "--run-id", "a", "--out", runs)
    assert unknown.exit_code == 2 and "no such score" in unknown.output
    judged = report_metrics(tmp_path, binary, "judge", "inspect", "--score", "judge")
    assert judged["metrics"]["avg_reward"] == 0  # 0.5 is no pass
    other = invoke("import", str(binary), "--format", "jsonl", "--score", "judge", "--run-id", "b", "--out", runs)
    assert other.exit_code == 2 and "--score" in other.output


@pytest.mark.parametrize(("name", "content"), [("x.eval", b"PK\x03\x04 not a zip"), ("x.json", b'{"eval": 1}'), ("x.txt", b"{}")])
def test_a_file_inspect_ai_cannot_read_is_refused(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    result = invoke("import", str(tmp_path / name), "--format", "inspect", "--run-id", "r", "--out", str(tmp_path / "runs"))
    assert result.exit_code == 2
    assert "is not an Inspect eval log" in result.output and "Traceback" not in result.output, result.output
    assert not (tmp_path / "runs").exists()


def test_passhats_own_inspect_export_imports_back_to_the_same_scenarios(tmp_path, rows):
    runs = tmp_path / "runs"
    invoke("import", str(write_jsonl(tmp_path / "a.jsonl", rows)), "--format", "jsonl", "--run-id", "a", "--out", str(runs))
    assert invoke("export", "a", "-o", str(tmp_path / "a.json"), "--out", str(runs)).exit_code == 0
    back = report_metrics(tmp_path, tmp_path / "a.json", "back", "inspect", "--score", "reward")
    invoke("report", "a", "--out", str(runs), "--json", str(tmp_path / "a-report.json"), "--gate", "none")
    first = json.loads((tmp_path / "a-report.json").read_text())
    assert back["metrics"]["pass_hat_k"] == first["metrics"]["pass_hat_k"]
    assert back["metrics"]["infra_errors"] == first["metrics"]["infra_errors"] == 1
    assert [(s["task_id"], s["persona"], s["rewards"]) for s in back["scenarios"]] == [
        (s["task_id"], s["persona"], s["rewards"]) for s in first["scenarios"]
    ]


REAL_TAU2 = json.loads((TAU2 / "results.json").read_text())
SIM_FIELDS = ["id", "task_id", "trial", "seed", "start_time", "duration", "termination_reason", "agent_cost",
              "user_cost", "reward_info", "messages"]  # fmt: skip


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(SIM_FIELDS), values), max_size=6), st.integers(0, 11), st.none() | values)
def test_hostile_tau2_files_never_crash_or_hang(tmp_path_factory, edits, which, agent_info):
    """A real results file with a simulation's fields, and maybe the info's agent, replaced by anything at all."""
    from passhat.importers.tau2 import read_tau2

    document = json.loads(json.dumps(REAL_TAU2))
    for field, value in edits:
        document["simulations"][which][field] = value
    if agent_info is not None:
        document["info"]["agent_info"] = agent_info
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "results.json").write_text(json.dumps(document))
    try:
        run = write_run(folder / "runs", "r", read_tau2(folder / "results.json"))
    except UserError as exc:
        assert len(str(exc)) < 2000
        assert not (folder / "runs" / "r").exists()
        return
    with ResultStore.open(run) as store:
        assert len(store.trials()) == 12


def test_the_dashboard_reads_an_imported_run_and_certify_refuses_one(tmp_path):
    from passhat.serve.web.queries import RunReader, build_run_report

    runs = tmp_path / "runs"
    assert invoke("import", str(TAU2 / "results.json"), "--format", "tau2", "--run-id", "tau", "--out", str(runs)).exit_code == 0
    with RunReader.open(runs, "tau") as reader:
        report = build_run_report(reader)
    assert report.metrics.pass_hat_k[1] == pytest.approx(1 / 12)
    certified = invoke("certify", "tau", "-o", str(tmp_path / "c.json"), "--gate", "k=1,min=0.01", "--out", str(runs))
    assert certified.exit_code == 2 and "was imported from" in certified.output
    assert not (tmp_path / "c.json").exists()
