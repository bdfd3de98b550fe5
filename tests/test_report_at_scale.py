"""What keeps the report of a large run light, checked on small runs: it reads each trial once and keeps counts,
lists every trial for the HTML from the report itself (reading again only the trials it merely counts), writes
its JSON and JUnit XML in pieces, and keeps the garbage collector off what it builds without leaving it changed."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic.dataclasses import is_pydantic_dataclass

from passhat.cli import main
from passhat.metrics.conservative import conservative
from passhat.metrics.summary import ResultTally, TrialResult, scenario_counts, summarize
from passhat.report import build_report
from passhat.report.embedding import Mark, ReportedTrials, embedded_trials
from passhat.report.html import render_html
from passhat.report.junit import junit_xml
from passhat.report.model import FirstWrong, Report, ScenarioHarm, ScenarioReport, StateDiff, StepFigures, TaskSteps
from passhat.report.state_diff import FieldChange, RowChange
from passhat.store import ResultStore, TrialRecord
from passhat.trajectory import USER_SIMULATOR_ERROR

EVENTS = [{"kind": "user", "text": "hi"}, {"kind": "agent", "text": "Hello."}]


def record(task: str, persona: str, i: int, verdict: str) -> TrialRecord:
    """verdict: "pass", "fail", "infra" (could not be judged) or "user" (the simulated customer broke its instruction)."""
    if verdict == "infra":
        return TrialRecord(task, persona, i, i, None, None, "RuntimeError: down", EVENTS, {}, 0.0, 0.0)
    signature = {"pass": None, "fail": "wrong_arguments", "user": USER_SIMULATOR_ERROR}[verdict]
    return TrialRecord(task, persona, i, i, int(verdict == "pass"), signature, None, EVENTS, {}, 0.0, 0.0)


# per scenario, its trials' verdicts in trial order: unjudged trials between judged ones, and a scenario with none judged
RUN = {
    ("t1", "a"): ["pass", "infra", "pass", "fail"],
    ("t1", "b"): ["pass", "pass", "pass", "pass"],
    ("t2", "a"): ["user", "fail", "pass", "infra"],
    ("t2", "b"): ["infra", "infra", "user", "infra"],
    ("t3", "a"): ["fail", "pass", "pass", "pass"],
}


@pytest.fixture
def run(tmp_path: Path) -> Path:
    config = {"domain": "retail", "agent": "synthetic", "user": "scripted", "mode": "strict", "seed": 0}
    config.update(personas=["a", "b"], tasks=["t1", "t2", "t3"], trials=4)
    with ResultStore.create(tmp_path / "r", "r", config) as store:
        for (task, persona), verdicts in reversed(RUN.items()):  # stored out of order: the store orders them
            for i, verdict in enumerate(verdicts):
                store.record(record(task, persona, i, verdict))
    return tmp_path / "r"


def test_the_html_lists_every_trial_from_the_report_in_the_store_order(run: Path) -> None:
    with ResultStore.open(run) as store:
        report = build_report(store)
        rows = store.trial_rows()
        reported = ReportedTrials(report.scenarios, store.trial_rows(unjudged_only=True))
        assert [(t.key, t.reward) for t in reported] == [(t.key, t.reward) for t in rows]
        assert len(reported) == len(rows) and [reported[i].key for i in (0, 7, 19)] == [rows[i].key for i in (0, 7, 19)]
        with pytest.raises(IndexError):
            reported[len(rows)]
        for cap in (3, 9, 2000):  # failures and unjudged trials first, a pass per scenario, the rest, as from the store
            assert render_html(report, reported, cap, store.records) == render_html(report, rows, cap, store.records)


def test_only_the_trials_that_could_not_be_judged_are_read_again(run: Path) -> None:
    with ResultStore.open(run) as store:
        unjudged = store.trial_rows(unjudged_only=True)
        assert unjudged == [t for t in store.trial_rows() if t.infra_error or t.signature == USER_SIMULATOR_ERROR]
    assert [t.key for t in unjudged][:3] == [("t1", "a", 1), ("t2", "a", 0), ("t2", "a", 3)]


@pytest.mark.parametrize(
    "record", [ScenarioReport, StateDiff, RowChange, FieldChange, TaskSteps, StepFigures, FirstWrong, ScenarioHarm]
)
def test_the_records_a_report_holds_by_the_thousand_carry_no_dict_each(record: type) -> None:
    assert is_pydantic_dataclass(record) and record.__slots__ and record.__dictoffset__ == 0


def test_the_transcripts_embedded_are_failures_then_a_pass_per_scenario_then_the_rest() -> None:
    trials = [Mark("t", "a", 0, 1), Mark("t", "a", 1, 0), Mark("t", "a", 2, 1), Mark("t", "b", 0, 1), Mark("t", "b", 1, None)]
    assert embedded_trials(trials, 5) == {0, 1, 2, 3, 4}
    assert embedded_trials(trials, 1) == {1}
    assert embedded_trials(trials, 3) == {1, 4, 0}
    assert embedded_trials(trials, 4) == {1, 4, 0, 3}


def test_the_junit_xml_written_in_pieces_is_one_document(run: Path) -> None:
    with ResultStore.open(run) as store:
        report = build_report(store)
    suite = ET.fromstring(b"".join(junit_xml(report)))
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "3", "1")
    assert [c.get("name") for c in suite] == ["t1 / a", "t1 / b", "t2 / a", "t2 / b", "t3 / a"]
    assert (
        suite[1].find("failure") is None and suite[3].find("error").get("message") == "no trial could be judged (3 infra errors)"
    )
    gated = {"gate": "k=2,min=0.9", "k": 2, "min": 0.9, "persona": None, "bounds": (0.0, 1.0), "reason": "r", "ci": None}
    for meets, tests, failures, errors in ((True, "6", "3", "1"), (False, "6", "4", "1"), (None, "6", "3", "2")):
        with_gate = Report.model_validate({**report.to_json(), "gate": {**gated, "meets": meets, "pass_hat_k": 0.5}})
        suite = ET.fromstring(b"".join(junit_xml(with_gate)))
        assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (tests, failures, errors)
        assert suite[-1].get("name") == "gate k=2,min=0.9"
    empty = report.model_copy(update={"scenarios": []})
    assert b"".join(junit_xml(empty)) == (
        b'<?xml version=\'1.0\' encoding=\'utf-8\'?>\n<testsuite name="passhat run r" tests="0" failures="0" errors="0" />'
    )


def test_a_tally_of_the_outcomes_is_read_as_the_outcomes_are() -> None:
    outcomes = [
        TrialResult(t.task_id, t.persona, t.trial, t.reward, t.signature, t.infra_error is not None)
        for (task, persona), verdicts in RUN.items()
        for t in (record(task, persona, i, v) for i, v in enumerate(verdicts))
    ]
    tally = ResultTally()
    for o in outcomes:
        tally.add(o)
    assert summarize(tally, {"t1": ["x"]}) == summarize(outcomes, {"t1": ["x"]})
    assert (
        tally.counts()
        == scenario_counts(outcomes)
        == {("t1", "a"): (2, 3), ("t1", "b"): (4, 4), ("t2", "a"): (1, 2), ("t3", "a"): (3, 4)}
    )
    # infra errors counted as failed trials: a scenario of infra errors alone is then a scenario that never passed
    assert tally.counts(infra_as_failures=True) == {
        **tally.counts(),
        ("t1", "a"): (2, 4),
        ("t2", "a"): (1, 3),
        ("t2", "b"): (0, 3),
    }
    assert conservative(tally) == conservative(outcomes) and conservative(tally)["avg_reward"] == pytest.approx(
        (2 / 4 + 4 / 4 + 1 / 3 + 0 / 3 + 3 / 4) / 5
    )


@pytest.mark.parametrize("collecting", [True, False])
def test_the_report_command_leaves_the_garbage_collector_as_it_found_it(run: Path, tmp_path: Path, collecting: bool) -> None:
    was = gc.isenabled()
    (gc.enable if collecting else gc.disable)()
    try:
        result = CliRunner().invoke(main, ["report", "r", "--out", str(run.parent), "--html", str(tmp_path / "r.html")])
        assert result.exit_code == 0, result.output
        assert gc.isenabled() is collecting and gc.get_freeze_count() == 0
    finally:
        (gc.enable if was else gc.disable)()


def test_a_report_loads_no_scipy_stats(run: Path, tmp_path: Path) -> None:
    """scipy.stats costs half a second and 40 MiB to import: only `traffic` and `compare` need it (a fresh interpreter,
    since this test process has long imported it)."""
    probe = (
        "import json, sys\nfrom passhat.cli import main\ntry:\n    main(json.loads(sys.argv[1]))\nexcept SystemExit:\n    pass\n"
        "print('scipy.stats' in sys.modules)"
    )
    args = ["report", "r", "--out", str(run.parent), "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")]
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(args)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False" and (tmp_path / "r.html").exists()
