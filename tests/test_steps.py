"""Per-step reliability: a task's ground-truth plan as steps, each trial's marks along it, the figures over
trials, and where they are stored and reported."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from io import StringIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from passhat.cli import main
from passhat.domains import load_domain
from passhat.domains.model import Action
from passhat.env import Environment
from passhat.grade.expected import ground_truth_calls
from passhat.grade.steps import step_count, task_plan, trial_steps
from passhat.guard import ToolPath
from passhat.metrics.steps import step_reliability, tally_steps
from passhat.report import build_report, print_report
from passhat.report.html import render_html
from passhat.report.model import Report
from passhat.run.runner import execute
from passhat.run_config import RunConfig
from passhat.store import ResultStore, TrialRecord
from passhat.store.results import STORE_FILE, _digest
from passhat.trajectory import Event

RETAIL = load_domain("retail")
CHAIN = RETAIL.tasks["retail-022"]  # change the default address, ship an order there, cancel another order
GATED = RETAIL.tasks["retail-047"]  # its write goes through the human gate


def planned(task=CHAIN) -> list[Action]:
    return [Action(tool=s.tool, args=s.args) for s in task_plan(RETAIL, task)]


def play(task, calls: list[Action]) -> list[Event]:
    """The calls made in order on a fresh backend, through the task's own guards, the operator settling after."""
    env = Environment(RETAIL)
    path = ToolPath(env, task.guards, conversation_id=f"{task.id}/test")
    try:
        events = [Event("user", "hello")]
        for call in calls:
            events.append(path.execute(call.tool, dict(call.args), events))
        return events + path.settle()
    finally:
        env.close()


def marks(task, calls: list[Action]) -> str:
    return "".join(r.mark[0] for r in trial_steps(RETAIL, task, play(task, calls)).results)


# --- the plan ----------------------------------------------------------------------------------------


def test_a_tasks_plan_is_the_identity_lookup_then_each_goals_reads_and_writes_in_order():
    plan = task_plan(RETAIL, CHAIN)
    assert [(s.tool, s.write, s.entity) for s in plan] == [
        ("find_customer_by_email", False, "C-459403"),
        ("get_customer", False, "C-459403"),
        ("change_customer_address", True, "C-459403"),
        ("get_order", False, "#R4570254"),
        ("change_order_address", True, "#R4570254"),
        ("get_order", False, "#R4009278"),
        ("cancel_order", True, "#R4009278"),
    ]
    assert plan[0].args == dict(ground_truth_calls(RETAIL, CHAIN)[0].args) and plan[0].identifies
    assert step_count(RETAIL, CHAIN) == 7


def test_a_read_is_planned_once_however_many_writes_need_it():
    counts = {t.id: step_count(RETAIL, t) for t in RETAIL.tasks.values()}
    for task in RETAIL.tasks.values():
        plan = [(s.tool, json.dumps(s.args, sort_keys=True)) for s in task_plan(RETAIL, task) if not s.write]
        assert len(plan) == len(set(plan)), task.id
        assert counts[task.id] == len(task_plan(RETAIL, task)) >= 1 + len(task.actions)


def with_handoff(task):
    """The task with a second acceptable outcome: handing the customer to a person."""
    handoff = {"tool": "transfer_to_human", "args": {"customer_id": task.customer.customer_id, "summary": "cancel my order"}}
    return RETAIL.task_model.model_validate(
        {**task.model_dump(by_alias=True), "outcomes": [{"label": "hand-off", "actions": [handoff]}]}
    )


def test_an_acceptable_outcome_has_its_own_plan_and_a_trial_that_took_it_goes_along_it():
    task = with_handoff(RETAIL.tasks["retail-001"])
    assert [s.tool for s in task_plan(RETAIL, task)] == ["find_customer_by_email", "get_order", "cancel_order"]
    plan = task_plan(RETAIL, task, "hand-off")
    assert [s.tool for s in plan] == ["find_customer_by_email", "get_customer", "transfer_to_human"]
    events = play(task, [Action(tool=s.tool, args=s.args) for s in plan])
    took = trial_steps(RETAIL, task, events, "hand-off")
    assert took.to_json()["outcome"] == "hand-off" and {r.mark for r in took.results} == {"right"}
    assert [r.mark for r in trial_steps(RETAIL, task, events).results] == ["right", "missed", "missed"]


def test_the_primary_label_is_the_goals_own_plan():
    assert task_plan(RETAIL, CHAIN, "primary") == task_plan(RETAIL, CHAIN)
    with pytest.raises(KeyError, match="no acceptable outcome labelled 'other'"):
        task_plan(RETAIL, CHAIN, "other")


# --- one trial along it ------------------------------------------------------------------------------


def test_a_trial_that_does_everything_right_has_every_step_right():
    steps = trial_steps(RETAIL, CHAIN, play(CHAIN, planned()))
    assert [r.mark for r in steps.results] == ["right"] * 7 and steps.first_wrong is None
    assert steps.to_json()["outcome"] is None and steps.to_json()["steps"][2] == {
        "tool": "change_customer_address",
        "write": True,
        "entity": "C-459403",
        "mark": "right",
    }


def test_a_skipped_read_is_the_first_step_gone_wrong_and_is_missed():
    calls = planned()
    del calls[3]  # never looks at the order before changing its address
    steps = trial_steps(RETAIL, CHAIN, play(CHAIN, calls))
    assert steps.first_wrong == 3 and steps.results[3].mark == "missed"
    assert [r.mark for r in steps.results[4:]] == ["right"] * 3  # the later steps are judged on their own


def test_a_write_with_wrong_arguments_is_reached_but_wrong_and_credited_as_the_first_failure():
    calls = planned()
    calls[4] = Action(tool="change_order_address", args={**calls[4].args, "address1": "1 Other Street"})  # it succeeds
    assert marks(CHAIN, calls) == "rrrrwrr"
    assert trial_steps(RETAIL, CHAIN, play(CHAIN, calls)).first_wrong == 4


def test_a_write_on_another_entity_does_not_reach_the_step():
    calls = planned()
    calls[6] = Action(tool="cancel_order", args={**calls[6].args, "order_id": "#R4570254"})
    assert marks(CHAIN, calls)[6] == "m"


def test_a_failed_call_then_a_right_one_is_right_and_a_failed_one_alone_is_wrong():
    calls = planned()
    bad = Action(tool="change_order_address", args={**calls[4].args, "zip": "not a zip at all, far too long to be one"})
    assert marks(CHAIN, [*calls[:4], bad, *calls[4:]]) == "rrrrrrr"
    assert marks(CHAIN, [*calls[:4], bad, *calls[5:]])[4] == "w"


def test_identity_is_right_by_any_identifying_tool_that_finds_the_customer():
    customer = CHAIN.customer
    by_name = Action(
        tool="find_customer_by_name_zip",
        args={"first_name": customer.first_name, "last_name": customer.last_name, "zip": customer.zip},
    )
    assert marks(CHAIN, [by_name, *planned()[1:]]) == "rrrrrrr"
    stranger = Action(tool="find_customer_by_email", args={"email": "nobody@example.org"})
    assert marks(CHAIN, [stranger, *planned()[1:]])[0] == "w"


def test_a_write_the_human_gate_ticketed_is_right_once_the_operator_carried_it_out():
    assert "human_gate" in GATED.guards
    assert set(marks(GATED, planned(GATED))) == {"r"}


# --- the figures over trials ---------------------------------------------------------------------------


def stored(marks: str, tools: str = "abc", outcome: str | None = None) -> dict:
    letters = {"r": "right", "w": "wrong", "m": "missed"}
    steps = [{"tool": t, "write": t == "c", "entity": f"E-{t}", "mark": letters[m]} for t, m in zip(tools, marks, strict=True)]
    return {"outcome": outcome, "steps": steps}


def test_step_rates_intervals_the_first_wrong_step_and_the_rate_the_step_kinds_predict_on_hand_built_trials():
    trials = [("t1", True, stored("rrr"))] * 6 + [("t1", False, stored("rwm"))] * 3 + [("t1", False, stored("mrr"))]
    figures = step_reliability(tally_steps(trials))
    [task] = figures["tasks"]
    assert [s["rate"] for s in task["steps"]] == [0.9, 0.7, 0.7] and [s["reached"] for s in task["steps"]] == [9, 10, 7]
    # predicted from each kind's rate along a right chain (one task here: 0.9, 6/9, 1), not from the raw rates,
    # which count the steps missed after an earlier slip again (0.9 * 0.7 * 0.7 = 0.44 would double count)
    assert task["predicted"] == pytest.approx(0.9 * 6 / 9 * 1.0) and task["observed"] == 0.6
    assert task["steps"][1]["ci"] == pytest.approx([0.3968, 0.8922], abs=1e-4)  # Wilson, 7 of 10
    assert task["first_wrong"] == {"step": 2, "tool": "b", "entity": "E-b", "trials": 3, "share": 0.3}
    # given every earlier step right: step 2 held in 6 of the 9 trials that got step 1 right, step 3 in all 6
    assert [(s["at_risk"], s["conditional"]) for s in task["steps"]] == [(10, 0.9), (9, 6 / 9), (6, 1.0)]
    assert [s["first_wrong"] for s in task["steps"]] == [1, 3, 0]
    assert figures["first_wrong"] == {"tool": "b", "trials": 3, "share": 0.3}
    kinds = [(k["tool"], k["right"], k["steps"], k["at_risk"], k["conditional"]) for k in figures["by_kind"]]
    assert kinds == [("b", 7, 10, 9, 6 / 9), ("a", 9, 10, 10, 0.9), ("c", 7, 10, 6, 1.0)]  # least reliable first


def test_failed_trials_with_every_step_right_are_counted_apart():
    figures = step_reliability(tally_steps([("t1", False, stored("rrr")), ("t1", True, stored("rrr"))]))
    [task] = figures["tasks"]
    assert task["first_wrong"] is None and task["failed_every_step_right"] == 1 and task["predicted"] == 1.0
    assert figures["first_wrong"] is None


def test_each_acceptable_outcome_has_its_own_plan_and_the_curve_groups_plans_by_length():
    trials = [
        ("t1", True, stored("rrr", outcome="primary")),
        ("t1", True, stored("rr", "ac", outcome="escalate")),
        ("t2", False, stored("rrrm", "abca")),
        ("t2", True, stored("rrrr", "abca")),
    ]
    figures = step_reliability(tally_steps(trials))
    assert [(t["task_id"], t["outcome"], len(t["steps"])) for t in figures["tasks"]] == [
        ("t1", "primary", 3),
        ("t1", "escalate", 2),
        ("t2", "primary", 4),
    ]
    curve = figures["compounding"]
    # kind a held along a right chain 5 times in 6 (t2's second a failed once), b and c always: a plan predicts
    # (5/6) per a it holds, whichever task it belongs to
    a = 5 / 6
    assert [(p["steps"], p["tasks"], p["trials"], p["observed"]) for p in curve] == [
        (2, 1, 1, 1.0),
        (3, 1, 1, 1.0),
        (4, 1, 2, 0.5),
    ]
    assert [p["predicted"] for p in curve] == pytest.approx([a, a, a * a])
    assert figures["observed"] == 0.75 and figures["predicted"] == pytest.approx((a + a + 2 * a * a) / 4)


def test_a_kind_never_reached_along_a_right_chain_predicts_nothing():
    figures = step_reliability(tally_steps([("t1", False, stored("wmm"))]))
    assert [k["conditional"] for k in figures["by_kind"] if k["tool"] in "bc"] == [None, None]
    assert figures["tasks"][0]["predicted"] is None and figures["predicted"] is None


def test_no_steps_no_figures():
    assert step_reliability(tally_steps([])) is None


# --- stored with the trial, reported from the store ------------------------------------------------------


def record(task: str, i: int, reward: int, steps: dict | None, grade: dict | None = None) -> TrialRecord:
    return TrialRecord(task, "baseline", i, i, reward, None if reward else "no_write", None, [], grade or {}, 0.0, 0.0, {}, steps)


CONFIG = {"domain": "retail", "agent": "synthetic", "user": "scripted", "mode": "strict", "seed": 0, "trials": 2}
CONFIG |= {"tasks": ["t1", "t2"], "personas": ["baseline"]}  # what every passhat stored


def two_tasks(folder: Path) -> Path:
    """t1: a pass and a failure gone wrong at step 2; t2: a pass by each of two acceptable outcomes."""
    with ResultStore.create(folder, folder.name, CONFIG) as store:
        store.record(record("t1", 0, 1, stored("rrr", outcome="primary"), {"outcome": "primary"}))
        store.record(record("t1", 1, 0, stored("rwm")))
        store.record(record("t2", 0, 1, stored("rr", "ac", outcome="escalate"), {"outcome": "escalate"}))
        store.record(record("t2", 1, 1, stored("rrr", outcome="primary"), {"outcome": "primary"}))
    return folder


def test_steps_are_stored_with_the_trial_and_the_reports_json_validates_against_the_model(tmp_path):
    with ResultStore.open(two_tasks(tmp_path / "r")) as store:
        assert [t.steps for t in store.trials()][1] == stored("rwm")
        report = build_report(store)
    document = Report.model_validate(report.to_json())
    assert document.metrics.steps is not None and document.metrics.steps.trials == 4
    assert document.metrics.steps.tasks[0].first_wrong.step == 2
    by_task = {s.task_id: s.outcomes for s in document.scenarios}
    assert by_task == {"t1": None, "t2": {"escalate": 1, "primary": 1}}  # only a task whose passes took several
    assert "outcomes" not in report.to_json()["scenarios"][0]


def test_the_terminal_shows_the_worst_steps_and_the_html_the_plans_the_curve_and_the_outcomes_taken(tmp_path):
    with ResultStore.open(two_tasks(tmp_path / "r")) as store:
        trials = store.trials()
        report = build_report(store, trials=trials)
    console = Console(file=StringIO(), width=200)
    print_report(report, console, full=True)
    text = console.file.getvalue()
    assert "per step: predicted" in text and "worst steps (2 of 8 steps not always right)" in text
    assert "write c E-c" in text and "escalate 1, primary 1" in text
    page = render_html(report, trials)
    assert "<h2>Per-step reliability</h2>" in page and "success against the number of steps" in page
    assert "<th>acceptable outcomes the passes took</th>" in page and "<td>escalate 1, primary 1</td>" in page
    # the plan that went wrong is in view; the two right at every step are folded away under one line
    plans = page[page.index("Each task's plan") : page.index("<h2>", page.index("Each task's plan"))]
    shown, folded = plans.split("<details>")
    assert "1 of 3 plans went wrong" in shown and ">t1</td>" in shown and ">t2</td>" not in shown
    assert folded.startswith("<summary>2 plans right at every step of every trial</summary>") and ">t2</td>" in folded


def test_only_the_ten_least_observed_plans_gone_wrong_are_in_view_and_the_others_fold_under_one_line(tmp_path):
    """A large run has hundreds of plans gone wrong: in view they made its page tens of thousands of px tall."""
    with ResultStore.create(tmp_path / "r", "r", CONFIG | {"trials": 12}) as store:
        for n in range(12):  # task tn fails n + 1 of its 12 trials, at step 2
            for i in range(12):
                store.record(record(f"t{n:02}", i, int(i > n), stored("rrr" if i > n else "rwm")))
    with ResultStore.open(tmp_path / "r") as store:
        trials = store.trials()
        page = render_html(build_report(store, trials=trials), trials)
    plans = page[page.index("Each task's plan") : page.index("<h2>", page.index("Each task's plan"))]
    shown, folded = plans.split("<details>")
    assert "12 of 12 plans went wrong" in shown
    assert [f">t{n:02}</td>" in shown for n in range(12)] == [False] * 2 + [True] * 10  # the least observed first
    assert folded.startswith("<summary>2 more plans that went wrong, in the same order</summary>")
    assert folded.index(">t01</td>") < folded.index(">t00</td>")


def test_a_store_from_before_steps_still_reads_reports_and_keeps_its_sealed_digests(tmp_path):
    with ResultStore.create(tmp_path / "old", "old", CONFIG) as store:
        store.record(record("t1", 0, 1, None))
        store._conn.execute("ALTER TABLE trials DROP COLUMN steps")
        store._conn.execute("PRAGMA user_version = 3")
    with sqlite3.connect(tmp_path / "old" / STORE_FILE) as db:
        row = db.execute("SELECT * FROM trials").fetchone()
    with ResultStore.open(tmp_path / "old") as store:
        [trial] = store.trials()
        assert trial.steps is None and trial.reward == 1
        assert store.audit_state()[1][("t1", "baseline", 0)] == _digest_of_twelve(row)
        trials = store.trials()
        report = build_report(store, trials=trials)
    assert report.metrics.steps is None and "steps" not in report.to_json()["metrics"]
    assert "No trial of this run recorded its steps." in render_html(report, trials)


def _digest_of_twelve(row: tuple) -> str:
    """The digest a store from before steps sealed: its twelve columns, as that passhat wrote it."""
    return hashlib.sha256(json.dumps(list(row)).encode()).hexdigest()


def test_the_steps_column_enters_the_digest_so_an_edit_shows():
    row = ("t", "p", 0, 0, 1, None, None, "[]", "{}", 0.0, 0.0, "{}")
    assert _digest((*row, '{"steps": []}')) != _digest((*row, '{"steps": [1]}')) != _digest((*row, None))


def test_a_run_records_steps_for_every_trial_and_reports_them(tmp_path: Path):
    args = ["run", "--tasks", "retail-022", "--personas", "baseline", "--trials", "2", "--workers", "1", "--full"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path), "--run-id", "w", "--json", str(tmp_path / "w.json")])
    assert result.exit_code in (0, 1), result.output
    with ResultStore.open(tmp_path / "w") as store:
        steps = [t.steps for t in store.trials()]
    assert len(steps) == 2 and all(len(s["steps"]) == 7 for s in steps)
    assert "per step: predicted" in result.output
    report = json.loads((tmp_path / "w.json").read_text())
    assert report["metrics"]["steps"]["tasks"][0]["task_id"] == "retail-022"


SMALL = RunConfig(
    personas=["baseline", "impatient"], tasks=["retail-022", "retail-030"], trials=2, agent="reference:flaky", seed=1
)


def steps_of(store: ResultStore, **how) -> dict:
    asyncio.run(execute(SMALL, store, 4, **how))
    return {t.key: t.steps for t in store.trials()}


def test_in_process_in_workers_and_on_resume_a_trial_records_the_same_steps(tmp_path: Path):
    with ResultStore.create(tmp_path / "one", "one", SMALL.model_dump()) as store:
        one = steps_of(store, workers=1)
        assert len(one) == 8 and all(len(s["steps"]) in (4, 7) for s in one.values())
        store._conn.execute("DELETE FROM trials WHERE trial = 1")  # as if killed before these were stored
        assert steps_of(store, workers=1) == one
    with ResultStore.create(tmp_path / "two", "two", SMALL.model_dump()) as store:
        assert steps_of(store, workers=2) == one


def test_the_careful_reference_agent_does_every_step_of_every_retail_task_right(tmp_path: Path):
    config = RunConfig(personas=["baseline"], tasks=list(RETAIL.tasks), trials=1, agent="reference:perfect")
    with ResultStore.create(tmp_path / "p", "p", config.model_dump()) as store:
        asyncio.run(execute(config, store, 4, workers=1))
        wrong = {t.task_id: t.steps for t in store.trials() if {s["mark"] for s in t.steps["steps"]} != {"right"}}
    assert wrong == {}
