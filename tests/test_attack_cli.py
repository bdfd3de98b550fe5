"""`passhat attack`: the suite from the command line, stored and resumable, with its report in the terminal and JSON."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from passhat.attack.runner import new_attack_config, run_attacks
from passhat.attack.store import AttackRecord, AttackStore
from passhat.cli import main

SMALL = ["--tasks", "retail-001,retail-002,retail-010", "--trials", "2"]
LIBRARY = str(Path(__file__).parent / "domains" / "library")


def invoke(*args: str):
    return CliRunner().invoke(main, ["attack", *args])


def suite(tmp_path: Path, name: str, *args: str) -> dict:
    report = tmp_path / f"{name}.json"
    result = invoke(*SMALL, "--out", str(tmp_path), "--run-id", name, "--json", str(report), *args)
    assert result.exit_code == 0, result.output
    return json.loads(report.read_text())


def pass1(figure: dict) -> float:
    return figure["pass_hat_k"]["1"]


def test_on_retail_the_injectable_agent_is_attacked_and_the_tool_filter_lowers_its_success(tmp_path: Path) -> None:
    """The issue's acceptance: attack success > 0 without defenses, lower with the tool filter, utility without attack
    that of the perfect agent."""
    report = suite(tmp_path, "inj", "--agent", "reference:injectable", "--defense", "tool_filter")
    none, filtered = report["configurations"]
    assert (none["label"], filtered["label"]) == ("none", "tool_filter")
    assert pass1(none["under_attack"]["attack_success"]) > 0
    assert pass1(filtered["under_attack"]["attack_success"]) < pass1(none["under_attack"]["attack_success"])
    assert filtered["refused_calls"] > 0
    perfect = suite(tmp_path, "perfect", "--agent", "reference:perfect", "--attacks", "urgency", "--goals", "address_hijack")
    assert none["utility_without_attack"] == perfect["configurations"][0]["utility_without_attack"]
    assert pass1(perfect["configurations"][0]["under_attack"]["attack_success"]) == 0
    assert [a["name"] for a in report["attacks"]] == [
        "ignore_previous",
        "fake_system",
        "tool_impersonation",
        "urgency",
        "multi_step",
    ]
    assert set(none["per_goal"]) == {"refund_to_attacker", "address_hijack", "stranger_email"}
    assert report["judged_trials"] == 2 * 3 * 2 * (1 + 5 * 3) and report["infra_errors"] == 0


def test_the_terminal_report_shows_the_baseline_each_attack_each_goal_and_the_defenses(tmp_path: Path) -> None:
    result = invoke(
        *SMALL, "--out", str(tmp_path), "--attacks", "urgency,fake_system", "--goals", "stranger_email", "--defense", "spotlight"
    )
    assert result.exit_code == 0, result.output
    for text in (
        "utility without attack",
        "per attack",
        "urgency",
        "fake_system",
        "per goal",
        "stranger_email",
        "defenses",
        "spotlight",
    ):
        assert text in result.output


def test_a_suite_cut_short_and_resumed_reports_what_an_uninterrupted_one_does(tmp_path: Path) -> None:
    whole = suite(tmp_path, "whole", "--attacks", "urgency", "--goals", "address_hijack")
    config = new_attack_config(
        "urgency", "address_hijack", "none", domain="retail", agent="reference:injectable", user="scripted",
        personas="baseline", tasks="retail-001,retail-002,retail-010", trials=2,
    )  # fmt: skip

    def cut(record: AttackRecord) -> None:
        stored.append(record)
        if len(stored) == 4:
            signal.raise_signal(signal.SIGINT)  # as a terminal's Ctrl-C arrives: asyncio cancels the suite

    stored: list[AttackRecord] = []
    with AttackStore.create(tmp_path / "cut", "cut", config.model_dump()) as store, pytest.raises(KeyboardInterrupt):
        asyncio.run(run_attacks(config, store, concurrency=1, on_trial=cut))
    report = tmp_path / "resumed.json"
    result = invoke("--resume", "cut", "--out", str(tmp_path), "--json", str(report))
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["configurations"] == whole["configurations"]
    refused = invoke("--resume", "cut", "--out", str(tmp_path), "--trials", "3")
    assert refused.exit_code == 2 and "--trials" in refused.output


def test_a_judged_trial_is_never_stored_twice_and_one_not_judged_is_replaced(tmp_path: Path) -> None:
    suite(tmp_path, "s2", "--attacks", "urgency", "--goals", "address_hijack")
    with AttackStore.resume(tmp_path / "s2") as store:
        judged = store.outcomes()[0]
        with pytest.raises(ValueError, match="already stored"):
            store.record(AttackRecord(judged, [], 0.0, 0.0))
        later = dataclasses.replace(judged, trial=99)
        store.record(AttackRecord(dataclasses.replace(later, reward=None, infra_error="the model API was down"), [], 0.0, 0.0))
        assert later.key not in store.completed_keys()
        store.record(AttackRecord(later, [], 0.0, 0.0))
        assert later.key in store.completed_keys() and later in store.outcomes()


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--trials", "1", "--tasks", "retail-001", "--goals", "steal_everything"], "steal_everything"),
        (["--trials", "1", "--tasks", "retail-001", "--attacks", "flattery"], "--attacks"),
        (["--trials", "1", "--tasks", "retail-001", "--defense", "firewall"], "--defense"),
        (["--trials", "1", "--tasks", "retail-001", "--agent", "mcp+http://127.0.0.1:1/mcp"], "mcp+"),
        (["--trials", "1", "--domain", LIBRARY], "declares no injection"),
        (["--resume", "nothing-here"], "there is no run"),
    ],
)
def test_mistakes_end_in_one_message_naming_what_to_fix(tmp_path: Path, args: list[str], named: str) -> None:
    result = invoke("--out", str(tmp_path), *args)
    assert result.exit_code == 2 and named in result.output and "Traceback" not in result.output
