"""Proving a task: its ground truth earns reward 1, and every near miss of it earns 0 for the right reason.

This is what makes "exactly one correct outcome" a checked property rather than a hope. Each case is a
synthetic conversation — the customer identifies themselves, each write is proposed in the domain's
own words and confirmed — replayed on a fresh backend and graded like any trial. One case has the agent
do nothing at all (no identity check, no lookup, no write, only an apology): no task may reward that.
"""

from __future__ import annotations

import dataclasses

from passhat.dialogue import fact_said
from passhat.domains.model import Action, Domain, Task
from passhat.env import Environment
from passhat.grade.expected import ground_truth_calls, identity_text, required_facts
from passhat.guard import ToolPath
from passhat.grade.graders import Grade, Mode, grade_trial
from passhat.trajectory import USER_SIMULATOR_ERROR, Event

ANY_FAILURE = "any failure"  # Case.expect: reward 0, whatever the (agent) failure signature
IDLE_REFUSAL = "Sorry, I can't help with that."  # all the do-nothing agent ever says


@dataclasses.dataclass(frozen=True)
class Case:
    label: str
    writes: list[Action]
    confirm: bool = True
    tell_facts: bool = True
    expect: str | None = None  # the failure signature it must get (ANY_FAILURE: any); None: it must pass
    mode: Mode = "strict"
    idle: bool = False  # the agent never authenticates, looks nothing up, writes nothing: it only apologises


@dataclasses.dataclass(frozen=True)
class CaseResult:
    case: Case
    grade: Grade
    applied: bool  # every write of the case took effect; a near miss the backend rejects proves nothing

    @property
    def holds(self) -> bool:
        if not self.applied:
            return self.case.expect is not None
        if self.case.expect == ANY_FAILURE:  # the customer's own slip is no agent failure, so it proves nothing
            return self.grade.reward == 0 and self.grade.signature not in (None, USER_SIMULATOR_ERROR)
        wanted = 1 if self.case.expect is None else 0
        return self.grade.reward == wanted and self.grade.signature == self.case.expect


def replay_case(domain: Domain, task: Task, case: Case) -> CaseResult:
    """Play a synthetic conversation that makes ``case.writes`` and grade it (through the task's own guards)."""
    env = Environment(domain)
    path = ToolPath(env, task.guards, conversation_id=f"{task.id}/check")
    try:
        events = [Event("user", identity_text(task.customer) + ". " + task.goals[0].request[0])]
        if case.idle:  # the customer even goes away content: the graders alone must see that nothing was done
            events += [Event("agent", IDLE_REFUSAL), Event("user", "Oh well. Goodbye."), Event("end", "satisfied")]
            return CaseResult(case, grade_trial(domain, task, env, events, case.mode), applied=True)
        auth = ground_truth_calls(domain, task)[0]
        events.append(_tool_event(path, auth, events))
        planned = [r for a in task.actions for r in domain.lookups(env.db, a)] + [r for g in task.goals for r in g.lookups]
        events.extend(_tool_event(path, read, events) for read in planned)
        applied = True
        for action in case.writes:
            events.extend(_tool_event(path, read, events) for read in domain.lookups(env.db, action))
            if case.confirm:
                events.append(Event("agent", f"I can {domain.describe_action(env.db, action)}. Shall I go ahead?"))
                events.append(Event("user", "Yes, please go ahead."))
            events.append(_tool_event(path, action, events))
            applied &= events[-1].ok
        facts = "; ".join(required_facts(domain, task)) if case.tell_facts else ""
        events.append(Event("agent", f"All done. {facts} Anything else?"))
        events += [Event("user", "No, that's all. Thanks!"), Event("end", "satisfied")]
        events += path.settle()  # the simulated operator completes the hand-offs, as after a trial
        return CaseResult(case, grade_trial(domain, task, env, events, case.mode), applied)
    finally:
        env.close()


def _tool_event(path: ToolPath, action: Action, events: list[Event]) -> Event:
    """The action called the way a trial's agent calls it, after the conversation so far."""
    return path.execute(action.tool, dict(action.args), events)


def cases_for(domain: Domain, task: Task, env: Environment) -> list[Case]:
    """The ground truth and the perturbations that apply to this task."""
    writes = list(task.actions)
    cases = [Case("ground truth", writes), Case("ground truth (tau mode)", writes, mode="tau")]
    # graded in tau mode, the laxer one: a do-nothing agent that tau fails, strict fails too
    cases.append(Case("does nothing", [], tell_facts=False, expect=ANY_FAILURE, mode="tau", idle=True))
    misses = [domain.near_misses(env.db, action) for action in writes]
    for i, found in enumerate(misses):
        for label, miss in found:
            expect = {"wrong_order": "wrong_entity_write", "wrong_item": "wrong_arguments"}.get(label)
            if expect:
                cases.append(Case(f"{label} in write {i + 1}", writes[:i] + [miss] + writes[i + 1 :], expect=expect, mode="tau"))
    if writes:
        cases.append(Case("missing last write", writes[:-1], expect="partial_resolution" if len(writes) > 1 else "no_write", mode="tau"))
        if any(env.tools[a.tool].meta.needs_confirmation for a in writes):
            cases.append(Case("unconfirmed writes", writes, confirm=False, expect="unconfirmed_write"))
        extra = next((m for found in misses for label, m in found if label == "wrong_order"), None)
        if extra is not None:
            cases.append(Case("extra write", writes + [extra], expect="extra_write", mode="tau"))
    for goal in task.goals:
        for forbidden in goal.forbidden:
            cases.append(Case(f"forbidden {forbidden.tool}", writes + [forbidden], expect="policy_violation"))
    proposals = " ".join(domain.describe_action(env.db, a) for a in writes)
    if any(not fact_said(f, proposals) for f in required_facts(domain, task)):  # facts a proposal already says are told
        cases.append(Case("facts not told", writes, tell_facts=False, expect="missing_output"))
    return cases


def check_task(domain: Domain, task: Task) -> list[CaseResult]:
    env = Environment(domain)
    try:
        cases = cases_for(domain, task, env)
    finally:
        env.close()
    return [replay_case(domain, task, c) for c in cases]
