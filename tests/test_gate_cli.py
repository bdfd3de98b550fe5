"""The gate, early stopping, compare, traffic and the report files, through the command line."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from passhat.cli import main
from passhat.metrics.gate import Gate, decide
from passhat.metrics.summary import scenario_counts
from passhat.run.early_stop import EarlyStop
from passhat.run.runner import execute
from passhat.run_config import RunConfig
from passhat.store import ResultStore, TrialRecord

TASKS = "retail-001,retail-002,retail-016,retail-020,retail-036"
SMALL = ["--tasks", TASKS, "--personas", "baseline,incoherent", "--trials", "6", "--seed", "3"]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def synthetic_run(out: Path, run_id: str, rates: dict[tuple[str, str], float], trials: int = 8, seed: int = 0) -> None:
    """A store whose scenarios pass with the given probabilities (no agent runs)."""
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
    }
    with ResultStore.create(out / run_id, run_id, config) as store:
        for (task, persona), rate in rates.items():
            for i in range(trials):
                passed = bool(rng.random() < rate)
                store.record(
                    TrialRecord(
                        task,
                        persona,
                        i,
                        i,
                        int(passed),
                        None if passed else "no_write",
                        None,
                        [{"kind": "user", "text": "<b>hi</b>"}],
                        {},
                        0.0,
                        0.0,
                    )
                )


def test_gate_exit_codes(tmp_path):
    synthetic_run(tmp_path, "r", {("t1", "p"): 1.0, ("t2", "p"): 1.0, ("t3", "p"): 0.0})  # pass^8 = 2/3
    met = invoke("gate", "r", "--out", str(tmp_path), "--k", "8", "--min-pass-hat-k", "0.6")
    assert met.exit_code == 0 and "MEETS THE BAR" in met.output and "0.667" in met.output
    missed = invoke("gate", "r", "--out", str(tmp_path), "--k", "8", "--min-pass-hat-k", "0.7")
    assert missed.exit_code == 1 and "DOES NOT MEET" in missed.output and "< 0.7" in missed.output
    too_big = invoke("gate", "r", "--out", str(tmp_path), "--k", "9", "--min-pass-hat-k", "0.5")
    assert too_big.exit_code == 2 and "--k" in too_big.output
    persona = invoke("gate", "r", "--out", str(tmp_path), "--k", "2", "--min-pass-hat-k", "0.5", "--persona", "nobody")
    assert persona.exit_code == 2 and "persona" in persona.output


@pytest.mark.parametrize("bad", ["k=8", "min=0.9", "k=8,min=2", "k=99,min=0.5", "k=2,min=0.5,persona=grumpy"])
def test_bad_gate_on_run_is_a_user_error_before_any_trial(tmp_path, bad):
    result = invoke("run", *SMALL, "--out", str(tmp_path), "--run-id", "x", "--gate", bad)
    assert result.exit_code == 2 and "--gate" in result.output
    assert not (tmp_path / "x").exists()


def test_early_stop_needs_a_gate(tmp_path):
    result = invoke("run", *SMALL, "--out", str(tmp_path), "--early-stop")
    assert result.exit_code == 2 and "--gate" in result.output


def _run(tmp_path: Path, name: str, gate: Gate, early: bool, agent: str) -> tuple[object, list[TrialRecord], int]:
    config = RunConfig(tasks=TASKS.split(","), personas=["baseline", "incoherent"], trials=6, seed=3, agent=agent)
    planned = config.planned_trials()
    with ResultStore.create(tmp_path / name, name, config.model_dump()) as store:
        stopper = EarlyStop(gate, planned) if early else None
        asyncio.run(execute(config, store, 4, early_stop=stopper))
        trials = store.trials()
    return decide(gate, scenario_counts(t.to_result() for t in trials), planned), trials, stopper.skipped if stopper else 0


@pytest.mark.parametrize(
    ("agent", "gate"),
    [("reference:flaky", Gate(6, 0.95)), ("reference:hasty", Gate(3, 0.5)), ("reference:perfect", Gate(2, 0.9))],
)
def test_early_stop_reaches_the_full_runs_decision_with_fewer_trials(tmp_path, agent, gate):
    full, full_trials, _ = _run(tmp_path, "full", gate, early=False, agent=agent)
    early, early_trials, skipped = _run(tmp_path, "early", gate, early=True, agent=agent)
    assert early.meets == full.meets is not None
    assert skipped == len(full_trials) - len(early_trials)
    if full.meets is False:
        assert len(early_trials) < len(full_trials)
    by_key = {t.key: (t.reward, t.signature) for t in full_trials}
    assert all(by_key[t.key] == (t.reward, t.signature) for t in early_trials)  # same seeds, same outcomes


def test_run_with_gate_and_early_stop_reports_savings_and_exit_status(tmp_path):
    path = tmp_path / "r.json"
    result = invoke(
        "run",
        *SMALL,
        "--agent",
        "reference:hasty",
        "--out",
        str(tmp_path),
        "--run-id",
        "g",
        "--gate",
        "k=6,min=0.99",
        "--early-stop",
        "--json",
        str(path),
    )
    assert result.exit_code == 1, result.output
    assert "DOES NOT MEET THE BAR" in result.output and "planned trials saved" in result.output
    gate = json.loads(path.read_text())["gate"]
    assert gate["meets"] is False and gate["trials_saved"] > 0
    again = invoke("gate", "g", "--out", str(tmp_path), "--k", "6", "--min-pass-hat-k", "0.99")
    assert again.exit_code == 1  # the stored, early-stopped run gives the same verdict
    with ResultStore.open(tmp_path / "g") as store:
        assert store.config["early_stop"] == "k=6,min=0.99"  # the stored run says it left trials out
        assert store.config["gate"] == "k=6,min=0.99"  # and what it was judged against (the runs list shows it)
    resumed = invoke("run", "--resume", "g", "--out", str(tmp_path))  # without --early-stop: every trial runs
    assert resumed.exit_code == 0, resumed.output
    with ResultStore.open(tmp_path / "g") as store:
        assert store.config["early_stop"] is None and len(store.completed_keys()) == 5 * 2 * 6


def test_a_persona_gate_early_stops_only_its_own_scenarios(tmp_path):
    result = invoke(
        "run",
        *SMALL,
        "--agent",
        "reference:hasty",
        "--out",
        str(tmp_path),
        "--run-id",
        "p",
        "--gate",
        "k=6,min=0.99,persona=incoherent",
        "--early-stop",
    )
    assert result.exit_code == 1, result.output
    with ResultStore.open(tmp_path / "p") as store:
        keys = store.completed_keys()
        assert store.config["early_stop"] == "k=6,min=0.99,persona=incoherent"
    baseline = {k for k in keys if k[1] == "baseline"}
    assert len(baseline) == 5 * 6  # the persona the gate does not judge runs in full: it is in the report
    assert len(keys - baseline) < 5 * 6  # the gated persona's scenarios stopped early


def test_skipped_trials_are_reported_so_a_progress_bar_ends_full(tmp_path):
    config = RunConfig(tasks=TASKS.split(","), personas=["baseline", "incoherent"], trials=6, seed=3, agent="reference:hasty")
    ran, skipped = [], []
    with ResultStore.create(tmp_path / "s", "s", config.model_dump()) as store:
        stopper = EarlyStop(Gate(6, 0.99), config.planned_trials())
        asyncio.run(execute(config, store, 4, ran.append, stopper, on_skip=lambda: skipped.append(1)))
    assert skipped and len(skipped) == stopper.skipped
    assert len(ran) + len(skipped) == 5 * 2 * 6


def test_evaluate_decides_the_gate_and_the_exit_status(tmp_path):
    from passhat.run.evaluate import evaluate

    config = RunConfig(tasks=TASKS.split(","), personas=["baseline", "incoherent"], trials=6, seed=3, agent="reference:perfect")
    with ResultStore.create(tmp_path / "e", "e", config.model_dump()) as store:
        met = evaluate(config, store, 4, Gate(2, 0.9), early_stop=True)
        assert met.decision.meets is True and met.exit_code == 0 and met.planned == 60
        assert met.gate_json()["trials_saved"] == met.skipped
        assert (met.skipped > 0) == (met.config.early_stop == "k=2,min=0.9") == (store.config["early_stop"] is not None)
    with ResultStore.create(tmp_path / "f", "f", config.model_dump()) as store:
        missed = evaluate(config.model_copy(update={"agent": "reference:hasty"}), store, 4, Gate(6, 0.99))
        assert missed.decision.meets is False and missed.exit_code == 1 and missed.skipped == 0
        assert len(missed.outcomes) == 60 and missed.config.early_stop is None


def test_compare_planted_difference_and_refusal(tmp_path):
    scenarios = [(f"t{i}", p) for i in range(40) for p in ("a", "b")]
    synthetic_run(tmp_path, "before", {s: 0.6 for s in scenarios}, seed=1)
    synthetic_run(tmp_path, "after", {s: 0.95 for s in scenarios}, seed=2)
    synthetic_run(tmp_path, "same", {s: 0.6 for s in scenarios}, seed=3)
    synthetic_run(tmp_path, "other", {s: 0.6 for s in scenarios[:-2]}, seed=4)
    out = tmp_path / "cmp.json"
    better = invoke("compare", "before", "after", "--out", str(tmp_path), "--json", str(out))
    assert better.exit_code == 0 and "verdict: better" in better.output
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "better" and doc["deltas"][0]["ci"][0] > 0
    noise = invoke("compare", "before", "same", "--out", str(tmp_path))
    assert "verdict: within noise" in noise.output
    refused = invoke("compare", "before", "other", "--out", str(tmp_path))
    assert refused.exit_code == 2 and "--intersection" in refused.output
    allowed = invoke("compare", "before", "other", "--out", str(tmp_path), "--intersection")
    assert allowed.exit_code == 0 and "left out" in allowed.output


def test_traffic_command(tmp_path):
    synthetic_run(tmp_path, "r", {(f"t{i}", "a"): (1.0 if i % 2 else 0.7) for i in range(20)})
    path = tmp_path / "traffic.json"
    result = invoke("traffic", "r", "--out", str(tmp_path), "--per-day", "50", "--k-days", "3", "--json", str(path))
    assert result.exit_code == 0, result.output
    doc = json.loads(path.read_text())
    assert doc["per_day"] == 50 and len(doc["tasks"]) == 20
    flaky, solid = doc["tasks"][0], doc["tasks"][1]  # t0 passes ~70%, t1 always
    assert flaky["expected_failures"] > solid["expected_failures"]
    assert flaky["clean_day"] < solid["clean_day"]
    assert all(t["clean_days"] <= t["clean_day"] for t in doc["tasks"])


def test_report_json_html_and_junit(tmp_path):
    synthetic_run(tmp_path, "r", {("t1", "a"): 1.0, ("t2", "a"): 0.5, ("t3", "a"): 0.0})
    paths = {ext: tmp_path / f"report.{ext}" for ext in ("json", "html", "xml")}
    result = invoke(
        "report",
        "r",
        "--out",
        str(tmp_path),
        "--json",
        str(paths["json"]),
        "--html",
        str(paths["html"]),
        "--junit",
        str(paths["xml"]),
        "--gate",
        "k=4,min=0.3",
    )  # t1 alone makes pass^4 >= 1/3
    assert result.exit_code == 0, result.output
    m = json.loads(paths["json"].read_text())["metrics"]
    assert m["partition"] == {"reliable": 1, "unreliable": 1, "out_of_reach": 1}
    assert set(m["ci"]) == {"avg_reward", "pass_hat_k", "pass_at_k"} and len(m["ci"]["pass_hat_k"]["8"]) == 2
    assert set(m["extrapolated"]["pass_hat_k"]) == {"20", "100", "1000"} and m["extrapolated"]["model"]
    html = paths["html"].read_text()
    assert "&lt;b&gt;hi&lt;/b&gt;" in html and "<b>hi</b>" not in html  # store text is escaped
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html
    suite = ET.parse(paths["xml"]).getroot()
    *cases, gate = suite.findall("testcase")
    assert len(cases) == 3 and suite.get("failures") == str(sum(c.find("failure") is not None for c in cases))
    assert gate.get("name") == "gate pass^4 >= 0.3" and gate.find("failure") is None
    assert cases[0].find("failure") is None  # t1 always passes
    assert cases[2].find("failure") is not None  # t3 never does


@pytest.mark.parametrize(
    "args,flag",
    [
        (["gate", "r", "--k", "2", "--min-pass-hat-k", "nan"], "--min-pass-hat-k"),
        (["gate", "r", "--k", "2", "--min-pass-hat-k", "0.5", "--persona", ""], "persona"),
        (["gate", "r", "--k", "2", "--min-pass-hat-k", "0.5", "--persona", "[/x]"], "'[/x]'"),
        (["traffic", "r", "--per-day", "inf"], "--per-day"),
        (["traffic", "r", "--per-day", "10", "--target", "nan"], "--target"),
        (["report", "r", "--gate", "k=x,min=0.9"], "k=x is not a whole number"),
        (["report", "r", "--gate", "k=2,min=high"], "min=high is not a number"),
        (["report", "r", "--gate", "k=2,min=0.5,persona=[/x]"], "'[/x]'"),
    ],
)
def test_gate_and_traffic_mistakes_are_exit_2_never_a_verdict(tmp_path, args, flag):
    synthetic_run(tmp_path, "r", {("t1", "p"): 1.0, ("t2", "p"): 0.5})
    result = invoke(*args, "--out", str(tmp_path))
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    text = " ".join(result.output.split())
    assert flag in text and "Traceback" not in text and "invalid literal" not in text and "could not convert" not in text
