"""Consistency beyond outcomes, end to end: real runs through `passhat run`, their section in the terminal, JSON and
HTML reports, paraphrased openings that leave the original trials as they were, and an agent that states its
confidence (``python:test_consistency_runs:confident_agent``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from passhat.cli import main
from passhat.metrics.consistency import Conversation, conversation_of_events
from passhat.report import build_report
from passhat.store import ResultStore, TrialRecord

TASKS = "retail-001,retail-005"
CONFIDENCE = 0.8


def run(out: Path, run_id: str, *extra: str, tasks: str = TASKS) -> Result:
    """The run's terminal report with --full: the consistency section is one of its long tables."""
    return CliRunner().invoke(
        main,
        ["run", "--tasks", tasks, "--personas", "baseline,incoherent", "--trials", "4", "--out", str(out), "--run-id", run_id,
         "--json", str(out / f"{run_id}.json"), "--full", *extra],
    )  # fmt: skip


def report(out: Path, run_id: str) -> dict[str, Any]:
    return json.loads((out / f"{run_id}.json").read_text())


def stored(out: Path, run_id: str) -> dict[tuple[str, str, int], str]:
    """Each stored trial's events as the store keeps them."""
    with ResultStore.open(out / run_id) as store:
        return {t.key: json.dumps(t.events) for t in store.trials()}


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("consistency")
    result = run(out, "plain")
    assert result.exit_code == 0, result.output
    (out / "plain.txt").write_text(result.output)
    html = CliRunner().invoke(main, ["report", "plain", "--out", str(out), "--html", str(out / "plain.html")])
    assert html.exit_code == 0, html.output
    return out


def test_a_small_run_shows_the_section_in_the_terminal_the_json_and_the_html(plain: Path):
    assert "consistency beyond outcomes" in (plain / "plain.txt").read_text()
    assert "<h2>Consistency beyond outcomes</h2>" in (plain / "plain.html").read_text()
    doc = report(plain, "plain")
    c = doc["metrics"]["consistency"]
    assert c["trajectory"]["trials"] == 16 and c["trajectory"]["plan_distance"] is not None
    assert set(c["resources"]) == {"turns", "tool_calls"} and c["resources_skipped"] == ["tokens", "cost_usd", "latency_s"]
    assert c["robustness"] is None and c["calibration"]["stated"] == 0
    assert c["scenarios"]["task_id"] == [s["task_id"] for s in doc["scenarios"]] and len(c["scenarios"]["outcome"]) == 4


def unrecorded(trials: Iterable[TrialRecord]) -> Iterator[TrialRecord]:
    """The trials as a store written before runs recorded their conversation shape holds them."""
    for t in trials:
        yield dataclasses.replace(t, steps={k: v for k, v in t.steps.items() if k != "conversation"}) if t.steps else t


def assert_recorded_shapes_give_what_the_transcripts_give(folder: Path) -> None:
    """Each judged trial records its conversation shape as its events give it, and the report's consistency figures
    are the same from the recorded shapes, from the transcripts scanned unparsed, and from the parsed events."""
    with ResultStore.open(folder) as store:
        assert all(Conversation.from_json(t.steps["conversation"]) == conversation_of_events(t.events) for t in store.trials())
        recorded = build_report(store).to_json()
        scanned = build_report(store, trials=unrecorded(store.report_trials())).to_json()  # transcripts scanned
        parsed = build_report(store, trials=unrecorded(store.trials())).to_json()  # whole records: events parsed
    assert recorded["metrics"]["consistency"] == scanned["metrics"]["consistency"] == parsed["metrics"]["consistency"]


def test_recorded_conversation_shapes_give_what_the_transcripts_give(plain: Path):
    assert_recorded_shapes_give_what_the_transcripts_give(plain / "plain")


def test_paraphrased_openings_leave_the_original_trials_as_a_run_without_them_makes_them(plain: Path):
    result = run(plain, "reworded", "--paraphrase", "1")
    assert result.exit_code == 0, result.output
    original, reworded = stored(plain, "plain"), stored(plain, "reworded")
    assert original.keys() == reworded.keys()
    assert all(original[k] == reworded[k] for k in original if k[2] % 2 == 0)  # variant 0: byte for byte
    assert all(original[k] != reworded[k] for k in original if k[2] % 2 == 1)  # variant 1: other words
    r = report(plain, "reworded")["metrics"]["consistency"]["robustness"]
    assert (r["paraphrases"], r["scenarios"], r["k"]) == (1, 4, 2)
    assert {d["metric"] for d in r["deltas"]} == {"avg_reward", "pass^2", "pass@2"}
    assert "original → paraphrased" in result.output


def test_paraphrases_are_for_the_scripted_customer_only(tmp_path: Path):
    result = run(tmp_path, "r", "--paraphrase", "1", "--user", "llm:openai/gpt-4.1")
    assert result.exit_code == 2 and "--paraphrase rewords the scripted customer's request" in result.output
    assert not (tmp_path / "r").exists()


# --- an agent that states its confidence --------------------------------------------------------------------------


class ConfidentConversation:
    """The Python example agent's conversation, each message that proposes nothing stating its confidence."""

    def __init__(self, inner: Any):
        self.inner = inner

    async def respond(self, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        answer = await self.inner.respond(conversation, tools)
        message = answer.get("message")
        if message and "Shall I go ahead?" not in message:
            answer = {**answer, "message": f"{message} (confidence: {CONFIDENCE})"}
        return answer


class ConfidentAgent:
    def __init__(self) -> None:
        from examples.python_agent.retail_agent import create_agent

        self.inner = create_agent()

    def new_conversation(self, trial: Any) -> ConfidentConversation:
        return ConfidentConversation(self.inner.new_conversation(trial))


def confident_agent() -> ConfidentAgent:
    return ConfidentAgent()


def test_an_agents_stated_confidence_is_scored_against_its_trials_outcomes(tmp_path: Path):
    result = run(tmp_path, "sure", "--agent", "python:test_consistency_runs:confident_agent", tasks="retail-001,retail-005")
    assert result.exit_code == 0, result.output
    doc = report(tmp_path, "sure")
    rewards = [r for s in doc["scenarios"] for r in s["rewards"]]
    assert 0 < sum(rewards) < len(rewards)  # the example agent cancels orders and declines the rest
    k = doc["metrics"]["consistency"]["calibration"]
    assert k["stated"] == k["judged"] == len(rewards)
    assert k["brier"] == pytest.approx(sum((CONFIDENCE - r) ** 2 for r in rewards) / len(rewards))
    assert k["ece"] == pytest.approx(abs(CONFIDENCE - sum(rewards) / len(rewards)))  # one bin
    assert "no stated confidence" not in result.output and "Brier" in result.output
    assert_recorded_shapes_give_what_the_transcripts_give(tmp_path / "sure")
