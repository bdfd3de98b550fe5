"""Simulated against human customers: `passhat compare SIM HUMAN` pairs the scenarios people played, needs no
--force for the customers differing (that is what it measures), and says how many human trials stand behind the
figures, how many were abandoned, and which failure signatures only people (or only the simulator) brought out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from passhat.cli import main
from passhat.metrics.customers import StoredTrial, customer_gap
from passhat.run.human import HumanRuns


def test_the_gap_counts_only_the_scenarios_both_runs_have():
    sim = [
        StoredTrial(("t-1", "baseline"), True, None, 4),
        StoredTrial(("t-1", "baseline"), True, "wrong_arguments", 6),
        StoredTrial(("t-2", "baseline"), True, "max_turns", 30),  # no person played t-2
    ]
    human = [StoredTrial(("t-1", "baseline"), True, "closed_unresolved", 3), StoredTrial(("t-1", "baseline"), False, None, None)]
    gap = customer_gap(sim, human)
    assert gap.scenarios == 1
    assert (gap.simulated.judged, gap.simulated.median_turns, gap.simulated.signatures) == (2, 5, {"wrong_arguments": 1})
    assert (gap.human.judged, gap.human.unjudged, gap.human.median_turns) == (1, 1, 3)
    assert (gap.only_human, gap.only_simulated) == (["closed_unresolved"], ["wrong_arguments"])


def human_run(out: Path) -> str:
    """A human run of retail-001: one person gives up after the agent's first answer, another leaves the chat idle."""

    async def play() -> str:
        runs = HumanRuns(out, "reference:perfect", 0.5, lambda *a, **k: None)
        quitter = await runs.start("tess", "retail", "retail-001", "baseline")
        quitter.customer.say("Hi, I'd like to cancel an order.")
        while not quitter.customer.your_turn:
            await asyncio.sleep(0.001)
        quitter.customer.say("", "give_up")
        idle = await runs.start("omar", "retail", "retail-001", "baseline")
        await asyncio.gather(quitter.playing, idle.playing)  # type: ignore[arg-type]
        await runs.aclose()
        return quitter.run_id

    return asyncio.run(play())


def test_compare_sets_the_simulated_run_against_the_human_one(tmp_path: Path):
    out = tmp_path / "runs"
    sim = CliRunner().invoke(
        main,
        ["run", "--out", str(out), "--run-id", "sim", "--tasks", "retail-001,retail-002", "--personas", "baseline",
         "--trials", "2", "--agent", "reference:perfect", "--workers", "1"],
    )  # fmt: skip
    assert sim.exit_code == 0, sim.output
    human = human_run(out)
    compared = CliRunner().invoke(main, ["compare", "sim", human, "--out", str(out), "--json", str(tmp_path / "gap.json")])
    assert compared.exit_code == 0, compared.output
    said = " ".join(compared.output.split())
    assert "Simulated and human customers over the 1 scenarios people played" in said
    assert "Every human figure rests on 1 judged human trial (1 abandoned, not scored)" in said
    assert "Only people triggered: closed_unresolved; only the simulator: none" in said
    customers = json.loads((tmp_path / "gap.json").read_text())["customers"]
    assert (customers["simulated"]["judged"], customers["human"]["judged"], customers["human"]["unjudged"]) == (2, 1, 1)
