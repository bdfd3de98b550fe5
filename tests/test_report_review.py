"""What the reports must say and how `report`, `compare`, `traffic` and `guard compare` behave on the runs
that mislead: incomplete, early-stopped, tiny, partly unjudged, or not comparable."""

from __future__ import annotations

import ast
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import passhat
from passhat.cli import main
from passhat.metrics.guard import guard_metrics
from passhat.store import ResultStore, TrialRecord

SRC = Path(passhat.__file__).resolve().parent


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def store(
    out: Path,
    run_id: str,
    rates: dict[tuple[str, str], float],
    trials: int = 8,
    seed: int = 0,
    *,
    stored: int | None = None,
    extra: dict[str, Any] | None = None,
    trial_extra=None,
) -> None:
    """A run whose scenarios pass with the given rates; `stored` trials per scenario are written (default: all),
    extra is merged into the stored config, trial_extra(task, persona, i) may override a trial's fields."""
    rng = np.random.default_rng(seed)
    tasks, personas = sorted({t for t, _ in rates}), sorted({p for _, p in rates})
    config = {
        "domain": "retail",
        "agent": "synthetic",
        "user": "scripted",
        "mode": "strict",
        "seed": seed,
        "personas": personas,
        "tasks": tasks,
        "trials": trials,
        **(extra or {}),
    }
    with ResultStore.create(out / run_id, run_id, config) as s:
        for (task, persona), rate in rates.items():
            for i in range(trials if stored is None else stored):
                passed = bool(rng.random() < rate)
                fields: dict[str, Any] = {
                    "reward": int(passed),
                    "signature": None if passed else "no_write",
                    "infra_error": None,
                    "events": [{"kind": "user", "text": "hi"}],
                    "grade": {},
                }
                if trial_extra:
                    fields.update(trial_extra(task, persona, i) or {})
                s.record(
                    TrialRecord(
                        task,
                        persona,
                        i,
                        i,
                        fields["reward"],
                        fields["signature"],
                        fields["infra_error"],
                        fields["events"],
                        fields["grade"],
                        0.0,
                        0.0,
                        fields.get("usage", {}),
                    )
                )


def report_json(out: Path, run_id: str, *args: str) -> tuple[Any, dict[str, Any]]:
    path = out / f"{run_id}.json"
    result = invoke("report", run_id, "--out", out, "--json", path, *args)
    return result, json.loads(path.read_text())


# --- 1. incomplete and early-stopped runs -------------------------------------------------------------


def test_an_incomplete_run_says_so_in_json_terminal_and_html(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 1.0, ("t2", "a"): 0.5, ("t3", "a"): 0.8}, stored=6)
    result, doc = report_json(tmp_path, "r", "--html", tmp_path / "r.html")
    assert (doc["complete"], doc["planned_trials"], doc["stored_trials"], doc["early_stopped"]) == (False, 24, 18, False)
    assert "incomplete: 18 of 24 planned trials" in result.output and "passhat run --resume r" in result.output
    html = (tmp_path / "r.html").read_text()
    assert "class=warning>incomplete: 18 of 24 planned trials" in html


def test_a_complete_run_says_nothing_of_the_kind(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 1.0, ("t2", "a"): 0.5})
    result, doc = report_json(tmp_path, "r")
    assert (doc["complete"], doc["planned_trials"], doc["stored_trials"], doc["early_stopped"]) == (True, 16, 16, False)
    assert "incomplete" not in result.output and "early-stopped" not in result.output


def test_an_early_stopped_run_is_for_the_gate_only_and_is_not_extrapolated(tmp_path):
    store(tmp_path, "r", {(f"t{i}", "a"): 0.8 for i in range(6)}, stored=5, extra={"early_stop": "k=8,min=0.9"})
    result, doc = report_json(tmp_path, "r", "--html", tmp_path / "r.html", "--full")
    assert doc["early_stopped"] is True and doc["complete"] is False
    m = doc["metrics"]
    assert m["extrapolated"] is None and "stopped early" in m["extrapolation_skipped"]
    out = result.output
    assert (
        "early-stopped run" in out
        and "the figures are not estimates of the agent, use this run for the gate decision only" in out
    )
    assert "not predicted" in out and "predicted pass^k [95% CI]" not in out
    assert "resume with" not in out  # an early stop is not an interruption
    html = (tmp_path / "r.html").read_text()
    assert "early-stopped run" in html and "not predicted" in html and "Model-based pass^100" not in html


def test_absent_early_stop_means_a_full_run(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 0.8}, extra={"early_stop": None})
    _, doc = report_json(tmp_path, "r")
    assert doc["early_stopped"] is False and doc["metrics"]["extrapolated"] is not None


def test_fewer_than_three_trials_per_scenario_are_not_extrapolated(tmp_path):
    store(tmp_path, "r", {(f"t{i}", "a"): 0.7 for i in range(10)}, trials=2)
    result, doc = report_json(tmp_path, "r", "--html", tmp_path / "r.html", "--full")
    m = doc["metrics"]
    assert m["extrapolated"] is None and "at least 3" in m["extrapolation_skipped"]
    assert "not predicted" in result.output and "at least 3" in result.output
    assert "not predicted" in (tmp_path / "r.html").read_text()


# --- 2. the headline first ------------------------------------------------------------------------------


def test_the_terminal_report_opens_with_the_headline(tmp_path):
    store(tmp_path, "r", {(f"t{i}", "a"): 0.9 for i in range(8)})
    _, doc = report_json(tmp_path, "r")
    out = invoke("report", "r", "--out", tmp_path).output
    m = doc["metrics"]
    line = next(ln for ln in out.splitlines() if ln.startswith("pass^1 "))
    assert re.match(r"pass\^1 \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] vs pass\^8 \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]: ", line), line
    assert f"{m['avg_reward']:.3f}" in line and f"{m['pass_hat_k']['8']:.3f}" in line
    assert out.index(line) < out.index("┏")  # before the first table


def terminal(out: Path, run_id: str, *args: str) -> tuple[int, list[str]]:
    """`passhat report`'s exit status and terminal lines."""
    result = invoke("report", run_id, "--out", out, *args)
    return result.exit_code, result.output.splitlines()


FLAKY_READINGS = ((), ("--full",), ("--gate", "k=2,min=0.1"), ("--gate", "k=8,min=0.99"), ("--gate", "none"))


@pytest.fixture(scope="module")
def flaky(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, ...], tuple[int, list[str]]]:
    """One stored run of 8 scenarios that pass 70% of their trials, read with each of FLAKY_READINGS' arguments."""
    out = tmp_path_factory.mktemp("flaky")
    store(out, "flaky", {(f"t{i}", "a"): 0.7 for i in range(8)})
    return {args: terminal(out, "flaky", *args) for args in FLAKY_READINGS}


def test_the_report_leads_with_the_default_bars_verdict_as_advice_and_ends_with_the_headline_and_what_next(flaky):
    code, lines = flaky[()]
    assert code == 0  # advice: no --gate was given, so `make run` exits 0
    assert lines[0].startswith("default bar pass^8 >= 0.9: DOES NOT MEET THE BAR — pass^8 = ")
    assert '--gate "k=8,min=0.9" enforces a bar' in lines[0]
    headline = next(line for line in lines if line.startswith("pass^1 "))
    assert lines[-2] == headline and lines.index(headline) < len(lines) - 2  # said near the top, and again at the end
    assert lines[-1].startswith("next: no_write is the most common failure")
    assert re.search(r"`passhat report flaky --out \S+ --full`", lines[-1]), "its commands name the runs folder read"


def test_the_commands_suggested_name_no_runs_folder_when_it_is_the_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store(Path("runs"), "here", {(f"t{i}", "a"): 0.7 for i in range(3)})
    _, lines = terminal(Path("runs"), "here")
    assert "`passhat report here --full`" in lines[-1]


def test_a_run_that_meets_the_default_bar_is_told_so_and_what_n_of_n_is_worth(tmp_path):
    store(tmp_path, "solid", {(f"t{i}", "a"): 1.0 for i in range(4)})
    code, lines = terminal(tmp_path, "solid")
    assert code == 0 and lines[0].startswith("default bar pass^8 >= 0.9: MEETS THE BAR — pass^8 = 1.000 >= 0.9")
    assert lines[-1].startswith("next: every scenario passed all its trials") and "Wilson lower bound of 0.68" in lines[-1]


def test_a_given_gate_replaces_the_default_bar_and_sets_the_exit_status_and_none_drops_the_verdict(flaky):
    low, high, none = flaky[FLAKY_READINGS[2]], flaky[FLAKY_READINGS[3]], flaky[FLAKY_READINGS[4]]
    assert low[0] == 0 and low[1][0].startswith("gate pass^2 >= 0.1: MEETS THE BAR")
    assert high[0] == 1 and high[1][0].startswith("gate pass^8 >= 0.99: DOES NOT MEET THE BAR")
    assert none[0] == 0 and none[1][0].startswith("run flaky ") and not any("THE BAR" in line for line in none[1])
    assert not any("default bar" in line for line in low[1] + high[1])
    assert none[1][-1].startswith("next: ")


def test_the_long_tables_are_behind_full_and_the_short_report_says_so(flaky):
    (_, short), (_, full) = flaky[()], flaky[("--full",)]
    long_tables = ("scenarios that fail most (", "partition of scenarios by", "consistency beyond outcomes (", "guards: off —")
    assert not any(line.strip().startswith(title) for line in short for title in long_tables)
    assert all(any(line.strip().startswith(title) for line in full) for title in long_tables)
    assert any(line.startswith("more with --full: ") for line in short) and len(short) < len(full) / 2
    assert full[0] == short[0] and full[-2:] == short[-2:]  # the same verdict, headline and next step


# --- 3. guard line: units, task-declared handoffs --------------------------------------------------------


def test_guard_metrics_count_trials_and_mark_task_declared_handoffs():
    ticket = {"kind": "tool", "guard": {"guard": "human_gate", "decision": "ticket"}}
    trials = [("gated", 1, {}, [ticket]), ("other", 1, {}, [ticket, ticket]), ("other", None, {}, [ticket])]
    g = guard_metrics(["human_gate"], trials, gated_tasks={"gated"})
    assert (g["trials"], g["handoffs"], g["handoffs_task_declared"]) == (2, 3, 1)
    assert guard_metrics([], trials)["handoffs_task_declared"] == 3  # gate off for the run: every ticket is a task's
    assert guard_metrics(["human_gate"], trials)["handoffs_task_declared"] is None  # cannot tell


def test_guard_line_labels_units_and_task_declared_handoffs(tmp_path):
    args = [
        "--agent",
        "reference:perfect",
        "--tasks",
        "retail-047",
        "--personas",
        "baseline",
        "--trials",
        "2",
        "--guard",
        "off",
        "--out",
        tmp_path,
        "--run-id",
        "h",
    ]
    assert invoke("run", *args).exit_code == 0
    result, doc = report_json(tmp_path, "h", "--html", tmp_path / "h.html", "--full")  # the guard line of a run without guards
    g = doc["metrics"]["guard"]
    assert g["handoffs"] > 0 and g["handoffs_task_declared"] == g["handoffs"] and g["trials"] == 2
    line = " ".join(ln for ln in result.output.splitlines() if ln.startswith("guards:") or "task-declared" in ln)
    assert "counted in writes" in line and "the failure table counts trials" in line
    assert "task-declared human gate" in result.output.replace("\n", " ")
    html = (tmp_path / "h.html").read_text()
    assert "declare" in html and "per 100 trials" in html


# --- 4. the partition does not claim proven reliability ----------------------------------------------------


def test_partition_shows_what_passing_all_n_is_worth(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 1.0, ("t2", "a"): 0.5, ("t3", "a"): 0.0})
    result, doc = report_json(tmp_path, "r", "--html", tmp_path / "r.html", "--full")
    assert doc["metrics"]["partition"] == {"reliable": 1, "unreliable": 1, "out_of_reach": 1}  # JSON keys kept
    assert doc["scenarios"][0]["class"] == "reliable"
    out = result.output
    assert "passed all (Wilson ≥ 0.68)" in out and "Wilson lower bound of 0.68" in out
    assert "reliable (every trial passed)" not in out
    html = (tmp_path / "r.html").read_text()
    assert "passed all 8 (Wilson lower bound 0.68)" in html and "<td>reliable</td>" not in html


# --- 5. extrapolation formatting -------------------------------------------------------------------------


def test_tiny_extrapolated_figures_read_the_same_in_terminal_and_html(tmp_path):
    store(tmp_path, "r", {(f"t{i}", "a"): 0.7 for i in range(30)})
    result, doc = report_json(tmp_path, "r", "--html", tmp_path / "r.html", "--full")
    assert doc["metrics"]["extrapolated"]["pass_hat_k"]["1000"] < 0.0005
    out = result.output
    row = next(ln for ln in out.splitlines() if re.search(r"│\s+1000 │", ln))
    # No scenario passed all 8, so the upper end beyond n keeps a never-failing share 30 cannot rule out.
    assert "<0.001 [" in row and "<0.001]" not in row and "e-" not in row
    notes = [ln for ln in out.splitlines() if "For k <= n the fit" in ln]
    assert len(notes) == 1 and "largest gap" in notes[0]  # one plain line, not a wrapped caption
    html = (tmp_path / "r.html").read_text()
    predicted = html[html.index("Predicted pass^k beyond n") : html.index("Where the fit agrees")]
    assert "&lt;0.001" in predicted and not re.search(r"\de-\d", predicted)


# --- 6. compare lists what matters ----------------------------------------------------------------------


def test_compare_lists_only_significant_changes_and_counts_the_rest(tmp_path):
    scenarios = [(f"t{i:02d}", "a") for i in range(40)]
    before = {s: 0.75 for s in scenarios}
    store(tmp_path, "before", before, seed=1)
    store(tmp_path, "after", {**before, ("t00", "a"): 0.0}, seed=2)
    path = tmp_path / "cmp.json"
    result = invoke("compare", "before", "after", "--out", tmp_path, "--json", path)
    assert result.exit_code == 0, result.output
    changes = json.loads(path.read_text())["changes"]
    significant = [c for c in changes if c["p_value"] < 0.05]
    assert significant and len(changes) > len(significant) + 10  # many noisy moves
    listed = [ln for ln in result.output.splitlines() if re.match(r"│ t\d\d", ln)]
    assert len(listed) == len(significant) and "t00" in listed[0]
    assert f"{len(changes) - len(significant)} more scenarios changed" in result.output and "--json" in result.output


def test_compare_without_a_significant_change_shows_the_ten_smallest_p(tmp_path):
    scenarios = [(f"t{i:02d}", "a") for i in range(40)]
    store(tmp_path, "before", {s: 0.75 for s in scenarios}, seed=1)
    store(tmp_path, "same", {s: 0.75 for s in scenarios}, seed=3)
    path = tmp_path / "cmp.json"
    result = invoke("compare", "before", "same", "--out", tmp_path, "--json", path)
    changes = json.loads(path.read_text())["changes"]
    assert all(c["p_value"] >= 0.05 for c in changes) and len(changes) > 10
    listed = [ln for ln in result.output.splitlines() if re.match(r"│ t\d\d", ln)]
    assert len(listed) == 10 and "no scenario's change is significant" in result.output.replace("\n", " ")
    assert f"{len(changes) - 10} more scenarios changed" in result.output


# --- 7. traffic shows each task's own record ---------------------------------------------------------------


def test_traffic_with_a_single_component_says_so_and_shows_each_tasks_own_record(tmp_path):
    rates = {(f"t{i:02d}", p): 0.9 for i in range(30) for p in ("a", "b")}
    store(
        tmp_path,
        "r",
        rates,
        trials=8,
        seed=1,
        trial_extra=lambda t, p, i: {"reward": 0, "signature": "no_write"} if t == "t07" and i < 4 else None,
    )
    path = tmp_path / "t.json"
    result = invoke("traffic", "r", "--out", tmp_path, "--per-day", 100, "--json", path)
    assert result.exit_code == 0, result.output
    doc = json.loads(path.read_text())
    assert doc["model"] == "mixture-1" and doc["pooled"] is True
    out = result.output.replace("\n", " ")
    assert "one component" in out and "each scenario's own trials update it" not in out
    risky = next(t for t in doc["tasks"] if t["task_id"] == "t07")
    others = [t for t in doc["tasks"] if t["task_id"] != "t07"]
    assert all(t["success"] == risky["success"] for t in others)  # the pooled model cannot tell them apart...
    c = risky["successes"]
    assert risky["trials"] == 16 and c <= 8 and risky["own_ci"][1] < max(t["own_ci"][0] for t in others)  # ...their record does
    assert risky["own_mean"] == (1 + c) / (2 + 16) < min(t["own_mean"] for t in others)
    assert f"{c}/16" in result.output


def test_traffic_rejects_a_non_finite_per_day(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 0.9})
    for bad in ("nan", "inf"):
        result = invoke("traffic", "r", "--out", tmp_path, "--per-day", bad)
        assert result.exit_code == 2 and "--per-day" in result.output and "Traceback" not in result.output


# --- 8. guard compare refuses runs that are not comparable --------------------------------------------------


def test_guard_compare_needs_the_same_seed_and_scenarios(tmp_path):
    rates = {(f"t{i}", "a"): 0.8 for i in range(6)}
    store(tmp_path, "off", rates, seed=1)
    store(tmp_path, "all", rates, seed=1, extra={"guard": ["idempotency"]})
    store(tmp_path, "seed2", rates, seed=2)
    store(tmp_path, "fewer", dict(list(rates.items())[:4]), seed=1)
    ok = invoke("guard", "compare", "off", "all", "--out", tmp_path)
    assert ok.exit_code == 0, ok.output
    assert re.search(r"unconfirmed writes \(writes\)\s+│\s+0 \(0\.0 /100 trials\)", ok.output)
    seeds = invoke("guard", "compare", "off", "seed2", "--out", tmp_path)
    assert seeds.exit_code == 2 and "different seeds" in seeds.output
    fewer = invoke("guard", "compare", "off", "fewer", "--out", tmp_path)
    assert fewer.exit_code == 2 and "--intersection" in fewer.output
    both = invoke("guard", "compare", "off", "fewer", "--intersection", "--out", tmp_path)
    assert both.exit_code == 0 and "2 scenarios not in every run were left out" in both.output
    assert re.search(r"judged trials\s+│\s+32\s+│\s+32", both.output)


# --- 10. the HTML report holds what the terminal does ---------------------------------------------------------


def _messy(task: str, persona: str, i: int) -> dict[str, Any] | None:
    usage = {
        "agent": {
            "model": "openai/x",
            "calls": 2,
            "cached_calls": 0,
            "input_tokens": 100,
            "output_tokens": 10,
            "cost_usd": 0.01,
            "unpriced_calls": 0,
            "latency_s": [0.1, 0.2],
        }
    }
    if task == "t3":
        return {"reward": None, "signature": None, "infra_error": "RuntimeError: endpoint down", "usage": usage}
    if task == "t1" and i == 0:
        return {"infra_error": "RuntimeError: endpoint down", "reward": None, "signature": None, "usage": usage}
    fault = {"kind": "tool", "name": "get_order", "args": {}, "result": {}, "fault": {"class": "timeout", "actual": None}}
    return {
        "usage": usage,
        "events": [{"kind": "user", "text": "hi"}, fault],
        "grade": {"details": {"unconfirmed_writes": [{"tool": "x"}]}},
    }


def test_html_report_holds_infra_errors_cost_faults_guards_and_the_gate(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 1.0, ("t2", "a"): 1.0, ("t3", "a"): 1.0}, trial_extra=_messy)
    html_path = tmp_path / "r.html"
    result, doc = report_json(tmp_path, "r", "--html", html_path, "--gate", "k=4,min=0.5")
    html = html_path.read_text()
    m = doc["metrics"]
    assert m["infra_errors"] == 9 and m["conservative"]["pass_hat_k"]["8"] < 1
    assert "Infra errors: 9" in html and "counted as failures (conservative)" in html
    assert f"pass^8 {m['conservative']['pass_hat_k']['8']:.3f}" in html
    assert "Cost $0.2400" in html and "tokens 2,400 in / 240 out" in html
    assert "Faults and guards" in html and "<td>timeout</td>" in html and "unconfirmed writes" in html
    gate = html[html.index("<p>Gate ") :]
    gate = gate[: gate.index("</p>")]
    assert "MEETS THE BAR" in gate  # decided by its bounds: unjudged trials leave no single pass^k to bound
    row = next(r for r in html.split("<tr>") if r.startswith("<td>t3</td>"))
    assert "<td>—</td>" in row and "None" not in row
    assert result.exit_code == 0


# --- 11. report exit status and the JUnit gate -----------------------------------------------------------------


def test_report_exits_1_when_the_gate_is_not_met_and_junit_holds_the_gate(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 1.0, ("t2", "a"): 0.0})
    xml = tmp_path / "r.xml"
    missed = invoke("report", "r", "--out", tmp_path, "--gate", "k=8,min=0.9", "--junit", xml)
    assert missed.exit_code == 1 and "DOES NOT MEET THE BAR" in missed.output
    suite = ET.parse(xml).getroot()
    (case,) = [c for c in suite.findall("testcase") if c.get("name", "").startswith("gate ")]
    assert case.find("failure") is not None and suite.get("tests") == "3" and suite.get("failures") == "2"
    met = invoke("report", "r", "--out", tmp_path, "--gate", "k=8,min=0.5", "--junit", xml, "--html", tmp_path / "r.html")
    assert met.exit_code == 0 and "MEETS THE BAR" in met.output and "95% CI" in met.output
    html = (tmp_path / "r.html").read_text()
    gate = html[html.index("<p>Gate ") :]
    assert "MEETS THE BAR" in gate[: gate.index("</p>")] and "95% CI [" in gate[: gate.index("</p>")]
    (case,) = [c for c in ET.parse(xml).getroot().findall("testcase") if c.get("name", "").startswith("gate ")]
    assert case.find("failure") is None and case.find("error") is None


def test_report_of_a_run_with_no_judged_trial_exits_1(tmp_path):
    store(
        tmp_path,
        "r",
        {("t1", "a"): 1.0},
        trial_extra=lambda *_: {"reward": None, "signature": None, "infra_error": "RuntimeError: endpoint down"},
    )
    result = invoke("report", "r", "--out", tmp_path, "--html", tmp_path / "r.html")
    assert result.exit_code == 1 and "no trial could be judged" in result.output
    assert (tmp_path / "r.html").is_file()


# --- 13. layering -----------------------------------------------------------------------------------------------


def _imports(folder: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.setdefault(path.name, set()).add(node.module)
            elif isinstance(node, ast.Import):
                found.setdefault(path.name, set()).update(a.name for a in node.names)
    return found


def test_reports_read_the_store_and_call_metrics_only():
    allowed = (
        "passhat.metrics",
        "passhat.store",
        "passhat.report",
        "passhat.errors",
        "passhat.trajectory",
        "passhat.file_writes",
        "passhat.lazy",
        "passhat.vocabulary",
        "passhat.run_config",
    )  # leaf modules: errors, writing a file whole or not at all, a package's names loaded on first use, shared Literals;
    # and the record a stored run's configuration is read through
    assert {"guard_section.py", "html.py", "faults.py", "guard.py"} <= set(_imports(SRC / "report")) | set(
        _imports(SRC / "metrics")
    )
    for name, modules in _imports(SRC / "report").items():
        inner = {m for m in modules if m.startswith("passhat")}
        assert all(m.startswith(allowed) for m in inner), (name, inner)
    for name, modules in _imports(SRC / "metrics").items():
        inner = {m for m in modules if m.startswith("passhat")}
        # leaves: the trial record's vocabulary and the shared Literals, the rule of which wording a trial's customer
        # opened with, lazy names
        leaves = ("passhat.metrics", "passhat.trajectory", "passhat.vocabulary", "passhat.openings", "passhat.lazy")
        assert all(m.startswith(leaves) for m in inner), (name, inner)
    assert not (SRC / "faults" / "measure.py").exists() and not (SRC / "guard" / "measure.py").exists()
