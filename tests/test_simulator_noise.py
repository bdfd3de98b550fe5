"""The harness owns its noise: a failed trial whose customer, not the agent, seems to have gone wrong says so.

Each sign is shown on the trial that has it and on the nearest trial that must not have it: a customer who
turns down the right proposal (and one who turns down a wrong one), a customer who asks again for what it
was given (and one who asks for it the first time), a customer who leaves while the goal is reachable (and
one who leaves after the agent made a write the task does not want)."""

from __future__ import annotations

from test_grade import close, make_task, play

OPENING = "Hi, o1@example.com here. I want to close my account."


def kinds(grade) -> list[str]:
    return [s["kind"] for s in grade.details.get("suspected_simulator_errors", [])]


def test_a_customer_turning_down_the_ground_truth_is_suspected(toy_domain):
    steps = [("agent", "I can close account A-1 for you. Shall I go ahead?"), ("user", "No, that's not what I want.")]
    g = play(toy_domain, make_task(close("A-1")), steps, end="unsatisfied")
    assert g.reward == 0
    assert "turned_down_ground_truth" in kinds(g)


def test_turning_down_a_wrong_proposal_is_no_suspicion(toy_domain):
    steps = [("agent", "I can close account A-2 for you. Shall I go ahead?"), ("user", "No, that's not what I want.")]
    g = play(toy_domain, make_task(close("A-1")), steps, end="unsatisfied")
    assert "turned_down_ground_truth" not in kinds(g)


def test_a_customer_who_asks_why_then_agrees_is_no_suspicion(toy_domain):
    steps = [
        ("agent", "I can close account A-1 for you. Shall I go ahead?"),
        ("user", "Why would I need to confirm?"),
        ("agent", "Closing is permanent. Shall I close account A-1?"),
        ("user", "Yes."),
        close("A-1"),
        ("agent", "Account A-1 is closed."),
    ]
    g = play(toy_domain, make_task(close("A-1")), steps, end="unsatisfied")
    assert g.reward == 0  # the customer left unhappy: a strict failure
    assert "turned_down_ground_truth" not in kinds(g)


def test_a_customer_restating_a_request_already_met_is_suspected(toy_domain):
    steps = [
        ("agent", "Shall I close account A-1?"),
        ("user", "Yes."),
        close("A-1"),
        ("agent", "Done: account A-1 is closed."),
        ("user", "Please, close my account."),
    ]
    g = play(toy_domain, make_task(close("A-1")), steps, end="unsatisfied", opening=OPENING)
    assert "asked_again" in kinds(g)


def test_restating_a_request_not_met_yet_is_no_suspicion(toy_domain):
    steps = [("agent", "Let me look into it."), ("user", "Please, close my account.")]
    g = play(toy_domain, make_task(close("A-1")), steps, end="unsatisfied", opening=OPENING)
    assert "asked_again" not in kinds(g)


def test_leaving_right_after_a_right_proposal_is_suspected(toy_domain):
    steps = [("agent", "Shall I close account A-1?"), ("user", "Forget it, goodbye.")]
    g = play(toy_domain, make_task(close("A-1")), steps, end="abandoned")
    assert {"left_reachable", "turned_down_ground_truth"} <= set(kinds(g))


def test_leaving_after_a_wrong_write_is_no_suspicion(toy_domain):
    steps = [
        ("agent", "Shall I close account A-2?"),
        ("user", "Yes."),
        close("A-2"),
        ("agent", "Shall I close account A-1 as well?"),
        ("user", "Forget it, goodbye."),
    ]
    g = play(toy_domain, make_task(close("A-1")), steps, end="abandoned")
    assert "left_reachable" not in kinds(g)


def test_leaving_after_an_agent_message_that_moved_nothing_is_no_suspicion(toy_domain):
    steps = [("agent", "Let me look into it."), ("user", "Forget it, goodbye.")]
    g = play(toy_domain, make_task(close("A-1")), steps, end="abandoned")
    assert kinds(g) == []


def test_a_passed_trial_carries_no_suspicion(toy_domain):
    steps = [("agent", "Shall I close account A-1?"), ("user", "Yes."), close("A-1"), ("agent", "Account A-1 is closed.")]
    g = play(toy_domain, make_task(close("A-1")), steps)
    assert g.reward == 1 and "suspected_simulator_errors" not in g.details


def test_the_report_counts_and_lists_the_suspected_trials(tmp_path):
    from io import StringIO

    from rich.console import Console

    from passhat.report import build_report, print_report
    from passhat.store import ResultStore, TrialRecord

    sign = {"kind": "turned_down_ground_truth", "event": 3, "note": "no yes to any proposal of the ground truth's close_account"}
    events = [{"kind": "user", "text": "hi"}, {"kind": "agent", "text": "Hello."}]

    def record(i: int, reward: int, signs: list) -> TrialRecord:
        grade = {"details": {"suspected_simulator_errors": signs}}
        return TrialRecord("t1", "baseline", i, i, reward, None if reward else "no_write", None, events, grade, 0.0, 0.0)

    config = {"domain": "retail", "agent": "a", "user": "scripted", "mode": "strict", "seed": 0, "personas": ["baseline"]}
    with ResultStore.create(tmp_path / "r", "r", {**config, "tasks": ["t1"], "trials": 3}) as store:
        for t in (record(0, 0, [sign]), record(1, 0, []), record(2, 1, [])):
            store.record(t)
    with ResultStore.open(tmp_path / "r") as store:
        report = build_report(store)
    noise = report.metrics.suspected_simulator_errors
    assert (noise.trials, noise.by_kind) == (1, {"turned_down_ground_truth": 1})
    assert [(s.task_id, s.trial, s.signs[0].event) for s in noise.suspects] == [("t1", 0, 3)]
    out = StringIO()
    print_report(report, Console(file=out, width=200))
    assert "suspected simulator errors: 1 failed trial" in out.getvalue()
