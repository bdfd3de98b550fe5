"""The expected backend of a task: its ground-truth actions replayed on a fresh fork, once per process."""

from __future__ import annotations

import threading

from passhat.domains.model import Action, Domain, Identity, Task
from passhat.env import Environment

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
            for ex in env.replay(ground_truth_calls(domain, task)):
                if ex.result["status"] != "ok" or ex.violations:
                    raise GroundTruthError(
                        f"task {task.id}: ground-truth call {ex.name}({ex.args}) gave {ex.result}"
                        + (f" and broke {[v.rule for v in ex.violations]}" if ex.violations else "")
                    )
            _cache[key] = env
        return _cache[key]
