"""Failed trials that may be the harness's failure, not the agent's: the simulated customer's suspected errors.

A verdict rests on the simulated customer reading the agent right. When it misreads, the trial fails and the
failure is charged to the agent; so a failed trial is read once more for the three signs that the customer,
not the agent, went wrong, and the report counts and lists them (a team then reads those transcripts first):

- ``turned_down_ground_truth``: the agent asked for a yes to a write of the task's ground truth, stated as the
  customer wants it, and the customer said yes to none of its proposals, and the write never happened;
- ``asked_again``: the customer asked again for something it had been given: it restated a goal's request
  after the agent had told every fact the goal asks for, or had made every write it wants;
- ``left_reachable``: the customer left while its goal was still reachable (no write the task does not
  want had been made) right after an agent message that moved towards it: a proposal of a ground-truth write,
  a question for a detail, or a fact the task asks for.

These are suspicions, not verdicts: the trial stays failed. They are worked out from the events alone, so
they read any customer's trials, scripted or a language model's (``asked_again`` recognises a restated
request by the task's own wording of it, so it fires for the scripted customer only).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Sequence

from passhat.dialogue import is_affirmative
from passhat.dialogue.facts import tell
from passhat.dialogue.proposals import Commitment
from passhat.dialogue.reading import read_message
from passhat.domains.model import Action, Domain, Task
from passhat.env import Environment
from passhat.grade.expected import TaskFact
from passhat.grade.writes import WriteCall, comparable
from passhat.guard.confirmation import commitment_for
from passhat.trajectory import Event, SuspicionKind

LEFT = frozenset({"abandoned", "unsatisfied"})  # how a customer ends a conversation by leaving


@dataclasses.dataclass(frozen=True)
class Suspicion:
    """One sign that the customer went wrong: at which event of the trial (the customer's message) and why."""

    kind: SuspicionKind
    event: int
    note: str

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def suspected_simulator_errors(
    domain: Domain,
    task: Task,
    env: Environment,
    events: Sequence[Event],
    writes: Sequence[Action],
    facts: Sequence[TaskFact],
    reachable: bool,
) -> list[Suspicion]:
    """The signs in one failed trial, in the order they happened. ``writes``: the ground-truth writes of the
    outcome the trial was judged against; ``facts``: that outcome's facts; ``reachable``: no write the task
    does not want was made (the customer could still have got what it wanted)."""
    wanted = [a for a in writes if (spec := env.tools.get(a.tool)) and spec.meta.needs_confirmation]
    commitments = _commitments(domain, wanted)
    made = [i for i, e in enumerate(events) if e.kind == "tool" and e.took_effect]
    own = (task.customer.customer_id,)
    out: list[Suspicion] = []
    turns = [i for i, e in enumerate(events) if e.kind in ("user", "agent")]
    replies = [(a, c) for a, c in zip(turns, turns[1:], strict=False) if events[a].kind == "agent" and events[c].kind == "user"]
    answers: dict[int, list[tuple[int, bool]]] = {}  # per ground-truth write: (reply, was it a yes) to each proposal of it
    for agent, customer in replies:
        open_writes = [k for k, a in enumerate(wanted) if not _made_before(a, events, made, customer, env)]
        offered = read_message(events[agent].text, domain.lexicon).agreed([commitments[k] for k in open_writes], own=own)
        for k in offered:
            answers.setdefault(open_writes[k], []).append((customer, is_affirmative(events[customer].text)))
        if (again := _asked_again(task, events, customer, wanted, made, facts, env, domain)) is not None:
            out.append(Suspicion("asked_again", customer, again))
    for k, replied in sorted(answers.items()):
        if not any(yes for _, yes in replied) and not _made_before(wanted[k], events, made, len(events), env):
            first = replied[0][0]
            out.append(
                Suspicion("turned_down_ground_truth", first, f"no yes to any proposal of the ground truth's {wanted[k].tool}")
            )
    if reachable and (left := _left_reachable(domain, events, turns, commitments, wanted, made, facts, env, own)):
        out.append(left)
    return sorted(out, key=lambda s: s.event)


_commitments_cache: dict[tuple[int, str], list[Commitment]] = {}
_lock = threading.Lock()


def _commitments(domain: Domain, wanted: Sequence[Action]) -> list[Commitment]:
    """What a yes to each ground-truth write agrees to, on the backend as the writes before it leave it (worked
    out once per domain and list of writes: every failed trial of a task asks for the same)."""
    key = (id(domain), json.dumps([(a.tool, a.args) for a in wanted], sort_keys=True, default=str))
    with _lock:
        if key not in _commitments_cache:
            _commitments_cache[key] = _replayed_commitments(domain, wanted)
        return _commitments_cache[key]


def _replayed_commitments(domain: Domain, wanted: Sequence[Action]) -> list[Commitment]:
    replay = Environment(domain)
    try:
        out = []
        for call in wanted:
            out.append(commitment_for(replay.tools[call.tool], dict(call.args), replay.db, domain))
            replay.replay([call])
        return out
    finally:
        replay.close()


def _made_before(action: Action, events: Sequence[Event], made: Sequence[int], end: int, env: Environment) -> bool:
    target = comparable(WriteCall(action.tool, dict(action.args)), env.tools)
    return any(i < end and comparable(WriteCall(events[i].name or "", dict(events[i].args)), env.tools) == target for i in made)


def _told_before(fact: TaskFact, events: Sequence[Event], end: int, domain: Domain) -> bool:
    messages = [(i, e.text) for i, e in enumerate(events[:end]) if e.kind == "agent"]
    return tell(fact.fact, messages, id_pattern=domain.id_pattern).told


def _asked_again(
    task: Task,
    events: Sequence[Event],
    at: int,
    wanted: Sequence[Action],
    made: Sequence[int],
    facts: Sequence[TaskFact],
    env: Environment,
    domain: Domain,
) -> str | None:
    """Why the customer's message at ``at`` asks again for a goal it was given, or None."""
    for g, goal in enumerate(task.goals):
        said_before = any(_names_any(e.text, goal.request) for e in events[:at] if e.kind == "user")
        if not (said_before and _names_any(events[at].text, goal.request)):
            continue
        goal_facts = [f for f in facts if f.goal == g]
        goal_writes = [a for a in wanted if a in goal.actions]
        if goal.outcome == "answered" and goal_facts and all(_told_before(f, events, at, domain) for f in goal_facts):
            return f"goal {g + 1}'s request restated after every fact it asks for was told"
        if goal.outcome == "done" and goal_writes and all(_made_before(a, events, made, at, env) for a in goal_writes):
            return f"goal {g + 1}'s request restated after every write it wants was made"
    return None


def _names_any(text: str, requests: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(r.lower() in lowered for r in requests)


def _left_reachable(
    domain: Domain,
    events: Sequence[Event],
    turns: Sequence[int],
    commitments: Sequence[Commitment],
    wanted: Sequence[Action],
    made: Sequence[int],
    facts: Sequence[TaskFact],
    env: Environment,
    own: tuple[str, ...],
) -> Suspicion | None:
    """The customer's leaving, when the agent's message before it moved towards the goal."""
    end = next((e for e in reversed(events) if e.kind == "end"), None)
    if end is None or end.text not in LEFT or len(turns) < 2:
        return None
    last, before = turns[-1], turns[-2]
    if events[last].kind != "user" or events[before].kind != "agent":
        return None
    text = events[before].text
    reading = read_message(text, domain.lexicon)
    if reading.closing:  # the agent ended the conversation: the customer's goodbye is no choice of its own
        return None
    open_writes = [c for a, c in zip(wanted, commitments, strict=True) if not _made_before(a, events, made, last, env)]
    untold = [f for f in facts if not _told_before(f, events, before, domain)]
    if reading.agreed(open_writes, own=own):
        why = "a proposal of a ground-truth write"
    elif reading.asks:
        why = "a question for " + ", ".join(sorted(reading.asks))
    elif any(_told_before(f, events, before + 1, domain) for f in untold):
        why = "a fact the task asks for"
    else:
        return None
    return Suspicion("left_reachable", last, f"left with the goal still reachable, right after {why}")
