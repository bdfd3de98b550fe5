"""The dashboard's reads of run stores (passhat.serve.web.queries): counts, grid, trial pages and the live view by
SQL over the store agree with what the report reads trial by trial; names that are no run are refused; and the
report model is cached in memory and on disk, kept while the store is unchanged and rebuilt when it changes.

Stores are filled in code with synthetic trials: judged passes and failures, infra errors and user simulator
errors, so every kind of trial is counted."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path

import pytest

from passhat.errors import UserError
from passhat.metrics.summary import scenario_counts
from passhat.report import build_report
from passhat.serve.web import queries
from passhat.serve.web.queries import (
    NotFound,
    RunCache,
    RunReader,
    TrialFilter,
    run_folder,
    run_folders,
    writer_active,
)
from passhat.store import ResultStore, TrialRecord

TASKS, PERSONAS = ("t1", "t2", "t3"), ("baseline", "impatient")


def trial(task: str, persona: str, i: int, outcome: str = "pass", text: str = "Hello.") -> TrialRecord:
    """A synthetic trial: outcome "pass", "fail" (wrong_arguments, with a backend difference), "infra" or "usersim"."""
    events = [{"kind": "user", "text": text}, {"kind": "agent", "text": "Sure."}, {"kind": "end", "text": "satisfied"}]
    diff = [{"table": "orders", "key": '["#1"]', "actual": {"status": "pending"}, "expected": {"status": "cancelled"}}]
    reward, signature, infra, grade = {
        "pass": (1, None, None, {"reward": 1, "details": {}}),
        "fail": (0, "wrong_arguments", None, {"reward": 0, "details": {"state_differences": diff}}),
        "infra": (None, "infra_error", "Traceback ...\nTimeoutError: the endpoint did not answer", {}),
        "usersim": (0, "user_simulator_error", None, {"reward": 0, "details": {}}),
    }[outcome]
    return TrialRecord(task, persona, i, 1000 + i, reward, signature, infra, events, grade, 10.0, 12.5)


def synthetic_run(out: Path, run_id: str, trials: Iterable[TrialRecord], planned: int = 4, **config: object) -> Path:
    """A run folder holding ``trials``, planned as TASKS × PERSONAS × ``planned`` trials."""
    settings = {"domain": "retail", "agent": "synthetic", "user": "scripted", "mode": "strict", "seed": 0}
    settings |= {"tasks": list(TASKS), "personas": list(PERSONAS), "trials": planned, **config}
    with ResultStore.create(out / run_id, run_id, settings) as store:
        for t in trials:
            store.record(t)
    return out / run_id


def mixed_trials() -> list[TrialRecord]:
    """4 trials of each scenario: t1 passes all, t2 fails some, t3 has an infra error and a simulator error."""
    plan = {"t1": ["pass"] * 4, "t2": ["pass", "fail", "pass", "fail"], "t3": ["pass", "infra", "usersim", "fail"]}
    return [trial(t, p, i, o) for t, outcomes in plan.items() for p in PERSONAS for i, o in enumerate(outcomes)]


@pytest.fixture
def out(tmp_path: Path) -> Path:
    synthetic_run(tmp_path, "mixed", mixed_trials())
    return tmp_path


def test_counts_by_sql_equal_the_reports_counts_of_judged_trials(out):
    with RunReader.open(out, "mixed") as reader:
        counts = reader.counts()
        expected = scenario_counts(t.to_result() for t in reader.store.trial_rows())
    assert counts == expected
    assert counts[("t3", "baseline")] == (1, 2)  # the infra and the simulator error are not judged


def test_the_stamp_counts_trials_by_kind(out):
    with RunReader.open(out, "mixed") as reader:
        stamp = reader.stamp()
    assert (stamp.trials, stamp.judged, stamp.infra_errors) == (24, 20, 2)


def test_a_run_summary_has_the_reports_headline_figures(out):
    with RunReader.open(out, "mixed") as reader:
        summary = queries.run_summary(reader)
        m = build_report(reader.store).metrics
    n = m.trials_per_scenario
    assert (summary.pass_1, summary.pass_1_ci) == (m.avg_reward, m.ci.avg_reward)
    assert (summary.pass_n, summary.pass_n_ci, summary.trials_per_scenario) == (m.pass_hat_k[n], m.ci.pass_hat_k[n], n)
    assert (summary.stored, summary.planned, summary.complete) == (20, 24, False)


def test_an_early_stopped_run_carries_its_gates_verdict(tmp_path):
    synthetic_run(
        tmp_path, "stopped", [trial(t, p, i) for t in TASKS for p in PERSONAS for i in range(3)], early_stop="k=2,min=0.5"
    )
    summary = RunCache(tmp_path).summary("stopped")
    assert summary.early_stopped and summary.gate == "pass^2 >= 0.5"
    assert summary.gate_meets is True and "pass^2" in (summary.gate_reason or "")


def test_a_run_made_with_a_gate_carries_its_verdict_without_an_early_stop(tmp_path):
    failing = [trial("t2", p, i, "fail" if i == 0 else "pass") for p in PERSONAS for i in range(4)]
    synthetic_run(tmp_path, "gated", failing, planned=4, gate="k=4,min=0.9")
    synthetic_run(tmp_path, "plain", failing, planned=4)
    cache = RunCache(tmp_path)
    gated, plain = cache.summary("gated"), cache.summary("plain")
    assert not gated.early_stopped and gated.gate == "pass^4 >= 0.9" and gated.gate_meets is False
    assert (plain.gate, plain.gate_meets) == (None, None)


def test_the_grid_counts_each_scenario_and_pages_by_task(out, monkeypatch):
    monkeypatch.setattr(queries, "GRID_TASKS", 2)
    with RunReader.open(out, "mixed") as reader:
        first, second = reader.grid(1), reader.grid(2)
    assert first.personas == list(PERSONAS)
    assert [task for task, _ in first.rows] == ["t1", "t2"] and [task for task, _ in second.rows] == ["t3"]
    assert (first.page.total, first.page.pages, first.page.has_next, second.page.has_next) == (3, 2, True, False)
    cells = dict(first.rows + second.rows)
    assert cells["t2"]["impatient"] == queries.GridCell(passed=2, judged=4, unjudged=0)
    assert cells["t3"]["baseline"] == queries.GridCell(passed=1, judged=2, unjudged=2)
    assert (cells["t1"]["baseline"].band, cells["t2"]["baseline"].band) == (5, 2)


@pytest.mark.parametrize(
    ("which", "expected"),
    [
        (TrialFilter(), 24),
        (TrialFilter(outcome="passed"), 14),
        (TrialFilter(outcome="failed"), 6),
        (TrialFilter(outcome="unjudged"), 4),
        (TrialFilter(outcome="user_simulator_error"), 2),
        (TrialFilter(task="t2", outcome="wrong_arguments"), 4),
        (TrialFilter(task="t3", persona="impatient"), 4),
        (TrialFilter(task="no such task"), 0),
    ],
)
def test_trial_filters_select_by_task_persona_outcome_and_signature(out, which, expected):
    with RunReader.open(out, "mixed") as reader:
        assert reader.trials(which, 1).page.total == expected


def test_trial_pages_are_distinct_and_cover_the_list_in_store_order(out, monkeypatch):
    monkeypatch.setattr(queries, "PAGE_SIZE", 5)
    with RunReader.open(out, "mixed") as reader:
        pages = [reader.trials(TrialFilter(), n) for n in range(1, 6)]
        every = [t.key for t in reader.store.trial_rows()]
    keys = [t.key for p in pages for t in p.trials]
    assert keys == every and len(set(keys)) == 24
    assert [len(p.trials) for p in pages] == [5, 5, 5, 5, 4] and pages[0].page.pages == 5
    assert not pages[4].page.has_next and pages[4].page.has_previous


def test_an_unknown_outcome_is_a_user_error():
    with pytest.raises(UserError, match="outcome"):
        TrialFilter(outcome="robbed")


def test_one_trial_is_read_whole_and_a_missing_one_is_not_found(out):
    with RunReader.open(out, "mixed") as reader:
        record = reader.trial("t2", "baseline", 1)
        assert (record.signature, record.events[0]["text"]) == ("wrong_arguments", "Hello.")
        with pytest.raises(NotFound, match="no trial 9"):
            reader.trial("t2", "baseline", 9)


@pytest.mark.parametrize("name", ["..", ".", "a/b", "../mixed", ".cache", "nothing-here", "", "mixed/"])
def test_a_name_that_is_no_run_of_the_folder_is_not_found(out, name):
    with pytest.raises(NotFound):
        run_folder(out, name)


def test_a_foreign_file_in_place_of_a_store_is_not_found_with_the_reason(out):
    (out / "junk").mkdir()
    (out / "junk" / "results.sqlite").write_bytes(b"not a database at all" * 100)
    assert run_folders(out) == ["junk", "mixed"]
    with pytest.raises(NotFound, match="not a readable passhat run"):
        with RunReader.open(out, "junk"):
            pass
    summaries = RunCache(out).summaries()
    assert [(s.run_id, s.error is None) for s in summaries] == [("mixed", True), ("junk", False)]


def test_progress_of_a_run_being_written_and_of_a_finished_one(tmp_path):
    settings = {"tasks": ["t1"], "personas": ["baseline"], "trials": 3, "domain": "retail", "agent": "synthetic"}
    store = ResultStore.create(tmp_path / "live", "live", settings)  # holds the writer's lock, as `passhat run` does
    store.record(trial("t1", "baseline", 0))
    with RunReader.open(tmp_path, "live") as reader:
        writing = reader.progress()
    assert (writing.state, writing.stored, writing.planned, writing.writing) == ("writing", 1, 3, True)
    store.close()
    assert writer_active(tmp_path / "live") is False
    with RunReader.open(tmp_path, "live") as reader:
        assert reader.progress().state == "stopped"
    synthetic_run(
        tmp_path, "done", [trial("t1", "baseline", i) for i in range(3)], tasks=["t1"], personas=["baseline"], planned=3
    )
    with RunReader.open(tmp_path, "done") as reader:
        done = reader.progress()
    assert (done.state, done.pass_hat_k) == ("finished", {1: 1.0, 3: 1.0})


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_report_model_is_built_once_then_kept_in_memory_and_on_disk(out, monkeypatch):
    built = []
    real = queries.build_run_report
    monkeypatch.setattr(queries, "build_run_report", lambda reader: built.append(reader.run_id) or real(reader))
    cache = RunCache(out)
    report = cache.report("mixed")
    assert cache.report("mixed") is report and built == ["mixed"]
    with RunReader.open(out, "mixed") as reader:
        assert report.to_json() == build_report(reader.store, {}, None, set()).to_json()
    assert (out / ".cache" / "dashboard" / "mixed" / "report.json").is_file()
    restarted = RunCache(out)  # a new server process: the model comes from disk
    assert restarted.report("mixed").to_json() == report.to_json() and built == ["mixed"]


def test_a_run_that_changes_is_recomputed_at_most_every_few_seconds(tmp_path):
    settings = {"tasks": ["t1"], "personas": ["baseline"], "trials": 4, "domain": "retail", "agent": "synthetic"}
    clock = Clock()
    cache = RunCache(tmp_path, clock)
    with ResultStore.create(tmp_path / "live", "live", settings) as store:
        store.record(trial("t1", "baseline", 0))
        assert cache.report("live").stored_trials == 1
        store.record(trial("t1", "baseline", 1, "fail"))
        assert cache.report("live").stored_trials == 1  # built a moment ago: kept while the run goes on
        clock.now += queries.LIVE_RECOMPUTE_S
        assert cache.report("live").stored_trials == 2
        assert cache.summary("live").stored == 2


def test_a_stale_model_on_disk_is_not_used(out):
    RunCache(out).report("mixed")
    with ResultStore.resume(out / "mixed") as store:
        store.record(trial("t1", "baseline", 4))
    assert RunCache(out).report("mixed").stored_trials == 21


def test_a_store_checkpointed_without_new_trials_keeps_its_model(out, monkeypatch):
    cache = RunCache(out)
    report = cache.report("mixed")
    (out / "mixed" / "results.sqlite").touch()  # what SQLite's checkpoint does to the file, without a new trial
    monkeypatch.setattr(queries, "build_run_report", lambda reader: pytest.fail("rebuilt an unchanged run"))
    assert cache.report("mixed") is report


def test_the_memory_holds_a_bounded_number_of_models(tmp_path, monkeypatch):
    monkeypatch.setattr(queries, "REPORTS_IN_MEMORY", 2)
    for name in ("a", "b", "c"):
        synthetic_run(tmp_path, name, [trial("t1", "baseline", 0)])
    cache = RunCache(tmp_path)
    for name in itertools.chain("abc", "c"):
        cache.report(name)
    assert list(cache._reports) == ["b", "c"]
