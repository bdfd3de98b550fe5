"""What a task expects: the backend each acceptable outcome leaves, and the facts the customer must be told.

The expected backend of an acceptable outcome (the goals' own actions, or one of the task's ``outcomes``)
is its actions replayed on a fresh fork, once per process. A task that
declares guards (the human gate) is replayed through a gateway with those guards and its tickets resolved
by the same simulated operator as in a trial, so the expected state is the one the hand-off reaches, and
the expected tickets say which person the customer must be told has the request.

Facts are derived, never recited (``domains.facts``), on the backend as the outcome's writes for the goals
up to their own leave it: a balance told before a later goal spends it is the balance then. A task whose stated value
disagrees with the derived one is broken.
"""

from __future__ import annotations

import dataclasses
import threading

from passhat.dialogue.facts import Fact
from passhat.domains.facts import FactError, derive_fact, same_value
from passhat.domains.model import PRIMARY, Action, Domain, Task, task_text
from passhat.domains.where import defined_at
from passhat.env import Environment
from passhat.env.backend import SettledRows
from passhat.guard import ToolPath, gate
from passhat.trajectory import Event

_environments: dict[tuple[int, str, str], Environment] = {}  # (domain, the task's full text, the outcome's label)
_rows: dict[tuple[int, str, str], SettledRows] = {}
_facts: dict[tuple[int, str, str], list[TaskFact]] = {}
_lock = threading.RLock()


class GroundTruthError(Exception):
    """A task's ground truth does not replay cleanly, or a fact it states is not what the backend says:
    the task file is wrong, not the agent."""


@dataclasses.dataclass(frozen=True)
class TaskFact:
    """A fact the agent must tell, with the sentence a careful agent would say it in."""

    fact: Fact
    sentence: str
    goal: int | None  # None: a fact of the hand-off (who has the ticket), told at the end


def ground_truth_calls(domain: Domain, task: Task, outcome: str = PRIMARY) -> list[Action]:
    """The writes of the task's acceptable ``outcome``, preceded by the identity lookup the policy demands."""
    auth = domain.authenticate(task.customer, domain.kit.identity_text(task.customer))
    if auth is None:
        raise GroundTruthError(
            f"task {task.id}: the customer's identity does not allow an authentication lookup: "
            f"{defined_at(domain.authenticate)} finds none in what {defined_at(domain.kit.identity_text)} says for the task's customer"
        )
    return [auth, *task.end_state(outcome).actions]


def expected_environment(domain: Domain, task: Task, outcome: str = PRIMARY) -> Environment:
    """The backend the acceptable ``outcome`` leaves (replayed once per process)."""
    key = (id(domain), task_text(task), outcome)
    with _lock:
        if key not in _environments:
            env = Environment(domain)
            named = "ground-truth" if outcome == PRIMARY else f"outcome {outcome!r}"
            for e in _replay(env, domain, task, outcome):
                if e.result is None or e.result["status"] != "ok" or e.violations:
                    raise GroundTruthError(
                        f"task {task.id}: {named} call {e.name}({e.args}) gave {e.result}"
                        + (f" and broke {[v['rule'] for v in e.violations]}" if e.violations else "")
                    )
            if "human_gate" in task.guards and not gate.owners(env.db):
                raise GroundTruthError(
                    f"task {task.id} declares the human gate, but none of its {named} calls is gated: add a rule for them "
                    "to the domain's gates, or drop human_gate from the task's guards"
                )
            _environments[key] = env
        return _environments[key]


def expected_rows(domain: Domain, task: Task, outcome: str = PRIMARY) -> SettledRows:
    """The rows the acceptable ``outcome`` changes, and any other it is compared on, read once per process."""
    key = (id(domain), task_text(task), outcome)
    with _lock:
        if key not in _rows:
            env = expected_environment(domain, task, outcome)
            _rows[key] = SettledRows(env.db, env.template)
        return _rows[key]


def _replay(env: Environment, domain: Domain, task: Task, outcome: str) -> list[Event]:
    """The outcome's calls and the operator's hand-offs, on the path a trial's calls take. Each call is preceded by
    the domain's reads before it (not returned: they change nothing), as a careful agent makes them, so a rule that
    asks for a check before a write holds for the ground truth as for a trial."""
    path = ToolPath(env, task.guards, conversation_id=f"{task.id}/ground-truth")
    identify, *writes = ground_truth_calls(domain, task, outcome)
    events = [path.execute(identify.tool, dict(identify.args))]
    for action in writes:
        for read in domain.lookups(env.db, action):
            path.execute(read.tool, dict(read.args))
        events.append(path.execute(action.tool, dict(action.args)))
    return events + path.settle()


def required_facts(domain: Domain, task: Task, outcome: str = PRIMARY) -> list[TaskFact]:
    """What the agent must tell when it reaches ``outcome``: each goal's facts, derived, and who has each
    ticket of that outcome's hand-off."""
    key = (id(domain), task_text(task), outcome)
    with _lock:
        if key not in _facts:
            owners = gate.owners(expected_environment(domain, task, outcome).db)
            handoff = [TaskFact(Fact("phrase", o), f"{o} has your request and will complete it", None) for o in owners]
            _facts[key] = _derive_facts(domain, task, outcome) + handoff
        return _facts[key]


def _derive_facts(domain: Domain, task: Task, outcome: str) -> list[TaskFact]:
    """Each goal's facts on the backend as the outcome's writes for the goals before it, and for itself, leave it."""
    env = Environment(domain)
    try:
        env.replay(ground_truth_calls(domain, task)[:1])  # the identity lookup, which the policy rules expect first
        out = []
        for g, (goal, writes) in enumerate(zip(task.goals, task.goal_actions(task.end_state(outcome)), strict=True)):
            env.replay(writes)
            for i, spec in enumerate(goal.tell):
                where = f"task {task.id}: goals[{g}].tell[{i}] ({spec.fact})" + (
                    "" if outcome == PRIMARY else f" in outcome {outcome!r}"
                )
                try:
                    fact, sentence = derive_fact(domain, env.db, goal, spec, env.history)
                except FactError as exc:
                    raise GroundTruthError(f"{where}: {exc}") from None
                if not same_value(fact, spec.value):
                    raise GroundTruthError(
                        f"{where} says {spec.value!r}, but the backend says {fact.value!r}: correct `is` in the task file "
                        f"(or {defined_at(domain.facts[spec.fact].derive)}, if it derives the wrong value)"
                    )
                out.append(TaskFact(fact, sentence, g))
        return out
    finally:
        env.close()
