"""`passhat guard ablate`: which configurations of guards it runs (each set once), every figure of its table
against a hand-computed value on a tiny synthetic set, the pairing by trial key, its stored runs (resumed by
a rerun), and a real effect: the idempotency guard cuts the duplicate writes that lost responses cause."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import BaseModel
from rich.console import Console

from passhat.cli import main
from passhat.errors import UserError
from passhat.guard.ablation import ablated_guards, configurations
from passhat.metrics.ablation import FIGURES, AblationTrial, NothingCompared, ablation_figures
from passhat.report.ablation import Ablation, ablation_document, ablation_table
from passhat.run.ablation import ablation_id, ablation_runs
from passhat.run.runner import new_config
from passhat.run_config import RunConfig
from passhat.store import ResultStore

DOCS = Path(__file__).resolve().parents[1] / "docs"


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


# --- the configurations ----------------------------------------------------------------------------------------


def test_an_ablation_runs_off_each_guard_alone_all_but_each_and_all():
    plan = configurations(["idempotency", "confirmation", "policy"])
    assert [c.name for c in plan] == [
        "off",
        "only-idempotency",
        "only-confirmation",
        "only-policy",
        "without-idempotency",
        "without-confirmation",
        "without-policy",
        "all",
    ]
    assert plan[4].guards == ("confirmation", "policy")
    assert plan[-1].guards == ("idempotency", "confirmation", "policy")


def test_a_set_of_guards_reached_under_two_names_runs_once_under_both():
    two = configurations(["idempotency", "audit"])
    assert [c.names for c in two] == [
        ("off",),
        ("only-idempotency", "without-audit"),
        ("only-audit", "without-idempotency"),
        ("all",),
    ]
    one = configurations(["idempotency"])
    assert [c.names for c in one] == [("off", "without-idempotency"), ("only-idempotency", "all")]


def test_the_guards_to_ablate_are_known_guards_in_the_gateways_order_and_at_least_one():
    assert ablated_guards("audit,idempotency") == ["idempotency", "audit"]
    assert len(ablated_guards("all")) == 6
    for spec in ("off", "", ",", "idempotency,nonsense"):
        with pytest.raises(UserError, match="--guards"):
            ablated_guards(spec)


# --- every figure against a hand-computed value ----------------------------------------------------------------


def trial(reward: int, *, duplicates=0, unconfirmed=0, violations=0, decisions=(), helped: bool | None = None) -> AblationTrial:
    """A judged trial as the graders and the guards record it: writes listed in the grade, decisions on events."""
    details = {
        "duplicate_writes": [{}] * duplicates,
        "unconfirmed_writes": [{}] * unconfirmed,
        "policy_violations": [{}] * violations,
        "required_writes_done": helped,
    }
    events = [{"kind": "tool", "guard": {"guard": "g", "decision": d}} for d in decisions]
    return AblationTrial(reward, {"details": details}, events)


# Two scenarios of two trials. t1 is a write task, t2 a task without writes (helped None).
OFF = {
    ("t1", "p", 0): trial(1, helped=True),
    ("t1", "p", 1): trial(0, duplicates=2, helped=False),
    ("t2", "p", 0): trial(0, unconfirmed=1),
    ("t2", "p", 1): trial(0, violations=1),
}
GUARDED = {
    ("t1", "p", 0): trial(1, helped=True),
    ("t1", "p", 1): trial(1, helped=True),
    ("t2", "p", 0): trial(0, decisions=("refused",)),
    ("t2", "p", 1): trial(1, decisions=("ticket", "conflict")),
}


def figures_of(result, name: str) -> dict[str, Any]:
    return next(c for c in result.configurations if c.name == name)


def test_each_figure_and_its_paired_difference_equal_the_hand_computed_values():
    result = ablation_figures({"off": OFF, "only-x": GUARDED}, "off", k=2)
    assert (result.k, result.scenarios, result.trials, result.left_out) == (2, 2, 4, 0)
    off, guarded = figures_of(result, "off"), figures_of(result, "only-x")
    # pass^1: mean of c/n over scenarios; pass^2: mean of C(c,2)/C(n,2); the rates: 100 * count / 4 trials;
    # helpfulness: helped / trials of write tasks (t1 only)
    expected_off = {
        "pass_hat_1": (1 / 2 + 0) / 2,
        "pass_hat_k": 0.0,
        "duplicate_writes": 100 * 2 / 4,
        "unconfirmed_writes": 100 * 1 / 4,
        "policy_violations": 100 * 1 / 4,
        "refusals": 0.0,
        "handoffs": 0.0,
        "helpfulness": 1 / 2,
    }
    expected_guarded = {
        "pass_hat_1": (2 / 2 + 1 / 2) / 2,
        "pass_hat_k": (1 + 0) / 2,
        "duplicate_writes": 0.0,
        "unconfirmed_writes": 0.0,
        "policy_violations": 0.0,
        "refusals": 100 * 2 / 4,  # refused and conflict
        "handoffs": 100 * 1 / 4,  # the ticket
        "helpfulness": 2 / 2,
    }
    assert {f: off.figures[f].value for f in FIGURES} == pytest.approx(expected_off)
    assert {f: guarded.figures[f].value for f in FIGURES} == pytest.approx(expected_guarded)
    assert off.difference is None
    assert {f: guarded.difference[f].value for f in FIGURES} == pytest.approx(
        {f: expected_guarded[f] - expected_off[f] for f in FIGURES}
    )
    assert off.counts == {
        "trials": 4,
        "duplicate_writes": 2,
        "unconfirmed_writes": 1,
        "policy_violations": 1,
        "refusals": 0,
        "handoffs": 0,
        "helped": 1,
        "write_trials": 2,
    }


def interval(estimate) -> tuple[float, float]:
    return (estimate.lo, estimate.hi)


def test_with_two_scenarios_the_paired_interval_spans_the_two_scenarios_values():
    """A resample of two scenarios holds t1 twice, each once, or t2 twice (a quarter of the resamples each), so
    the 95% interval runs from one scenario's value to the other's, and a difference the same in both scenarios
    has no spread at all: the pairing takes each scenario's difficulty out."""
    result = ablation_figures({"off": OFF, "only-x": GUARDED}, "off", k=2)
    off, guarded = figures_of(result, "off"), figures_of(result, "only-x")
    assert interval(off.figures["pass_hat_1"]) == pytest.approx((0.0, 0.5))  # t2: 0/2, t1: 1/2
    assert interval(off.figures["duplicate_writes"]) == pytest.approx((0.0, 100.0))  # t2: 0 of 2, t1: 2 of 2
    assert interval(guarded.figures["refusals"]) == pytest.approx((0.0, 100.0))  # t1: none, t2: 2 in 2 trials
    assert interval(guarded.difference["pass_hat_1"]) == pytest.approx((0.5, 0.5))  # +1/2 in each scenario
    assert interval(guarded.difference["pass_hat_k"]) == pytest.approx((0.0, 1.0))  # t2: 0 - 0, t1: 1 - 0
    # helpfulness exists only in resamples holding t1, the write task: there it is 1/2 (off) and 1 (only-x)
    assert interval(off.figures["helpfulness"]) == pytest.approx((0.5, 0.5))
    assert interval(guarded.difference["helpfulness"]) == pytest.approx((0.5, 0.5))


def test_only_the_trial_keys_judged_in_every_configuration_are_compared():
    extra = {**OFF, ("t1", "p", 2): trial(1, duplicates=5, helped=True)}  # judged in off only
    result = ablation_figures({"off": extra, "only-x": GUARDED}, "off", k=2)
    assert (result.trials, result.left_out) == (4, 1)
    assert figures_of(result, "off").figures["duplicate_writes"].value == pytest.approx(50.0)


def test_pass_hat_k_takes_the_fewest_compared_trials_of_a_scenario_when_k_asks_for_more():
    assert ablation_figures({"off": OFF, "only-x": GUARDED}, "off", k=8).k == 2


def test_a_figure_without_trials_to_measure_is_none_and_no_common_trial_is_an_error():
    no_writes = {key: t for key, t in OFF.items() if key[0] == "t2"}
    result = ablation_figures({"off": no_writes, "only-x": no_writes}, "off", k=1)
    assert figures_of(result, "off").figures["helpfulness"].value is None
    with pytest.raises(NothingCompared):
        ablation_figures({"off": {("t1", "p", 0): trial(1)}, "only-x": {("t1", "p", 1): trial(1)}}, "off", k=1)


# --- the table and its JSON ------------------------------------------------------------------------------------


def synthetic_document() -> Ablation:
    plan = configurations(["idempotency"])  # off (= without-idempotency), only-idempotency (= all)
    result = ablation_figures({"off": OFF, "only-idempotency": GUARDED}, "off", k=2)
    config = RunConfig(agent="reference:flaky", faults={"lost_response": 0.2}, trials=2, tasks=["t1"], personas=["p"])
    return ablation_document("ablate-x", config, ["idempotency"], plan, result)


def test_the_table_shows_each_figure_with_its_interval_and_difference():
    console = Console(width=130, record=True)
    console.print(ablation_table(synthetic_document()))
    text = console.export_text()
    assert "= without-idempotency" in text and "= all" in text
    off_row = text[text.index(" off ") : text.index("only-idempotency")]
    assert re.search(r"0\.250\s+0\.000\s+50\.0\s+25\.0\s+25\.0\s+0\.0\s+0\.0\s+0\.500", off_row)
    assert re.search(r"0\.00–0\.50\s+0\.00–0\.00\s+0\.0–100\.0", off_row)
    guarded_row = text[text.index("only-idempotency") :]
    assert re.search(
        r"Δ \+0\.500\s+Δ \+0\.500\s+Δ -50\.0\s+Δ -25\.0\s+Δ -25\.0\s+Δ \+50\.0\s+Δ \+25\.0\s+Δ \+0\.500", guarded_row
    )
    assert "+0.50–+0.50" in guarded_row and "pass^2" in text
    assert max(map(len, text.splitlines())) <= 130


def test_the_json_is_the_typed_document_and_every_field_is_documented():
    document = synthetic_document()
    data = json.loads(json.dumps(document.model_dump(mode="json")))
    assert Ablation.model_validate(data) == document
    only = data["configurations"][1]
    assert only["run_id"] == "ablate-x-only-idempotency" and only["also_named"] == ["all"]
    assert only["difference_to_off"]["refusals"] == {"value": 50.0, "ci": [0.0, 100.0]}
    assert data["configurations"][0]["difference_to_off"] is None
    section = (DOCS / "guards.md").read_text().split("## What each guard bought")[1].split("\n## ")[0]
    undocumented = [name for name in _field_names(Ablation) + list(FIGURES) if f"`{name}`" not in section]
    assert undocumented == []


def _field_names(model: type[BaseModel]) -> list[str]:
    names = []
    for name, field in model.model_fields.items():
        names.append(name)
        for inner in _models_in(field.annotation):
            names += _field_names(inner)
    return names


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


# --- the command ---------------------------------------------------------------------------------------------


def test_ablate_prints_the_table_on_the_default_agent_and_a_rerun_resumes_the_stored_runs(tmp_path):
    args = ["guard", "ablate", "--tasks", "retail-001,retail-003,retail-010", "--personas", "baseline", "--trials", "2"]
    args += ["--guards", "idempotency,confirmation", "--workers", "1", "--out", tmp_path, "--json", tmp_path / "a.json"]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    assert "24 trials to run" in first.output  # 4 configurations × 3 scenarios × 2 trials: all-but-one is the other alone
    for name in ("off", "only-idempotency", "= without-confirmation", "only-confirmation", "= without-idempotency", "all"):
        assert name in first.output
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["agent"] == "reference:flaky" and data["compared_trials"] == 6 and data["k"] == 2
    runs = [c["run_id"] for c in data["configurations"]]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == sorted(runs)
    report = invoke("report", runs[0], "--out", tmp_path)
    assert report.exit_code == 0, report.output
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert "0 trials to run" in again.output
    assert json.loads((tmp_path / "a.json").read_text()) == data


def test_the_idempotency_guard_cuts_the_duplicate_writes_of_lost_responses(tmp_path):
    """The reference agents retry a call whose response was lost, as it was: without the guard the write happens
    twice, with it the retry gets the first result. A direction, with enough trials to leave noise out."""
    tasks = ",".join(f"retail-{i:03d}" for i in range(1, 13))
    result = invoke(
        "guard", "ablate", "--tasks", tasks, "--personas", "baseline", "--trials", "4", "--guards", "idempotency",
        "--faults", "lost_response=0.3", "--workers", "1", "--out", tmp_path, "--json", tmp_path / "a.json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    off, guarded = json.loads((tmp_path / "a.json").read_text())["configurations"]
    assert guarded["name"] == "only-idempotency"
    assert guarded["counts"]["duplicate_writes"] < off["counts"]["duplicate_writes"]
    assert guarded["difference_to_off"]["duplicate_writes"]["ci"][1] < 0


def test_a_folder_of_another_run_under_an_ablations_run_name_is_refused(tmp_path):
    base = new_config(
        domain="retail", agent="reference:flaky", user="scripted", personas="baseline", tasks="retail-001", trials=1,
        seed=0, faults="", guard="",
    )  # fmt: skip
    name = configurations(["idempotency"])[0].run_id(ablation_id(base, ["idempotency"]))
    ResultStore.create(tmp_path / name, name, {**base.model_dump(), "seed": 1}).close()
    with pytest.raises(UserError, match="another configuration"), ablation_runs(base, ["idempotency"], tmp_path):
        pass


def test_a_k_beyond_the_trials_and_no_guard_to_ablate_are_refused(tmp_path):
    too_big = invoke("guard", "ablate", "--trials", "2", "--k", "3", "--out", tmp_path)
    assert too_big.exit_code == 2 and "--k 3 exceeds --trials 2" in too_big.output
    off = invoke("guard", "ablate", "--guards", "off", "--out", tmp_path)
    assert off.exit_code == 2 and "--guards" in off.output
    assert list(tmp_path.iterdir()) == []
