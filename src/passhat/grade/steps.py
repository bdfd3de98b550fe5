"""A task's ground-truth plan as steps, and how far along it one trial got.

A trial's reward says whether the whole chain held; the steps say which link broke. The plan is what a
careful agent does: the identity lookup, then for each goal its reads (the goal's own lookups, then the
domain's reads before each of its calls, on the backend as the goals before it leave it) and its writes.
A read already in the plan is not repeated; every write is a step of its own. A task with several acceptable
outcomes has a plan for each (the outcome's writes given to the goals as ``Task.goal_actions`` gives them); a
trial is measured against the plan of the outcome it reached, the primary one when it reached none.

A trial *reached* a step when it called the step's tool for the step's entity, and did it *right* when one
such call succeeded with the step's arguments, compared as the graders compare writes (free-text arguments
left out); a write the human gate ticketed counts when the operator carried it out. The first step not done
right is where the trial went wrong first.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any, Literal

from passhat.domains.model import PRIMARY, Action, Domain, Task, task_text
from passhat.domains.toolkit import ToolFailure
from passhat.env import Environment, ToolSpec, tool_registry
from passhat.env.tools import validate_args
from passhat.grade.expected import ground_truth_calls
from passhat.grade.writes import WriteCall, comparable, target_of
from passhat.trajectory import Event

Mark = Literal["right", "wrong", "missed"]  # done right; reached but never right; never reached

_plans: dict[tuple[int, str, str], list[Step]] = {}  # (domain, the task's full text, outcome label)
_lock = threading.RLock()


@dataclasses.dataclass(frozen=True)
class Step:
    """One call of a plan. ``entity``: what the call acts on (its tool's target argument, else its
    arguments' values; the customer, for the identity lookup), the key by which a trial's calls are found to reach it.
    The identity lookup is done right by any identifying tool that finds the customer (by email or by name, as
    the customer's words allow), not only by the call the plan names."""

    tool: str
    args: dict[str, Any]
    write: bool
    entity: str
    identifies: bool = False  # the identity lookup: any identifying tool that finds the customer does it


@dataclasses.dataclass(frozen=True)
class StepResult:
    step: Step
    mark: Mark


@dataclasses.dataclass(frozen=True)
class TrialSteps:
    """How one trial went along the plan of the outcome it took (``outcome``: its label; None when it reached no
    acceptable outcome, and was measured against the primary plan)."""

    outcome: str | None
    results: list[StepResult]

    @property
    def first_wrong(self) -> int | None:
        """The index of the first step not done right, None when every step was."""
        return next((i for i, r in enumerate(self.results) if r.mark != "right"), None)

    def to_json(self) -> dict[str, Any]:
        """The stored form (``TrialRecord.steps``): what the report reads without the domain."""
        steps = [{"tool": r.step.tool, "write": r.step.write, "entity": r.step.entity, "mark": r.mark} for r in self.results]
        return {"outcome": self.outcome, "steps": steps}


def task_plan(domain: Domain, task: Task, outcome: str | None = None) -> list[Step]:
    """The plan of the task's acceptable outcome labelled ``outcome`` (None or "primary": the goals' own), once per process."""
    label = outcome or PRIMARY
    key = (id(domain), task_text(task), label)
    with _lock:
        if key not in _plans:
            _plans[key] = _build_plan(domain, task, _goal_calls(task, label))
        return _plans[key]


def step_count(domain: Domain, task: Task) -> int:
    """The number of steps of the task's primary plan: the N of a ``steps-N`` tag."""
    return len(task_plan(domain, task))


def trial_steps(domain: Domain, task: Task, events: list[Event], outcome: str | None = None) -> TrialSteps:
    """Each step of the plan of the outcome the trial took (``outcome``: the grade's label; None: the primary plan),
    marked right, wrong or missed by the trial's calls."""
    tools = tool_registry(domain)
    plan = task_plan(domain, task, outcome)
    calls = [e for e in events if e.kind in ("tool", "guard") and isinstance(e.args, dict)]
    return TrialSteps(outcome, [StepResult(s, _mark(s, calls, tools)) for s in plan])


def _goal_calls(task: Task, label: str) -> list[tuple[list[Action], list[Action], list[Action]]]:
    """(lookups, calls the reads are for, calls to make) per goal, with the writes of the outcome labelled ``label``
    given to the goals as the customer and the reference agent take them. A refused goal makes no call, but a careful
    agent reads what its forbidden calls would touch before refusing."""
    if label not in {o.label for o in task.acceptable}:
        raise KeyError(f"task {task.id} has no acceptable outcome labelled {label!r}")
    per_goal = task.goal_actions(task.end_state(label))
    return [(goal.lookups, writes or goal.forbidden, writes) for goal, writes in zip(task.goals, per_goal, strict=True)]


def _build_plan(domain: Domain, task: Task, blocks: list[tuple[list[Action], list[Action], list[Action]]]) -> list[Step]:
    """The identity lookup, then each block's reads (its own, then the domain's before each call, on the backend as
    the blocks before leave it) and its calls; a read already planned is not planned again."""
    identity = ground_truth_calls(domain, task)[0]
    plan: list[Action] = [identity]
    env = Environment(domain)
    try:
        for lookups, read_for, calls in blocks:
            for read in [*lookups, *(r for a in read_for for r in domain.lookups(env.db, a))]:
                if read not in plan:
                    plan.append(read)
            plan += calls
            env.replay(calls)
    finally:
        env.close()
    tools = tool_registry(domain)
    steps = [_step(a, tools) for a in plan]
    steps[0] = dataclasses.replace(steps[0], entity=task.customer.customer_id, identifies=True)
    return steps


def _step(action: Action, tools: dict[str, ToolSpec]) -> Step:
    """The action as a step, its arguments in the validated form a trial's calls are recorded in."""
    spec = tools[action.tool]
    try:
        args = validate_args(spec, dict(action.args))
    except ToolFailure:
        args = dict(action.args)
    return Step(action.tool, args, spec.meta.write, _entity(spec, args))


def _entity(spec: ToolSpec, args: dict[str, Any]) -> str:
    if spec.meta.target:
        return str(args.get(spec.meta.target))
    return " ".join(str(v) for k, v in args.items() if k not in spec.meta.free_text)


def _mark(step: Step, calls: list[Event], tools: dict[str, ToolSpec]) -> Mark:
    """right: a call of the step that succeeded with its arguments; wrong: the tool called for its entity only."""
    if step.identifies:
        return _identity_mark(step, calls, tools)
    spec = tools[step.tool]
    wanted = _comparable(step.tool, step.args, tools)
    reached = False
    for e in calls:
        if e.name != step.tool:
            continue
        if _succeeded(e, step.write) and _comparable(step.tool, e.args, tools) == wanted:
            return "right"
        reached |= e.kind == "tool" and _same_entity(spec, step, e.args)
    return "wrong" if reached else "missed"


def _identity_mark(step: Step, calls: list[Event], tools: dict[str, ToolSpec]) -> Mark:
    """right: an identifying call whose result holds the customer's id (as a whole JSON string, so C-1 is not C-12)."""
    identifying = [
        e
        for e in calls
        if e.kind == "tool" and (e.name == step.tool or ((spec := tools.get(e.name or "")) and spec.meta.identifies))
    ]
    customer = json.dumps(step.entity)
    if any(e.ok and customer in json.dumps(e.result, default=str) for e in identifying):
        return "right"
    return "wrong" if identifying else "missed"


def _succeeded(e: Event, write: bool) -> bool:
    """A write that really ran (by the agent, or by the operator through the human gate); a read the agent saw succeed."""
    return e.took_effect if write else e.ok


def _same_entity(spec: ToolSpec, step: Step, args: dict[str, Any]) -> bool:
    if spec.meta.target:
        tools = {spec.name: spec}
        return target_of(WriteCall(spec.name, args), tools) == target_of(
            WriteCall(spec.name, {spec.meta.target: step.entity}), tools
        )
    values = {json.dumps(v, sort_keys=True, default=str) for k, v in step.args.items() if k not in spec.meta.free_text}
    return not values or bool(values & {json.dumps(v, sort_keys=True, default=str) for v in args.values()})


def _comparable(tool: str, args: dict[str, Any], tools: dict[str, ToolSpec]) -> str:
    return json.dumps(comparable(WriteCall(tool, args), tools), sort_keys=True, default=str)
