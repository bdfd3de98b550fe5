"""The report is one typed document: built once, read by every writer, written as JSON exactly as it was
built, its JSON Schema published by `passhat schema report` and every field of it documented in
docs/report-json.md."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from rich.console import Console

from passhat.cli import main
from passhat.metrics.gate import decide, parse_gate
from passhat.metrics.summary import scenario_counts
from passhat.report import build_report, print_report, write_json
from passhat.report.guard_section import comparison_table
from passhat.report.html import render_html
from passhat.report.json_report import report_json
from passhat.report.junit import junit_xml
from passhat.report.model import Report, report_schema
from passhat.report.terminal_usage import print_plumbing
from passhat.run_config import stored_config
from passhat.store import ResultStore, TrialRecord

DOC = Path(__file__).resolve().parents[1] / "docs" / "report-json.md"
SOMETIMES = ("ci", "extrapolated", "extrapolation_skipped", "partition", "partition_by", "spread", "persona_drop", "compounding")


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def usage(model: str, unpriced: int, cost: float) -> dict[str, Any]:
    return {
        "model": model,
        "calls": 4,
        "cached_calls": 1,
        "input_tokens": 100,
        "output_tokens": 10,
        "cost_usd": cost,
        "unpriced_calls": unpriced,
        "latency_s": [0.5, 0.25, 0.75],
    }


DIFFERENCE = {"table": "accounts", "key": '["A-1"]', "actual": {"status": "open"}, "expected": {"status": "closed"}}
FAULT = {"kind": "tool", "name": "find_account", "args": {}, "result": {}, "fault": {"class": "timeout", "actual": None}}


def trial(task: str, persona: str, i: int) -> TrialRecord:
    """t1 always passes; t2 fails its first trial with a backend diff and a fault; t3's trials cannot be judged."""
    events = [{"kind": "user", "text": "hi <b>there</b>"}, {"kind": "agent", "text": "Hello."}]
    if task == "t3":
        return TrialRecord(task, persona, i, i, None, None, "RuntimeError: endpoint down", events, {}, 0.0, 0.0)
    failed = task == "t2" and i == 0
    grade = {"details": {"state_differences": [DIFFERENCE]}} if failed else {}
    return TrialRecord(
        task,
        persona,
        i,
        i,
        0 if failed else 1,
        "wrong_arguments" if failed else None,
        None,
        [*events, FAULT] if failed else events,
        grade,
        0.0,
        0.0,
        {"agent": usage("openai/priced", 0, 0.01), "user": usage("openai/local", 4, 0.0)},
    )


def stored_run(folder: Path, run_id: str = "r", trials: int = 4, seed: int = 0) -> Path:
    config = {
        "domain": "retail",
        "agent": "synthetic",
        "user": "scripted",
        "mode": "strict",
        "seed": seed,
        "personas": ["baseline", "impatient"],
        "tasks": ["t1", "t2", "t3"],
        "trials": trials,
        "guard": ["idempotency"],
    }
    with ResultStore.create(folder / run_id, run_id, config) as store:
        for task in ("t1", "t2", "t3"):
            for persona in ("baseline", "impatient"):
                for i in range(trials):
                    store.record(trial(task, persona, i))
    return folder / run_id


def built(folder: Path, gate: str | None = None) -> tuple[Report, list[TrialRecord]]:
    with ResultStore.open(folder) as store:
        trials = store.trials()
        section = None
        if gate:
            decision = decide(
                parse_gate(gate), scenario_counts(t.to_result() for t in trials), stored_config(store).planned_trials()
            )
            section = {**decision.to_json(), "ci": None}
        return build_report(store, {"t1": ["writes:1"], "t2": ["writes:1"]}, trials, gate=section), trials


def as_written(report: Report, tmp_path: Path) -> str:
    path = tmp_path / "report.json"
    write_json(report, path)
    return path.read_text()


# --- the JSON is the model, and the model is the JSON ---------------------------------------------------


def test_a_real_runs_report_validates_against_the_model_and_is_written_as_it_reads(tmp_path):
    run = ["--tasks", "retail-001,retail-002", "--personas", "baseline,impatient", "--trials", "3", "--out", tmp_path]
    assert invoke("run", *run, "--run-id", "r").exit_code == 0
    path = tmp_path / "r.json"
    result = invoke("report", "r", "--out", tmp_path, "--gate", "k=2,min=0.5", "--json", path)
    assert result.exit_code in (0, 1), result.output
    text = path.read_text()
    report = Report.model_validate_json(text)
    assert json.loads(text) == report.to_json()  # nothing added, dropped or reworded
    assert report.metrics.scenarios == 4 and report.metrics.pass_hat_k[3] == json.loads(text)["metrics"]["pass_hat_k"]["3"]
    assert report.gate is not None and "ci" in json.loads(text)["gate"] and "trials_saved" not in json.loads(text)["gate"]


def test_keys_a_report_holds_only_sometimes_are_left_out_when_it_does_not(tmp_path):
    folder = tmp_path / "r"
    with ResultStore.create(folder, "r", {"domain": "retail", "personas": ["a"], "tasks": ["t3"], "trials": 2}) as store:
        for i in range(2):
            store.record(trial("t3", "a", i))
    report, _ = built(folder)
    doc = json.loads(as_written(report, tmp_path))
    assert "gate" not in doc and not set(SOMETIMES) & set(doc["metrics"])
    assert doc["infra_error_example"] == "RuntimeError: endpoint down" and doc["metrics"]["avg_reward"] is None
    assert Report.model_validate(doc).to_json() == doc
    judged, _ = built(stored_run(tmp_path, "judged"), gate="k=2,min=0.5")
    doc = json.loads(as_written(judged, tmp_path))
    assert set(SOMETIMES) <= set(doc["metrics"]) and doc["gate"]["ci"] is None and "trials_saved" not in doc["gate"]


def test_json_names_that_are_not_python_names_are_kept(tmp_path):
    report, _ = built(stored_run(tmp_path), gate="k=2,min=0.5")
    doc = report.to_json()
    assert doc["gate"]["min"] == 0.5 and report.gate.minimum == 0.5
    assert [s["class"] for s in doc["scenarios"]][:2] == ["reliable", "reliable"]
    assert list(doc["metrics"]["pass_hat_k"]) == ["1", "2", "3", "4"]  # JSON keys, read as ints by the model
    row = doc["scenarios"][2]["state_diff"]["rows"][0]
    assert row == {"table": "accounts", "key": '["A-1"]', "kind": "changed", "row": {}, "fields": [row["fields"][0]]}


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("top", lambda d: d.update(surprise=1)),
        ("misspelt guard figure", lambda d: d["metrics"]["guard"].update(handoff=0)),
        ("a class outside the vocabulary", lambda d: d["scenarios"][0].update({"class": "mostly"})),
        ("a signature outside the vocabulary", lambda d: d["metrics"]["failure_signatures"].update(made_up=1)),
        ("a reward that is no 0 or 1", lambda d: d["scenarios"][0]["rewards"].__setitem__(0, 2)),
        ("a model no fit has", lambda d: d["metrics"]["extrapolated"].update(model="mixture-9")),
        ("a missing figure", lambda d: d["metrics"].pop("pass_hat_k")),
    ],
)
def test_the_model_refuses_what_the_schema_does_not_allow(tmp_path, where, change):
    report, _ = built(stored_run(tmp_path, trials=4))
    doc = report.to_json()
    Report.model_validate(doc)
    change(doc)
    with pytest.raises(ValidationError):
        Report.model_validate(doc)


# --- every writer renders from the model --------------------------------------------------------------


def test_each_writer_renders_from_the_model(tmp_path):
    report, trials = built(stored_run(tmp_path), gate="k=2,min=0.5")
    m = report.metrics
    out = StringIO()
    print_report(report, Console(file=out, width=200), full=True)
    terminal = out.getvalue()
    assert f"pass^1 {m.avg_reward:.3f}" in terminal and "t2" in terminal and 'status "closed" → "open"' in terminal
    assert "timeout" in terminal and "guards: idempotency" in terminal and "8 trials could not be judged" in terminal
    html = render_html(report, trials)
    assert f"pass^4 {m.pass_hat_k[4]:.3f}" in html and "MEETS THE BAR" in html and "<td>timeout</td>" in html
    assert "hi &lt;b&gt;there&lt;/b&gt;" in html and "<mark>status</mark>" in html
    suite = ET.fromstring(b"".join(junit_xml(report)))
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("7", "2", "2")
    xml = ET.tostring(suite, encoding="unicode")
    assert "3/4 trials passed" in xml and "wrong_arguments" in xml and "no trial could be judged (4 infra errors)" in xml
    assert json.loads(as_written(report, tmp_path))["metrics"]["guard"]["enabled"] == ["idempotency"]
    out = StringIO()
    Console(file=out, width=200).print(comparison_table([report, report]))
    assert re.search(r"judged trials\s+│\s+16\s+│\s+16", out.getvalue())


def test_an_unpriced_model_costs_unknown_not_zero(tmp_path):
    report, trials = built(stored_run(tmp_path))
    out = StringIO()
    print_plumbing(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "agent model openai/priced: 64 calls (16 from the cache)" in text  # 4 a trial over 16 judged trials
    assert "user model openai/local: 64 calls" in text and "cost unknown (no price)" in text
    assert "total cost unknown ($0.1600 for the priced calls): no price for openai/local" in text
    assert "$0.0000" not in text
    html = render_html(report, trials)
    assert "no price for openai/local: its cost is unknown, not zero" in html


# --- the published schema, and the doc that explains it -------------------------------------------------


def test_schema_report_prints_the_schema_and_writes_it_with_out(tmp_path):
    printed = invoke("schema", "report")
    assert printed.exit_code == 0 and json.loads(printed.output) == report_schema()
    assert report_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    path = tmp_path / "report.schema.json"
    written = invoke("schema", "report", "-o", path)
    assert written.exit_code == 0 and path.read_text() == printed.output
    assert [p.name for p in tmp_path.iterdir()] == ["report.schema.json"]  # no temporary file left behind
    into_a_folder = invoke("schema", "report", "--output", tmp_path)
    assert into_a_folder.exit_code == 2 and "--output" in into_a_folder.output and "Traceback" not in into_a_folder.output
    path.unlink()
    old = invoke("schema", "report", "--out", path)  # the old name: --out names the runs folder on every other command
    assert old.exit_code == 0 and path.read_text() == printed.output
    assert "note: --out is now -o/--output" in old.stderr and "note:" not in written.stderr
    for both in (["-o", path, "--out", path], ["--out", path, "--output", path]):
        twice = invoke("schema", "report", *both)
        assert twice.exit_code == 2 and "give -o/--output once (--out is its old name)" in twice.output
    shown = invoke("schema", "report", "--help").output
    assert "-o, --output FILE" in shown and shown.count("--out") == shown.count("--output")  # the old name is hidden


def schema_fields() -> tuple[set[str], set[str]]:
    """Every field path of the schema ("metrics.by_persona.<>.ci", "scenarios[].class"), and the paths of
    open objects (whose keys the schema leaves free)."""
    schema = report_schema()

    def options(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        for option in node.get("anyOf", [node]):
            if option.get("type") != "null":
                yield from options(option) if "$ref" in option else [option]

    fields: set[str] = set()
    open_objects: set[str] = set()

    def walk(node: dict[str, Any], path: str) -> None:
        for option in options(node):
            for name, sub in option.get("properties", {}).items():
                fields.add(f"{path}.{name}".lstrip("."))
                walk(sub, f"{path}.{name}".lstrip("."))
            if isinstance(option.get("additionalProperties"), dict):
                walk(option["additionalProperties"], f"{path}.<>")
            elif option.get("additionalProperties") is True:
                open_objects.add(path)
            if isinstance(option.get("items"), dict):
                walk(option["items"], f"{path}[]")

    walk(schema, "")
    return fields, open_objects


def documented_fields() -> set[str]:
    """The field paths in the first column of docs/report-json.md's tables, placeholders as <>."""
    rows = re.findall(r"^\| `([^`]+)` \|", DOC.read_text(), flags=re.MULTILINE)
    return {re.sub(r"<[^>]+>", "<>", row) for row in rows}


def test_every_field_of_the_schema_is_documented_and_the_doc_names_no_other():
    fields, open_objects = schema_fields()
    documented = documented_fields()
    assert len(fields) > 150 and open_objects == {"config", "scenarios[].state_diff.rows[].row"}
    assert sorted(fields - documented) == [], "fields of the report missing from docs/report-json.md"
    stale = {f for f in documented - fields if not any(f.startswith(f"{o}.") for o in open_objects)}
    assert sorted(stale) == [], "docs/report-json.md names fields the report does not have"


def test_the_json_written_in_pieces_is_the_report_as_one_document(tmp_path):
    """A field or a listed model at a time, indented to its depth: byte for byte what serializing the whole report
    gives, whatever it holds (a gate, a state diff, per-step figures, or nothing judged at all)."""
    report, _ = built(stored_run(tmp_path), gate="k=2,min=0.5")
    empty = report.model_copy(update={"scenarios": []})
    nothing_judged, config = tmp_path / "none", {"domain": "retail", "personas": ["a"], "tasks": ["t3"], "trials": 1}
    with ResultStore.create(nothing_judged, "none", config) as store:
        store.record(trial("t3", "a", 0))
    for whole in (report, empty, built(nothing_judged)[0]):
        pieces = list(report_json(whole))
        assert b"".join(pieces) == whole.model_dump_json(indent=2, by_alias=True, exclude_unset=True).encode() + b"\n"
    pieces = list(report_json(report))
    scenario = [p for p in pieces if b'"task_id": "t2"' in p]
    assert len(scenario) == 2 and b'"task_id": "t1"' not in b"".join(scenario)  # a scenario per piece, never the lot
    assert max(map(len, pieces)) < len(b"".join(pieces)) / 4
