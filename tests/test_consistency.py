"""Consistency beyond outcomes: each figure against a value worked out by hand, how a trial's conversation is read
from its stored text, the paraphrased openings, and how the reports show the section."""

from __future__ import annotations

import json
import math
from io import StringIO

import numpy as np
import pytest
from rich.console import Console

from passhat.customers.paraphrase import FRAMES, paraphrase, paraphrased, reworded, with_opening
from passhat.domains import load_domain
from passhat.metrics.consistency import (
    ConsistencyTally,
    Conversation,
    Usage,
    brier,
    calibration_bins,
    consistency_figures,
    conversation_of_events,
    edit_distance,
    expected_calibration_error,
    mean_with_ci,
    normalized_distance,
    outcome_consistency,
    spread_by_scenario,
    stated_confidence,
)
from passhat.openings import MAX_PARAPHRASES, opening_variant
from passhat.report.consistency import (
    consistency_rows,
    consistency_section,
    conversation,
    conversation_of_text,
    least_consistent,
)
from passhat.report.model import Consistency, Metrics
from passhat.store import TrialRecord
from passhat.trajectory import Event

FIND, GET, CANCEL = "find_customer", "get_order", "cancel_order"


def tally_of(trials: list[tuple[str, int, bool, Conversation | None, Usage | None]], paraphrases: int = 0) -> ConsistencyTally:
    """A tally of (task, trial index, passed, conversation, usage), every trial of persona "calm", plan (FIND, GET, CANCEL)."""
    tally = ConsistencyTally(paraphrases)
    for task, i, passed, said, usage in trials:
        tally.add(task, "calm", i, passed, said, (FIND, GET, CANCEL), usage)
    return tally


def figures_of(tally: ConsistencyTally) -> tuple[dict, dict]:
    """(the run's figures, each scenario's by (task, persona)), its lists turned into one dict per scenario."""
    run = consistency_figures(tally)
    columns = run["scenarios"]
    per = {}
    for i, key in enumerate(zip(columns["task_id"], columns["persona"], strict=True)):
        per[key] = {name: ({r: v[i] for r, v in c.items()} if isinstance(c, dict) else c[i]) for name, c in columns.items()}
    return run, per


def paths_figures(paths: dict[tuple[tuple[str, ...], bool], int]) -> dict:
    """One scenario's sequence figures from its (calls, planned) -> trials, plan (FIND, GET, CANCEL) when planned."""
    tally = ConsistencyTally()
    for (tools, planned), n in paths.items():
        for _ in range(n):
            tally.add("t", "calm", 0, True, Conversation(tools, 1), (FIND, GET, CANCEL) if planned else None, None)
    _, per = figures_of(tally)
    return {k: per["t", "calm"][k] for k in ("tool_sequences", "modal_share", "pairwise_distance", "plan_distance")}


# --- outcome consistency -----------------------------------------------------------------------------------------


def test_outcome_consistency_is_one_when_the_trials_agree_and_zero_when_half_pass():
    c, n = np.array([3, 2, 4, 0]), np.array([4, 4, 4, 4])
    assert outcome_consistency(c, n).tolist() == [0.25, 0.0, 1.0, 1.0]  # 1 − 4 · ¾ · ¼ = 0.25


def test_the_runs_outcome_consistency_is_the_mean_over_scenarios():
    passes = {"t1": [1, 1, 1, 0], "t2": [1, 0, 1, 0], "t3": [1, 1, 1, 1]}
    tally = tally_of([(t, i, bool(r), None, None) for t, rs in passes.items() for i, r in enumerate(rs)])
    run, per = figures_of(tally)
    assert run["outcome"]["mean"] == pytest.approx((0.25 + 0 + 1) / 3)
    assert run["outcome"]["ci"][0] <= run["outcome"]["mean"] <= run["outcome"]["ci"][1]
    assert [per[t, "calm"]["outcome"] for t in ("t1", "t2", "t3")] == [0.25, 0.0, 1.0]


# --- trajectory consistency --------------------------------------------------------------------------------------


def test_edit_distance_counts_inserted_deleted_and_substituted_calls():
    assert edit_distance((FIND, GET, CANCEL), (FIND, CANCEL)) == 1
    assert edit_distance((FIND, GET), (GET, FIND)) == 2
    assert edit_distance((), (FIND, GET)) == 2
    assert normalized_distance((FIND, GET), (FIND, GET, CANCEL)) == pytest.approx(1 / 3)
    assert normalized_distance((FIND, GET), (CANCEL, "refund")) == 1.0
    assert normalized_distance((), ()) == 0.0


def test_a_scenarios_sequences_hand_computed():
    """Two trials made (find, get), one (find): 2 sequences, the most common in 2/3; pairs: (A, A) 0 and twice
    (A, B) 1/2, so 1/3; to the plan (find, get, cancel): A 1/3 twice, B 2/3, so 4/9."""
    figures = paths_figures({((FIND, GET), True): 2, ((FIND,), True): 1})
    assert figures == {
        "tool_sequences": 2,
        "modal_share": pytest.approx(2 / 3),
        "pairwise_distance": pytest.approx(1 / 3),
        "plan_distance": pytest.approx(4 / 9),
    }


def test_one_trial_has_no_pairwise_distance_and_a_trial_without_a_plan_no_plan_distance():
    assert paths_figures({((FIND,), False): 1}) == {
        "tool_sequences": 1,
        "modal_share": 1.0,
        "pairwise_distance": None,
        "plan_distance": None,
    }


def test_the_runs_trajectory_figures_average_the_scenarios():
    same = Conversation((FIND, GET, CANCEL), 3)
    tally = tally_of(
        [("t1", 0, True, same, None), ("t1", 1, True, same, None)]
        + [("t2", 0, True, Conversation((FIND, GET), 2), None), ("t2", 1, False, Conversation((FIND,), 2), None)]
    )
    run, per = figures_of(tally)
    assert per["t1", "calm"]["pairwise_distance"] == 0.0 and per["t1", "calm"]["plan_distance"] == 0.0
    assert per["t2", "calm"]["pairwise_distance"] == pytest.approx(1 / 2)  # (find, get) vs (find)
    assert per["t2", "calm"]["plan_distance"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    t = run["trajectory"]
    assert t["trials"] == 4 and t["tool_sequences"] == 1.5 and t["modal_share"] == 0.75
    assert t["pairwise_distance"]["mean"] == pytest.approx(1 / 4)
    assert t["plan_distance"]["mean"] == pytest.approx(1 / 4)


def test_without_a_read_conversation_there_is_no_trajectory_and_no_turns():
    run, per = figures_of(tally_of([("t1", 0, True, None, None)]))
    assert run["trajectory"] is None and per["t1", "calm"]["tool_sequences"] is None
    assert run["resources"] == {} and run["resources_skipped"] == ["tokens", "cost_usd", "latency_s"]


# --- resource consistency ----------------------------------------------------------------------------------------


def test_cv_and_iqr_of_a_scenarios_values_hand_computed():
    """2, 4, 4, 6: mean 4, population sd √2, CV √2/4; percentiles (linear) 3.5 and 4.5, IQR 1."""
    cv, iqr = spread_by_scenario(np.array([4]), np.array([0, 0, 0, 0]), np.array([2.0, 4.0, 4.0, 6.0]))
    assert cv[0] == pytest.approx(math.sqrt(2) / 4) and iqr[0] == pytest.approx(1.0)


def test_a_scenarios_trials_without_a_value_count_as_zeros():
    """Two of four trials used 2 and 4 tokens: 2, 4, 0, 0: mean 1.5, sd √(11/4), IQR 2.5 − 0."""
    cv, iqr = spread_by_scenario(np.array([2, 4, 0]), np.array([1, 1]), np.array([2.0, 4.0]))
    assert math.isnan(cv[0]) and iqr[0] == 0.0  # two zeros: no CV at a zero mean
    assert cv[1] == pytest.approx(math.sqrt(11 / 4) / 1.5) and iqr[1] == pytest.approx(2.5)
    assert math.isnan(cv[2]) and math.isnan(iqr[2])  # no trial: no figure


def test_resources_are_the_agents_and_zero_ones_are_skipped():
    said = Conversation((FIND, GET), 2)
    tally = tally_of(
        [("t1", 0, True, said, Usage(100, 0.5, 1.0)), ("t1", 1, True, said, Usage(300, 0.5, 3.0))]
        + [("t2", 0, True, Conversation((FIND,), 4), None), ("t2", 1, True, Conversation((FIND,), 6), None)]
    )
    run, per = figures_of(tally)
    assert run["resources_skipped"] == []
    # t1: 100 and 300 (CV 100/200, IQR 250 − 150); t2: 0 and 0 (no CV, IQR 0)
    assert run["resources"]["tokens"] == {"mean": 100.0, "cv": 0.5, "iqr": 50.0}
    assert run["resources"]["cost_usd"]["cv"] == 0.0  # t1's costs agree, t2 (zero) has none
    assert per["t2", "calm"]["cv"]["turns"] == pytest.approx(0.2) and per["t2", "calm"]["iqr"]["turns"] == 1.0
    assert per["t2", "calm"]["cv"]["tokens"] is None


# --- prompt robustness -------------------------------------------------------------------------------------------


def test_trials_take_the_openings_in_turn_and_variant_zero_is_the_run_without_paraphrases():
    assert [opening_variant(i, 2) for i in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert {opening_variant(i, 0) for i in range(5)} == {0}


def test_the_drop_from_original_to_paraphrased_openings_hand_computed():
    """One paraphrase: even trials open as the task does, odd ones paraphrased. t1: original 2/2, paraphrased 1/2;
    t2: original 2/2, paraphrased 0/2. pass^2: 1 → (0 + 0)/2 = 0; avg reward 1 → 0.25."""
    passes = {"t1": [1, 1, 1, 0], "t2": [1, 0, 1, 0]}
    tally = tally_of([(t, i, bool(r), None, None) for t, rs in passes.items() for i, r in enumerate(rs)], paraphrases=1)
    run, per = figures_of(tally)
    r = run["robustness"]
    assert (r["paraphrases"], r["scenarios"], r["k"]) == (1, 2, 2)
    assert (r["original_pass_hat_k"], r["paraphrased_pass_hat_k"]) == (1.0, 0.0)
    deltas = {d["metric"]: d for d in r["deltas"]}
    assert deltas["avg_reward"]["change"] == pytest.approx(-0.75) and deltas["pass^2"]["change"] == -1.0
    assert deltas["avg_reward"]["ci"] == pytest.approx([-1.0, -0.5]) and deltas["avg_reward"]["verdict"] == "worse"
    assert (per["t1", "calm"]["original"], per["t1", "calm"]["paraphrased"]) == ([2, 2], [1, 2])


def test_a_run_without_paraphrases_measures_no_robustness():
    run, per = figures_of(tally_of([("t1", 0, True, None, None)]))
    assert run["robustness"] is None and "original" not in per["t1", "calm"]


# --- calibration -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,confidence",
    [
        ("Done. confidence: 0.8", 0.8),
        ("Your refund is on its way (Confidence 80%).", 0.8),
        ("confidence = 85", 0.85),
        ("confidence .9", 0.9),
        ("confidence: 0.2, then confidence: 0.7", 0.7),
        ("I have every confidence in this.", None),
        ("confidence: 150", None),
        ("CONFIDENCE: 0.8", None),
    ],
)
def test_the_stated_confidence_convention(text, confidence):
    assert stated_confidence(text) == confidence


def test_brier_score_and_calibration_error_hand_computed():
    """0.9, 0.8, 0.3, 0.35 on pass, fail, fail, pass: B = (0.01 + 0.64 + 0.09 + 0.4225) / 4; bins 0.9 (|0.9 − 1|),
    0.8 (|0.8 − 0|) and 0.3 (two: |0.325 − 0.5|): ECE = 0.1/4 + 0.8/4 + 0.175/2 = 0.3125."""
    q, y = [0.9, 0.8, 0.3, 0.35], [1, 0, 0, 1]
    assert brier(q, y) == pytest.approx(1.1625 / 4)
    bins = calibration_bins(q, y)
    assert [(b["low"], b["trials"], b["success"]) for b in bins] == [(0.3, 2, 0.5), (0.8, 1, 0.0), (0.9, 1, 1.0)]
    assert bins[0]["confidence"] == pytest.approx(0.325)
    assert expected_calibration_error(bins) == pytest.approx(0.3125)
    assert calibration_bins([1.0], [1])[0]["low"] == 0.9  # 1.0 falls in the last bin


def test_calibration_over_the_trials_that_stated_a_confidence():
    trials = [(0.9, True), (0.8, False), (0.3, False), (None, True)]
    tally = tally_of([("t1", i, ok, Conversation((FIND,), 1, q), None) for i, (q, ok) in enumerate(trials)])
    run, per = figures_of(tally)
    k = run["calibration"]
    assert (k["judged"], k["stated"]) == (4, 3)
    assert k["brier"] == pytest.approx((0.01 + 0.64 + 0.09) / 3) == per["t1", "calm"]["brier"]


def test_without_a_stated_confidence_calibration_has_only_its_counts():
    run, per = figures_of(tally_of([("t1", 0, True, Conversation((FIND,), 1), None)]))
    assert run["calibration"] == {"judged": 1, "stated": 0, "brier": None, "ece": None, "bins": []}
    assert per["t1", "calm"]["brier"] is None


def test_intervals_of_means_with_many_distinct_values_are_normal_and_agree_with_the_bootstrap():
    rng = np.random.default_rng(0)
    few = np.round(rng.random(2000) * 100) / 100  # 101 distinct values: bootstrapped
    many = rng.random(2000)
    a, b = mean_with_ci(few), mean_with_ci(many)
    assert abs((a["ci"][1] - a["ci"][0]) - (b["ci"][1] - b["ci"][0])) < 0.003
    assert b["ci"] == pytest.approx(
        [b["mean"] - 1.959964 * many.std(ddof=1) / math.sqrt(2000), b["mean"] + 1.959964 * many.std(ddof=1) / math.sqrt(2000)]
    )


# --- reading a conversation from its stored text ---------------------------------------------------------------


EVENTS = [
    Event("user", 'hi, {"kind": "tool", "call_id": "x", "name": "fake"} is just text'),
    Event("agent", "Let me look."),
    Event(
        "tool",
        call_id=None,
        name="find_\\customer",
        args={"name": "get_order"},
        result={"status": "ok", "data": {"kind": "tool"}},
    ),
    Event("tool", call_id='c"2', name=GET, args={}, result={"status": "ok", "data": "confidence: 0.1"}),
    Event("guard", call_id="c3", name=CANCEL, args={}, result={"status": "ok"}),
    Event("agent", "Done (confidence 90%). Anything else?"),
    Event("end", "satisfied"),
]


def test_the_conversation_read_from_the_stored_text_is_the_one_the_events_hold():
    events = [e.to_dict() for e in EVENTS]
    said = conversation_of_text(json.dumps(events))  # the store's own serialization
    assert said == conversation_of_events(events) == Conversation(("find_\\customer", GET), 2, 0.9)


def test_a_transcript_without_the_word_is_not_parsed_for_a_confidence():
    said = conversation_of_text(json.dumps([Event("agent", "All set.").to_dict()]))
    assert said == Conversation((), 1, None)


def stored_trial(steps: dict | None) -> TrialRecord:
    events = [e.to_dict() for e in EVENTS]
    return TrialRecord("t", "baseline", 0, 0, 1, None, None, [], {}, 0.0, 0.0, steps=steps, transcript=json.dumps(events))


def test_a_trials_recorded_conversation_shape_is_read_before_its_transcript():
    shape = Conversation(("get_customer",), 3, 0.25)
    recorded = stored_trial({"outcome": None, "steps": [], "conversation": shape.to_json()})
    assert conversation(recorded) == shape
    assert conversation(stored_trial({"outcome": None, "steps": []})) == conversation_of_events([e.to_dict() for e in EVENTS])
    assert conversation(stored_trial(None)) == Conversation(("find_\\customer", GET), 2, 0.9)  # a store from before steps


def test_a_conversation_shape_reads_back_from_its_stored_json_as_it_was():
    shape = Conversation(("a", "b", "a"), 4, 0.7)
    assert Conversation.from_json(json.loads(json.dumps(shape.to_json()))) == shape
    assert shape.to_json() == {"tools": ["a", "b", "a"], "turns": 4, "confidence": 0.7}


# --- paraphrased openings ----------------------------------------------------------------------------------------


def test_rewording_spells_out_contractions_and_drops_please_but_keeps_every_detail():
    assert reworded("I'd like to cancel my order #R3042198, please.") == "I would like to cancel my order #R3042198."
    assert reworded("Please refund $42.50 to card_1.") == "Refund $42.50 to card_1."
    assert reworded("I don't need it. It's #W9") == "I do not need it. It is #W9."


@pytest.fixture(scope="module")
def retail():
    return load_domain("retail")


def test_a_paraphrase_frames_every_phrasing_of_the_first_request_and_leaves_the_rest(retail):
    task = next(t for t in retail.tasks.values() if len(t.goals) > 1)
    variant = paraphrased(retail, task, 2)
    first = task.goals[0]
    assert variant.goals[0].request == [FRAMES[1].format(request=reworded(r)) for r in first.request]
    assert variant.goals[1:] == task.goals[1:] and variant.id == task.id
    assert variant.goals[0].model_copy(update={"request": first.request}) == first
    assert paraphrased(retail, task, 2) is variant and paraphrased(retail, task, 0) is task
    assert paraphrase(retail, first.request[0], 2 + MAX_PARAPHRASES) == variant.goals[0].request[0]  # variants cycle


def test_only_paraphrased_trials_get_a_paraphrased_customer(retail):
    seen = []
    make = lambda domain, task, persona, rng: seen.append(task)  # noqa: E731
    task = next(iter(retail.tasks.values()))
    assert with_opening(make, 3, 2) is make  # 3 mod 3 = 0: the task's own words
    with_opening(make, 4, 2)(retail, task, None, None)
    assert seen[0].goals[0].request[0].startswith("I was hoping you could help me with something. ")  # 4 mod 3 = 1


# --- the reports ---------------------------------------------------------------------------------------------------


def metrics_with(consistency: dict) -> Metrics:
    return Metrics.model_construct(consistency=Consistency.model_validate(consistency))


def section_of(paraphrases: int, said: Conversation | None, usage: Usage | None = None) -> Metrics:
    """Six trials of t1 (even ones pass) and six of t2 (all pass), each with ``said`` and ``usage``."""
    trials = [("t1", i, i % 2 == 0, said, usage) for i in range(6)] + [("t2", i, True, said, usage) for i in range(6)]
    return metrics_with(consistency_figures(tally_of(trials, paraphrases)))


def test_the_terminal_rows_say_what_was_not_measured():
    m = section_of(0, None)
    rows = {figure: (value, reads) for figure, value, reads in consistency_rows(m.consistency)}
    assert rows["trajectory"] == ("—", "no transcript was read")
    assert rows["calibration"] == ("—", "no stated confidence")
    assert rows["prompt robustness"][1] == "not measured: run with --paraphrase N"
    assert rows["skipped"][0] == "tokens, cost, latency"


def test_the_terminal_rows_give_each_measured_figure():
    m = section_of(1, Conversation((FIND, GET), 3, 0.75), Usage(10, 0.01, 0.5))
    rows = {figure: (value, reads) for figure, value, reads in consistency_rows(m.consistency)}
    assert rows["outcome consistency"][0].startswith("0.500")  # t1: 3 of 6 pass, 1 − 4 · ½ · ½ = 0; t2: all, 1
    assert rows["edit distance to the plan"][0].startswith("0.333")
    assert rows["calibration"][0].startswith("Brier ")
    # one paraphrase: t1's original trials (0, 2, 4) all pass, its paraphrased ones (1, 3, 5) all fail; t2's all pass
    assert rows["pass^3 original → paraphrased"][0] == "1.000 → 0.500"
    assert "skipped" not in rows and "tokens spread" in rows


def test_the_html_section_escapes_and_lists_the_least_consistent_scenarios():
    m = section_of(1, Conversation(("<b>find</b>",), 1, 0.5))
    html = consistency_section(m)
    assert "<h2>Consistency beyond outcomes</h2>" in html and "<b>find</b>" not in html
    assert "<h3>Calibration</h3>" in html and "<h3>Prompt robustness</h3>" in html
    assert "<td>t1</td>" in html and "<td>t2</td>" not in html  # t2's trials all agree


def test_the_terminal_section_prints(capsys):
    from passhat.report.consistency import print_consistency

    m = section_of(0, None)
    out = StringIO()
    print_consistency(m, Console(file=out, width=200))
    assert "consistency beyond outcomes" in out.getvalue() and "no stated confidence" in out.getvalue()


def test_the_least_consistent_scenarios_come_first_and_agreeing_ones_not_at_all():
    tally = tally_of(
        [("t1", i, i < 2, Conversation((FIND,), 1), None) for i in range(4)]  # outcome 0
        + [("t2", i, True, Conversation((FIND,) * (1 + i % 2), 1), None) for i in range(4)]  # outcome 1, 2 sequences
        + [("t3", i, True, Conversation((FIND,), 1), None) for i in range(4)]  # agrees in every respect
    )
    assert least_consistent(metrics_with(consistency_figures(tally)).consistency.scenarios) == [0, 1]
