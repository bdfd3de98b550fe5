"""The expected backend of a task: its ground-truth actions replayed on a fresh fork, once per process.

A task that declares guards (the human gate) is replayed through a gateway with those guards, and its
tickets resolved by the same simulated operator as in a trial, so the expected state is the one the
hand-off reaches, and the expected tickets say which person the customer must be told has the request.
"""

from __future__ import annotations

import threading

from passhat.domains.model import Action, Domain, Identity, Task
from passhat.env import Environment
from passhat.guard import ToolPath, gate
from passhat.trajectory import Event

_cache: dict[tuple[int, str], Environment] = {}  # (domain, the task's full text)
_lock = threading.Lock()


class GroundTruthError(Exception):
    """A task's ground truth does not replay cleanly: the task file is wrong, not the agent."""


def identity_text(identity: Identity) -> str:
    """Everything a customer could say to identify themselves."""
    said = f"I'm {identity.first_name} {identity.last_name}, zip code {identity.zip}"
    return f"{said}, email {identity.email}" if identity.email else said


def ground_truth_calls(domain: Domain, task: Task) -> list[Action]:
    """The task's ground-truth writes, preceded by the identity lookup the policy demands."""
    auth = domain.authenticate(task.customer, identity_text(task.customer))
    if auth is None:
        raise GroundTruthError(f"task {task.id}: the customer's identity does not allow an authentication lookup")
    return [auth, *task.actions]


def expected_environment(domain: Domain, task: Task) -> Environment:
    key = (id(domain), task.model_dump_json())
    with _lock:
        if key not in _cache:
            env = Environment(domain)
            for e in _replay(env, domain, task):
                if e.result is None or e.result["status"] != "ok" or e.violations:
                    raise GroundTruthError(
                        f"task {task.id}: ground-truth call {e.name}({e.args}) gave {e.result}"
                        + (f" and broke {[v['rule'] for v in e.violations]}" if e.violations else "")
                    )
            if "human_gate" in task.guards and not gate.owners(env.db):
                raise GroundTruthError(f"task {task.id} declares the human gate, but none of its ground-truth calls is gated")
            _cache[key] = env
        return _cache[key]


def _replay(env: Environment, domain: Domain, task: Task) -> list[Event]:
    """The ground-truth calls and the operator's hand-offs, on the path a trial's calls take."""
    path = ToolPath(env, task.guards, conversation_id=f"{task.id}/ground-truth")
    return [path.execute(a.tool, dict(a.args)) for a in ground_truth_calls(domain, task)] + path.settle()


def required_facts(domain: Domain, task: Task) -> list[str]:
    """What the agent must tell: the task's facts, and who has each ticket of the expected hand-off."""
    return task.outputs + gate.owners(expected_environment(domain, task).db)
