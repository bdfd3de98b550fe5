"""What to change when `passhat check` finds that a task does not hold.

A check failure states a symptom (`want no_write, got closed_unresolved`); a newcomer to a domain cannot tell
from it which of the domain's files decides the outcome. Each remedy here names the cause and the domain's own
function, file or field to change, found from the code the domain wired in (``lookups() in studio/conversation.py``),
so the advice points at the real code of a scaffolded domain as well as of a built-in one.
"""

from __future__ import annotations

from collections.abc import Callable

from passhat.domains.model import Domain, Task
from passhat.domains.where import defined_at
from passhat.env import tool_registry
from passhat.grade.check import CaseResult


def _tool(domain: Domain, name: str) -> str:
    spec = tool_registry(domain).get(name)
    return f"the @tool of {defined_at(spec.fn)}" if spec else f"the tool {name}"


def remedy(domain: Domain, task: Task, result: CaseResult) -> str | None:
    """What to change so a case that does not hold holds; None when it holds."""
    if result.holds:
        return None
    case = result.case
    key = "risk" if case.risk else "does nothing" if case.idle else "ground truth" if case.expect is None else case.expect
    advice = _ADVICE.get(key)
    return advice(domain, task, result) if advice else None


def _ground_truth(domain: Domain, task: Task, result: CaseResult) -> str:
    got = result.grade.signature
    if not result.applied:
        return "the backend refuses a ground-truth write: correct the call's arguments in the task file, or the tool"
    if result.grade.reward == 1:
        return (
            f"the ground truth passes but reaches outcome {result.grade.outcome!r}, not {result.case.outcome!r}, or "
            "incurs one of the task's risks: make each outcome's `actions` its own end state, and each risk's `call` "
            "another write than the ground truth's"
        )
    if got == "unconfirmed_write":
        return (
            f"the customer's yes does not confirm the ground truth's proposal: {defined_at(domain.describe_action)} must "
            "use one of the write's confirm_words and state each of its terms (the tool's confirm_keys, or the "
            "domain's proposal_terms)"
        )
    if got in ("missing_output", "misinformed"):
        return (
            "the facts as told do not match what the graders derive: the fact's label in the domain's facts "
            "(FactSource) must say {value}, and the task's `tell` must name the record the fact is about"
        )
    if got == "policy_violation":
        return f"a rule refuses a ground-truth call: see which of {_rules(domain)} fires, and fix the rule or the task"
    return (
        f"the graders give the ground truth {got}: replay the task with `passhat run --agent reference:perfect "
        f"--tasks {task.id} --trials 1` and read the failed trial in its report"
    )


def _missing_write(domain: Domain, task: Task, result: CaseResult) -> str:
    writes = task.end_state(result.case.outcome).actions
    last = writes[-1]
    meta = tool_registry(domain)[last.tool].meta
    target = f"{meta.target} = {last.args.get(meta.target)}" if meta.target else "the record it changes"
    return (
        f"leaving out {last.tool} reads as doing nothing (not as 'looked it up, then wrote nothing') because no read "
        f"before it names its target ({target}): make {defined_at(domain.lookups)} return the read of that record for "
        f"{last.tool}"
        if result.grade.signature == "closed_unresolved"
        else f"the graders give {result.grade.signature}: check {_tool(domain, last.tool)}'s target and write=True"
    )


def _near_miss(domain: Domain, task: Task, result: CaseResult) -> str:
    got = result.grade.signature
    if result.grade.reward == 1 or got is None:
        cause = "the miss leaves the backend as the ground truth does"
    else:
        cause = f"the graders read it as {got}"
    return f"{cause}: {defined_at(domain.near_misses)} must return, for {result.case.expect}, " + (
        "the write aimed at another record of the same customer (another value of the tool's target)"
        if result.case.expect == "wrong_entity_write"
        else "the write on the same record with one detail wrong (a value the backend stores differently)"
    )


def _unconfirmed(domain: Domain, task: Task, result: CaseResult) -> str:
    tools = ", ".join(_tool(domain, a.tool) for a in result.case.writes)
    return (
        f"the customer's yes still counts for a proposal that is not the write ({result.case.label}): declare what a "
        f"yes agrees to in {tools} (confirm_words, confirm_keys with their kinds) or in the domain's proposal_terms, "
        f"and state those terms in {defined_at(domain.describe_action)}"
    )


def _duplicate(domain: Domain, task: Task, result: CaseResult) -> str:
    tools = ", ".join(_tool(domain, a.tool) for a in result.case.writes)
    return f"repeating each write is not seen as a repeat: check the target and kinds of {tools}"


def _extra(domain: Domain, task: Task, result: CaseResult) -> str:
    return (
        f"a write on another record added to the ground truth is not caught: check {defined_at(domain.near_misses)}'s "
        "wrong_entity_write miss and the write tool's target"
    )


def _forbidden(domain: Domain, task: Task, result: CaseResult) -> str:
    return (
        f"carrying out the forbidden call breaks no rule: add to the domain's rules ({_rules(domain)}) a Rule "
        "whose tools include it and whose check returns a reason for these arguments"
    )


def _facts(domain: Domain, task: Task, result: CaseResult) -> str:
    return (
        f"the facts count as told although the agent does not tell them ({result.case.label}): the proposal of "
        f"{defined_at(domain.describe_action)} or the fact's label (the domain's facts) already says the value"
    )


def _privacy(domain: Domain, task: Task, result: CaseResult) -> str:
    return (
        "another customer's data told is not caught: the domain's personal_data must name the table, its owner "
        "column and the personal columns"
    )


def _recital(domain: Domain, task: Task, result: CaseResult) -> str:
    return "the policy recited is not caught: the domain's `policy` must be the text the agent is given"


def _order(domain: Domain, task: Task, result: CaseResult) -> str:
    return "the calls made the other way round are not caught: the task's `order` must match calls its outcomes make"


def _does_nothing(domain: Domain, task: Task, result: CaseResult) -> str:
    return "the task rewards an agent that does nothing: give each goal a write (`actions`) or a fact to `tell`"


def _risk(domain: Domain, task: Task, result: CaseResult) -> str:
    return (
        f"the wrong guess ({result.case.risk}) is not found as that risk: its `call` must change the backend "
        "differently from the ground-truth write it replaces"
    )


def _rules(domain: Domain) -> str:
    return ", ".join(defined_at(r.check) for r in domain.rules) or "none yet: rules.py"


_ADVICE: dict[str, Callable[[Domain, Task, CaseResult], str]] = {
    "ground truth": _ground_truth,
    "no_write": _missing_write,
    "partial_resolution": _missing_write,
    "wrong_entity_write": _near_miss,
    "wrong_arguments": _near_miss,
    "unconfirmed_write": _unconfirmed,
    "duplicate_write": _duplicate,
    "extra_write": _extra,
    "policy_violation": _forbidden,
    "missing_output": _facts,
    "privacy_violation": _privacy,
    "policy_disclosure": _recital,
    "out_of_order": _order,
    "does nothing": _does_nothing,
    "risk": _risk,
}
