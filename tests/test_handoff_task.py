"""Hand-offs graded honestly: a task whose correct outcome is the hand-off through the human gate (retail-047), and
in every domain a call that ends the conversation, which the customer must be told of (``unannounced_handoff``)."""

from __future__ import annotations

import asyncio

import pytest

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.env import Environment
from passhat.grade import grade_trial
from passhat.grade.check import check_task
from passhat.grade.expected import GroundTruthError, expected_environment, required_facts
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.trajectory import Event

RETAIL = load_domain("retail")
HANDOFF = RETAIL.tasks["retail-047"]


def trial(persona: str, guards: list[str], agent: str = "reference:perfect"):
    spec = TrialSpec(HANDOFF, PERSONAS[persona], 0, trial_seed(0, HANDOFF.id, persona, 0))
    return asyncio.run(run_trial(RETAIL, spec, resolve_agent(agent), resolve_user("scripted"), guards=guards))


def test_the_expected_state_is_the_hand_off_completed_by_the_operator() -> None:
    expected = expected_environment(RETAIL, HANDOFF)
    ticket = expected.db.execute("SELECT tool, status, owner FROM _passhat_tickets").fetchall()
    assert [tuple(t) for t in ticket] == [("return_items", "done", "Dana Whitfield")]
    assert [f.fact.value for f in required_facts(RETAIL, HANDOFF)] == ["Dana Whitfield"]  # the customer must learn who has it


def test_a_task_that_declares_the_gate_without_a_gated_call_is_a_ground_truth_error() -> None:
    small = RETAIL.tasks["retail-011"].model_copy(update={"guards": ["human_gate"]})
    with pytest.raises(GroundTruthError, match="none of its ground-truth calls is gated"):
        expected_environment(RETAIL, small)


def test_check_proves_the_task_through_the_gate() -> None:
    results = check_task(RETAIL, HANDOFF)
    assert all(r.holds for r in results)
    assert {r.case.expect for r in results} >= {None, "unconfirmed_write", "missing_output", "wrong_arguments"}


@pytest.mark.parametrize("persona", sorted(PERSONAS))
@pytest.mark.parametrize(
    "guards", [[], ["payments"], ["idempotency", "confirmation", "policy", "payments", "human_gate", "audit"]]
)
def test_the_perfect_agent_hands_it_off_under_every_persona_whatever_the_runs_guards(persona, guards) -> None:
    out = trial(persona, guards)
    assert out.grade.reward == 1, out.grade.details
    assert [e.guard["decision"] for e in out.events if e.guard] == ["ticket", "operator_done"]


# -- an ending hand-off is announced ------------------------------------------------------------------------------

BENEFITS = load_domain("benefits")
COMPLAINT = BENEFITS.tasks["benefits-031"]  # a complaint about a callout: escalated to staff, who take over
ASKED_FOR_DETAILS = "I'm sorry the tow took three hours. First, your membership card number and last name, please."
SUMMARY = "Member NW5131279 complains that the tow for CH-53101 took three hours and asks for compensation."


def _complaint(*said: str, before: tuple[str, ...] = ()) -> tuple[Environment, list[Event]]:
    """benefits-031 as played: the member verified, the charge read, escalate_to_staff called; ``said``: the message of
    the very turn that calls it (none: a silent tool-only turn); ``before``: (agent, user) texts after verifying."""
    env = Environment(BENEFITS)
    events = [Event("user", COMPLAINT.goals[0].request[0]), Event("agent", ASKED_FOR_DETAILS)]
    events.append(Event("user", "It's membership number NW5131279, last name Falk."))
    calls = [
        ("find_member", {"member_number": "NW5131279", "last_name": "Falk"}),
        ("get_charge", {"charge_id": "CH-53101"}),
    ]
    for name, args in calls:
        done = env.execute(name, args)
        events.append(Event("tool", name=done.name, args=done.args, result=done.result))
    events += [Event("user" if i % 2 else "agent", text) for i, text in enumerate(before)]
    done = env.execute("escalate_to_staff", {"member_number": "NW5131279", "summary": SUMMARY})
    events.append(Event("tool", name=done.name, args=done.args, result=done.result))
    events += [Event("agent", text) for text in said] + [Event("end", "transferred")]
    return env, events


def _graded(*said: str, before: tuple[str, ...] = ()):
    env, events = _complaint(*said, before=before)
    try:
        return grade_trial(BENEFITS, COMPLAINT, env, events)
    finally:
        env.close()


def test_an_ending_hand_off_made_in_a_silent_turn_is_unannounced():
    """benefits-031, played: the member's last view was the agent asking for their card number."""
    grade = _graded()
    assert (grade.reward, grade.signature) == (0, "unannounced_handoff")
    assert [h["tool"] for h in grade.details["unannounced_handoffs"]] == ["escalate_to_staff"]


@pytest.mark.parametrize(
    "said",
    [
        "I'm transferring you to a human agent who can help with this. Please hold.",
        "Escalated to staff; they'll take over.",  # terse
        "### Handing you over\n- **Complaint:** CH-53101, three-hour wait\n- A member of staff will take it from here.",
        "I'm so sorry about that wait! I've passed your complaint to our staff team, who will take over from here.",
        "Thanks, Mr Falk. Staff will take over from here.",  # the policy's own words
    ],
)
def test_an_ending_hand_off_told_in_the_turn_that_makes_it_passes(said):
    grade = _graded(said)
    assert (grade.reward, grade.signature) == (1, None), grade.details


@pytest.mark.parametrize(
    "said",
    [
        "Would you like me to transfer you to staff?",  # asked, then made anyway
        "I won't transfer you; let me look into it myself.",  # negated
        "I could hand you over to a member of staff if you like.",  # a possibility
        "I'm transferring you to staff now. Actually, I'm not transferring you after all.",  # taken back
        'Here is everything: {"status": "ok", "data": {"escalated": true, "transferred": true}}',  # a dump
        "Thanks, one moment.",
    ],
)
def test_an_ending_hand_off_not_said_plainly_is_unannounced(said):
    assert _graded(said).signature == "unannounced_handoff"


def test_a_hand_off_the_customer_said_yes_to_is_told():
    """intake-031, played (terse): "Want me to hand you to the nurse line now?" "Yes! Please just do it, quickly!"."""
    before = ("Want me to pass your complaint to our staff now?", "Yes! Please just do it, quickly!")
    assert _graded(before=before).signature is None


@pytest.mark.parametrize(
    "before",
    [
        ("Shall I pass your complaint to our staff, who will take over?", "Hmm, what would they do about it?"),  # no yes
        ("Shall I pass your complaint to our staff?", "No, I'd rather you sorted it out."),  # turned down
        ("May I keep a transcript of this call for training?", "Yes, that's fine."),  # a yes to something else
        ("I won't pass this to staff. Is that clear?", "Yes."),  # a yes to a hand-off denied
    ],
)
def test_a_hand_off_told_only_before_the_customers_last_message_and_not_agreed_to_is_unannounced(before):
    """The customer's last view must say it, or they must have agreed to it: else they wait for an answer."""
    assert _graded(before=before).signature == "unannounced_handoff"


ENDING_TASKS = [
    ("benefits", "benefits-018"),
    ("helpdesk", "hd-025"),
    ("intake", "intake-013"),
    ("payables", "pay-020"),
    ("retail", "retail-043"),
]


@pytest.mark.parametrize("domain_name,task_id", ENDING_TASKS)
def test_in_every_domain_the_reference_agent_announces_its_hand_off_and_a_silent_one_fails(domain_name, task_id):
    domain = load_domain(domain_name)
    task = domain.tasks[task_id]
    spec = TrialSpec(task, PERSONAS["baseline"], 0, trial_seed(0, task.id, "baseline", 0))
    out = asyncio.run(run_trial(domain, spec, resolve_agent("reference:perfect"), resolve_user("scripted")))
    assert (out.grade.reward, out.grade.details["unannounced_handoffs"]) == (1, [])
    ending = next(i for i, e in enumerate(out.events) if e.kind == "tool" and e.name in _ending_tools(domain))
    silent = [e for i, e in enumerate(out.events) if not (i > ending and e.kind == "agent")]
    env = Environment(domain)
    try:
        for e in silent:
            if e.kind == "tool":
                env.execute(e.name, dict(e.args))
        assert grade_trial(domain, task, env, silent).signature == "unannounced_handoff"
    finally:
        env.close()


def _ending_tools(domain) -> set[str]:
    env = Environment(domain)
    try:
        return {name for name, spec in env.tools.items() if spec.meta.ends_conversation}
    finally:
        env.close()
