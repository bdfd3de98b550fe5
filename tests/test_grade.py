"""Graders: reward is earned on the backend, in words, and by asking first; each failure gets the
most specific signature."""

from __future__ import annotations

import pytest
from conftest import TOY_IDENTITY

from passhat.domains.model import Action, Goal, Task
from passhat.env import Environment
from passhat.grade import grade_trial
from passhat.trajectory import Event


def close(account: str, note: str = "") -> Action:
    return Action(tool="close_account", args={"account_id": account, "note": note})


def make_task(*closes: Action, tell: tuple[dict, ...] = ()) -> Task:
    goal = Goal.model_validate(
        {"kind": "close", "request": ["close my account"], "outcome": "done", "actions": list(closes), "tell": list(tell)}
    )
    return Task(id="t", summary="close", customer=TOY_IDENTITY, instruction="close it", goals=[goal])


def play(domain, task, steps, mode="strict", end="satisfied", opening="hi, o1@example.com"):
    """Steps: ("user"|"agent", text) or an Action to execute. Authentication comes first."""
    env = Environment(domain)
    events = [Event("user", opening)]
    for step in [Action(tool="find_account", args={"email": "o1@example.com"}), *steps]:
        if isinstance(step, Action):
            ex = env.execute(step.tool, dict(step.args))
            v = tuple({"rule": x.rule, "reason": x.reason} for x in ex.violations)
            events.append(Event("tool", name=ex.name, args=ex.args, result=ex.result, violations=v))
        else:
            events.append(Event(*step))
    events.append(Event("end", end))
    return grade_trial(domain, task, env, events, mode)


def confirmed(action: Action, answer: str = "Yes, please.") -> list:
    return [("agent", f"I will close account {action.args['account_id']}. Shall I?"), ("user", answer), action]


def test_right_write_confirmed_earns_reward(toy_domain):
    g = play(toy_domain, make_task(close("A-1")), confirmed(close("A-1")))
    assert (g.reward, g.signature, g.state_ok, g.trajectory_ok) == (1, None, True, True)


def test_a_write_without_a_yes_is_not_a_pass(toy_domain):
    task = make_task(close("A-1"))
    steps = [("agent", "Closing account A-1 now."), close("A-1")]
    strict = play(toy_domain, task, steps)
    assert (strict.reward, strict.signature) == (0, "unconfirmed_write")
    assert play(toy_domain, task, steps, mode="tau").reward == 1  # tau grades state and output only


@pytest.mark.parametrize("answer", ["Yes... no wait, not that one", "Hmm, why?", "no"])
def test_only_an_explicit_yes_confirms(toy_domain, answer):
    g = play(toy_domain, make_task(close("A-1")), confirmed(close("A-1"), answer))
    assert g.signature == "unconfirmed_write"


def test_a_yes_to_another_proposal_does_not_confirm(toy_domain):
    steps = [("agent", "I will close account A-3. OK?"), ("user", "Yes"), close("A-1")]
    assert play(toy_domain, make_task(close("A-1")), steps).signature == "unconfirmed_write"


def test_write_on_another_entity(toy_domain):
    g = play(toy_domain, make_task(close("A-1")), confirmed(close("A-3")))
    assert (g.reward, g.signature) == (0, "wrong_entity_write")


def test_write_on_right_entity_with_wrong_arguments(toy_domain):
    g = play(toy_domain, make_task(close("A-1")), confirmed(close("A-1", note="typo")))
    assert (g.reward, g.signature) == (0, "wrong_arguments")


def test_extra_write(toy_domain):
    g = play(toy_domain, make_task(close("A-1")), confirmed(close("A-1")) + confirmed(close("A-3")))
    assert (g.reward, g.signature) == (0, "extra_write")


def test_partial_resolution(toy_domain):
    g = play(toy_domain, make_task(close("A-1"), close("A-3")), confirmed(close("A-1")))
    assert (g.reward, g.signature) == (0, "partial_resolution")


def test_no_write_after_looking_everything_up(toy_domain):
    steps = [Action(tool="get_account", args={"account_id": "A-1"}), ("agent", "All looked up. Bye!")]
    g = play(toy_domain, make_task(close("A-1")), steps)
    assert (g.reward, g.signature) == (0, "no_write")


@pytest.mark.parametrize(
    "end,signature", [("abandoned", "user_abandoned"), ("max_turns", "max_turns"), ("unsatisfied", "closed_unresolved")]
)
def test_nothing_done_is_blamed_on_how_it_ended(toy_domain, end, signature):
    g = play(toy_domain, make_task(close("A-1")), [("agent", "Hello?")], end=end)
    assert (g.reward, g.signature) == (0, signature)


def test_failed_write_never_recovered(toy_domain):
    steps = [("agent", "Closing A-1, ok?"), ("user", "yes"), close("A-99")]
    assert play(toy_domain, make_task(close("A-1")), steps).signature == "tool_error_unrecovered"


def test_policy_violation_outranks_everything(toy_domain):
    task = Task(
        id="t2",
        summary="s",
        customer=TOY_IDENTITY,
        instruction="i",
        goals=[Goal(kind="close", request=["close A-2"], outcome="refused", forbidden=[close("A-2")])],
    )
    g = play(toy_domain, task, confirmed(close("A-2")))
    assert (g.reward, g.signature) == (0, "policy_violation")
    assert g.details["policy_violations"][0]["rule"] == "close-open-only"
    refused = play(toy_domain, task, [("agent", "Sorry, A-2 is already closed.")])
    assert refused.reward == 1


def test_facts_must_be_told(toy_domain):
    task = make_task(close("A-1"), tell=({"fact": "account_status", "of": {"account_id": "A-1"}, "is": "closed"},))
    silent = play(toy_domain, task, confirmed(close("A-1")))
    assert (silent.reward, silent.signature) == (0, "missing_output")
    told = play(toy_domain, task, confirmed(close("A-1")) + [("agent", "Account A-1 is now closed.")])
    assert told.reward == 1
    denied = play(toy_domain, task, confirmed(close("A-1")) + [("agent", "Account A-1 is not closed.")])
    assert (denied.reward, denied.signature) == (0, "missing_output")


def test_a_yes_to_another_action_on_the_same_entity_does_not_confirm(toy_domain):
    steps = [("agent", "I can reopen account A-1 for you. Shall I?"), ("user", "Yes, please."), close("A-1")]
    assert play(toy_domain, make_task(close("A-1")), steps).signature == "unconfirmed_write"


@pytest.mark.parametrize(
    "answer,counts",
    [
        ("Yes, close that account please.", True),
        ("Yes, no problem, go ahead.", True),
        ("Okay, but why only this one?", False),
        ("Sure, but what happens to my notes", False),
    ],
)
def test_a_yes_is_judged_by_what_follows_it(toy_domain, answer, counts):
    g = play(toy_domain, make_task(close("A-1")), confirmed(close("A-1"), answer))
    assert (g.signature != "unconfirmed_write") is counts


def test_identity_must_come_from_the_customer_not_from_a_record(toy_domain):
    task = make_task(close("A-1"))
    g = play(toy_domain, task, confirmed(close("A-1")), opening="hi, please close my account A-1")
    assert (g.reward, g.signature) == (0, "policy_violation")
    assert g.details["policy_violations"][0]["rule"] == "identity-from-customer"
    assert play(toy_domain, task, confirmed(close("A-1")), opening="hi, it's O1@Example.com").reward == 1


@pytest.mark.parametrize(
    "end,signature", [("unsatisfied", "closed_unresolved"), ("abandoned", "user_abandoned"), ("max_turns", "max_turns")]
)
def test_strict_mode_fails_a_right_backend_when_the_customer_leaves_unhappy(toy_domain, end, signature):
    task = make_task(close("A-1"))
    g = play(toy_domain, task, confirmed(close("A-1")), end=end)
    assert (g.reward, g.signature, g.state_ok) == (0, signature, True)
    assert play(toy_domain, task, confirmed(close("A-1")), end=end, mode="tau").reward == 1  # tau judges the backend


def test_a_yes_stands_through_an_acknowledgement_but_not_through_a_question(toy_domain):
    task = make_task(close("A-1"))
    proposal = [("agent", "I will close account A-1. Shall I?"), ("user", "Yes, please.")]
    waited = proposal + [("agent", "One moment while I process that."), ("user", "Alright, thank you."), close("A-1")]
    assert play(toy_domain, task, waited).reward == 1
    doubted = proposal + [("agent", "One moment."), ("user", "Wait, will I lose my notes?"), close("A-1")]
    assert play(toy_domain, task, doubted).signature == "unconfirmed_write"
