"""Per-step reliability: which step of a task's plan a falling pass rate comes from.

Each judged trial brings its plan (the steps of the acceptable outcome it took, or the primary one) and a mark
per step (right, wrong, missed). Per plan of a task: each step's success rate with a Wilson interval, its
*conditional* rate (right among the trials whose every earlier step was right, ``at_risk``: the step's own
reliability along the chain, without the knock-on misses of an earlier slip), and the step trials most often go
wrong at first. Per run (one domain): the same by step kind (the tool), pooled over every plan.

The *predicted* end-to-end rate of a plan is the product, over its steps, of the conditional rate of each step's
kind across the domain: what the task's success would be if each of its steps were as reliable as steps of that
kind are, one after the other. Set beside the *observed* rate it shows whether a task fails as its chain's length
and kinds predict (compounding) or for reasons of its own (a hard step, or failures outside the plan's steps:
what the agent told, whether it asked first). The compounding curve sets both against the number of steps.
Trials, not scenarios, are the unit here; they are pooled over personas.

``StepTally`` takes one trial at a time and keeps counts only, so a report's single pass over a large run holds
a few numbers per step, never the trials.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from passhat.metrics.intervals import wilson

PlanStep = tuple[str, bool, str]  # (tool, write, entity)
PRIMARY = "primary"  # the label stored for the plan of the goals' own actions (passhat.domains.model.PRIMARY)


@dataclasses.dataclass
class _PlanCounts:
    """Counts over the trials of one task that went along one plan."""

    trials: int = 0
    passed: int = 0
    right: list[int] = dataclasses.field(default_factory=list)
    reached: list[int] = dataclasses.field(default_factory=list)
    first_wrong: Counter[int] = dataclasses.field(default_factory=Counter)
    failed_every_step_right: int = 0


@dataclasses.dataclass
class StepTally:
    """Step marks of judged trials, counted as they come: per (task, outcome label, plan)."""

    plans: dict[tuple[str, str, tuple[PlanStep, ...]], _PlanCounts] = dataclasses.field(default_factory=dict)

    def add(self, task_id: str, passed: bool, steps: dict[str, Any]) -> None:
        """One judged trial's stored steps (``{"outcome", "steps": [{"tool", "write", "entity", "mark"}]}``)."""
        plan = tuple([(s["tool"], bool(s["write"]), str(s["entity"])) for s in steps["steps"]])
        key = (task_id, steps.get("outcome") or PRIMARY, plan)
        if key not in self.plans:
            self.plans[key] = _PlanCounts(right=[0] * len(plan), reached=[0] * len(plan))
        counts = self.plans[key]
        counts.trials += 1
        counts.passed += passed
        first = None
        for i, s in enumerate(steps["steps"]):
            counts.right[i] += s["mark"] == "right"
            counts.reached[i] += s["mark"] != "missed"
            if first is None and s["mark"] != "right":
                first = i
        if first is not None:
            counts.first_wrong[first] += 1
        elif not passed:
            counts.failed_every_step_right += 1


def tally_steps(trials: Iterable[tuple[str, bool, dict[str, Any]]]) -> StepTally:
    """A tally of (task id, passed, stored steps) triples, for callers holding them."""
    tally = StepTally()
    for task_id, passed, steps in trials:
        tally.add(task_id, passed, steps)
    return tally


def step_reliability(tally: StepTally) -> dict[str, Any] | None:
    """The run's per-step figures (the report's ``metrics.steps``); None when no trial recorded steps."""
    if not tally.plans:
        return None
    kinds = _by_kind(tally)
    reliability = {(k["tool"], k["write"]): k["conditional"] for k in kinds}
    tasks = [
        _plan_figures(task, label, plan, c, reliability) for (task, label, plan), c in sorted(tally.plans.items(), key=_order)
    ]
    trials = sum(c.trials for c in tally.plans.values())
    passed = sum(c.passed for c in tally.plans.values())
    return {
        "trials": trials,
        "observed": passed / trials,
        "observed_ci": list(wilson(passed, trials)),
        "predicted": _weighted_predicted(tasks),
        "by_kind": kinds,
        "first_wrong": _first_wrong_kind(tally, trials),
        "tasks": tasks,
        "compounding": _compounding(tasks),
    }


def _order(item: tuple[tuple[str, str, tuple[PlanStep, ...]], _PlanCounts]) -> tuple[str, bool, str]:
    (task, label, _), _counts = item
    return task, label != PRIMARY, label


def _plan_figures(
    task: str, label: str, plan: tuple[PlanStep, ...], c: _PlanCounts, reliability: dict[tuple[str, bool], float | None]
) -> dict[str, Any]:
    steps = []
    for i, ((tool, write, entity), (at_risk, held)) in enumerate(zip(plan, _chain(c, len(plan)), strict=True)):
        steps.append(
            {
                "tool": tool,
                "write": write,
                "entity": entity,
                "reached": c.reached[i],
                "right": c.right[i],
                "rate": c.right[i] / c.trials,
                "ci": list(wilson(c.right[i], c.trials)),
                "at_risk": at_risk,
                "conditional": held / at_risk if at_risk else None,
                "first_wrong": c.first_wrong[i],
            }
        )
    first = None
    if c.first_wrong:
        index, count = max(c.first_wrong.items(), key=lambda kv: (kv[1], -kv[0]))  # the most often; the earliest of a tie
        tool, _, entity = plan[index]
        first = {"step": index + 1, "tool": tool, "entity": entity, "trials": count, "share": count / c.trials}
    return {
        "task_id": task,
        "outcome": label,
        "trials": c.trials,
        "passed": c.passed,
        "observed": c.passed / c.trials,
        "observed_ci": list(wilson(c.passed, c.trials)),
        "predicted": _multiplied([reliability[tool, write] for tool, write, _ in plan]),
        "steps": steps,
        "first_wrong": first,
        "failed_every_step_right": c.failed_every_step_right,
    }


def _chain(c: _PlanCounts, length: int) -> list[tuple[int, int]]:
    """Per step: (trials whose every earlier step was right, those of them that got this one right too)."""
    out, at_risk = [], c.trials
    for i in range(length):
        held = at_risk - c.first_wrong[i]
        out.append((at_risk, held))
        at_risk = held
    return out


def _multiplied(rates: list[float | None]) -> float | None:
    """The rates multiplied; None when a step's kind was never reached along a right chain (nothing to go by)."""
    return None if any(r is None for r in rates) else math.prod(r for r in rates if r is not None)


def _weighted_predicted(tasks: list[dict[str, Any]]) -> float | None:
    """The plans' predicted rates weighed by their trials, to set beside the pooled observed rate."""
    known = [t for t in tasks if t["predicted"] is not None]
    trials = sum(t["trials"] for t in known)
    return sum(t["predicted"] * t["trials"] for t in known) / trials if trials else None


def _by_kind(tally: StepTally) -> list[dict[str, Any]]:
    """Every step of every trial pooled by its tool: its rate, and its rate along a right chain (``conditional``),
    least reliable first."""
    right: Counter[tuple[str, bool]] = Counter()
    total: Counter[tuple[str, bool]] = Counter()
    at_risk: Counter[tuple[str, bool]] = Counter()
    held: Counter[tuple[str, bool]] = Counter()
    for (_, _, plan), c in tally.plans.items():
        for i, ((tool, write, _), (risk, kept)) in enumerate(zip(plan, _chain(c, len(plan)), strict=True)):
            right[tool, write] += c.right[i]
            total[tool, write] += c.trials
            at_risk[tool, write] += risk
            held[tool, write] += kept
    kinds = [
        {"tool": tool, "write": write, "steps": n, "right": right[tool, write], "rate": right[tool, write] / n,
         "ci": list(wilson(right[tool, write], n)), "at_risk": at_risk[tool, write],
         "conditional": held[tool, write] / at_risk[tool, write] if at_risk[tool, write] else None}
        for (tool, write), n in total.items()
    ]  # fmt: skip
    return sorted(kinds, key=lambda k: (1.0 if k["conditional"] is None else k["conditional"], k["rate"], k["tool"]))


def _first_wrong_kind(tally: StepTally, trials: int) -> dict[str, Any] | None:
    """The step kind (tool) at which trials most often went wrong first, over every plan."""
    by_tool: Counter[str] = Counter()
    for (_, _, plan), c in tally.plans.items():
        for index, count in c.first_wrong.items():
            by_tool[plan[index][0]] += count
    if not by_tool:
        return None
    tool, count = min(by_tool.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"tool": tool, "trials": count, "share": count / trials}


def _compounding(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Observed success (pooled over trials, Wilson interval) and the predicted rate against plan length."""
    groups: dict[int, list[dict[str, Any]]] = {}
    for t in tasks:
        groups.setdefault(len(t["steps"]), []).append(t)
    points = []
    for length, group in sorted(groups.items()):
        trials, passed = sum(t["trials"] for t in group), sum(t["passed"] for t in group)
        points.append(
            {
                "steps": length,
                "tasks": len({t["task_id"] for t in group}),
                "trials": trials,
                "observed": passed / trials,
                "observed_ci": list(wilson(passed, trials)),
                "predicted": _weighted_predicted(group),
            }
        )
    return points
