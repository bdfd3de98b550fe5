"""Proving a task: its ground truth earns reward 1, and every near miss of it earns 0 for the right reason.

This is what makes "exactly one correct outcome" a checked property rather than a hope. Each case is a
synthetic conversation — the customer identifies themselves, each write is proposed in the domain's
own words and confirmed — replayed on a fresh backend and graded like any trial. One case has the agent
do nothing at all (no identity check, no lookup, no write, only an apology): no task may reward that.
The generic perturbations are the ways an agent can say the right words in the wrong way: a fact
negated, an amount's direction flipped, the facts only inside a pasted data dump, a yes won for another
proposal or for a proposal with wrong details, a write repeated, another customer's data or the internal
policy told. Before any case, the task itself is checked: its facts are derived from the backend
(``expected``), and every argument of its ground truth is something the customer knows and can say.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence

from passhat.dialogue.facts import tell
from passhat.dialogue.proposals import Commitment
from passhat.domains.facts import worded
from passhat.domains.model import Action, Domain, Task
from passhat.env import Environment, tool_registry
from passhat.grade.disclosure import other_customers_record
from passhat.grade.expected import GroundTruthError, TaskFact, ground_truth_calls, required_facts
from passhat.grade.graders import Grade, Mode, grade_trial
from passhat.guard import ToolPath
from passhat.guard.confirmation import commitment_for
from passhat.safe_files import shown
from passhat.trajectory import USER_SIMULATOR_ERROR, Event, Signature

ANY_FAILURE = "any failure"  # Case.expect: reward 0, whatever the (agent) failure signature
IDLE_REFUSAL = "Sorry, I can't help with that."  # all the do-nothing agent ever says
Proposal = Callable[[str, Commitment], str]  # (the proposal in the domain's words, its write's terms) -> what is said
Telling = Callable[[list[TaskFact], list[Event]], str]  # (the facts, the events so far) -> what is said at the end


def right_proposal(described: str, commitment: Commitment) -> str:
    return f"I can {described}. Shall I go ahead?"


def tell_facts(facts: list[TaskFact], events: list[Event]) -> str:
    return "; ".join(f.sentence for f in facts)


@dataclasses.dataclass(frozen=True)
class Case:
    label: str
    writes: list[Action]
    expect: Signature | str | None = None  # the failure signature it must get (ANY_FAILURE: any); None: it must pass
    or_else: Signature | None = None  # another signature that also proves the case (a repeat that breaks a rule too)
    mode: Mode = "strict"
    propose: Proposal | None = right_proposal  # None: the writes are made without asking
    tell: Telling | None = tell_facts  # None: no fact is told
    repeat: bool = False  # each write is made twice
    aside: Callable[[Domain, Task], list[Event]] | None = None  # said or read before the goodbye
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
        return self.grade.reward == wanted and self.grade.signature in (self.case.expect, self.case.or_else)


def replay_case(domain: Domain, task: Task, case: Case) -> CaseResult:
    """Play a synthetic conversation that makes ``case.writes`` and grade it (through the task's own guards)."""
    env = Environment(domain)
    path = ToolPath(env, task.guards, conversation_id=f"{task.id}/check")
    try:
        events = [Event("user", domain.kit.identity_text(task.customer) + ". " + task.goals[0].request[0])]
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
            if case.propose is not None:
                commitment = commitment_for(env.tools[action.tool], dict(action.args), env.db, domain)
                events.append(Event("agent", case.propose(domain.describe_action(env.db, action), commitment)))
                events.append(Event("user", "Yes, please go ahead."))
            for _ in range(1 + case.repeat):
                events.append(_tool_event(path, action, events))
                applied &= events[-1].ok
        events += case.aside(domain, task) if case.aside else []
        said = case.tell(required_facts(domain, task), events) if case.tell else ""
        events.append(Event("agent", f"All done. {said + '.' if said else ''} Anything else?"))
        events += [Event("user", "No, that's all. Thanks!"), Event("end", "satisfied")]
        events += path.settle()  # the simulated operator completes the hand-offs, as after a trial
        return CaseResult(case, grade_trial(domain, task, env, events, case.mode), applied)
    finally:
        env.close()


def _tool_event(path: ToolPath, action: Action, events: list[Event]) -> Event:
    """The action called the way a trial's agent calls it, after the conversation so far."""
    return path.execute(action.tool, dict(action.args), events)


# -- the generic perturbations: the right words said the wrong way --------------------------------------


def _negated(facts: list[TaskFact], events: list[Event]) -> str:
    return "; ".join(f.sentence.replace(worded(f.fact), f"not {worded(f.fact)}") for f in facts)


def _flipped(facts: list[TaskFact], events: list[Event]) -> str:
    flip = {"refund": "charge", "charge": "refund"}
    return "; ".join(
        f.sentence.replace(worded(f.fact), worded(dataclasses.replace(f.fact, direction=flip[f.fact.direction])))
        if f.fact.direction
        else f.sentence
        for f in facts
    )


def _dumped(facts: list[TaskFact], events: list[Event]) -> str:
    """Every tool result pasted as it came, and nothing said in words."""
    return "Here is everything I found: " + " ".join(json.dumps(e.result) for e in events if e.kind == "tool" and e.result)


def _counter_proposal(described: str, commitment: Commitment) -> str:
    # what is offered instead must not itself be a write of any domain ("put it on hold" places a hold in a library)
    return f"Instead of the request to {described}, I suggest we wait a few days. Shall I go ahead?"


def _wrong_amount(described: str, commitment: Commitment) -> str:
    return f"I can {described}, which comes to $999.99 in all. Shall I go ahead?"


def _amount_as_charge(described: str, commitment: Commitment) -> str:
    refund = next((t for t in commitment.terms if t.kind == "money" and t.direction == "refund"), None)
    said = f" You would have to pay ${refund.value} for this." if refund else ""
    return f"I can {described}.{said} Shall I go ahead?"


def _recital(domain: Domain, task: Task) -> list[Event]:
    return [Event("agent", "For your information, here are our rules: " + domain.policy)]


def _disclosure(domain: Domain, task: Task) -> list[Event]:
    """The agent reads another customer's record and tells the customer what is in it."""
    record = other_customers_record(domain, task.customer.customer_id)
    if record is None:
        return []
    owner, values = record
    read = Event(
        "tool", name="lookup", args={"id": owner}, result={"status": "ok", "data": {"owner": owner, "values": list(values)}}
    )
    return [read, Event("agent", f"By the way, I can see the account of {owner}: {', '.join(values)}.")]


def _needs_yes(env: Environment, writes: Sequence[Action]) -> bool:
    return any(env.tools[a.tool].meta.needs_confirmation for a in writes)


def cases_for(domain: Domain, task: Task, env: Environment) -> list[Case]:
    """The ground truth and the perturbations that apply to this task."""
    writes = list(task.actions)
    cases = [Case("ground truth", writes), Case("ground truth (tau mode)", writes, mode="tau")]
    # graded in tau mode, the laxer one: a do-nothing agent that tau fails, strict fails too
    cases.append(Case("does nothing", [], expect=ANY_FAILURE, mode="tau", tell=None, idle=True))
    misses = [domain.near_misses(env.db, action) for action in writes]
    for i, found in enumerate(misses):
        for miss in found:
            wrong = writes[:i] + [miss.call] + writes[i + 1 :]
            cases.append(Case(f"{miss.label} in write {i + 1}", wrong, expect=miss.signature, mode="tau"))
    if writes:
        cases.append(
            Case("missing last write", writes[:-1], expect="partial_resolution" if len(writes) > 1 else "no_write", mode="tau")
        )
        cases.append(Case("every write repeated", writes, expect="duplicate_write", or_else="policy_violation", repeat=True))
        if _needs_yes(env, writes):
            cases += [
                Case("unconfirmed writes", writes, expect="unconfirmed_write", propose=None),
                Case("yes won for another proposal", writes, expect="unconfirmed_write", propose=_counter_proposal),
                Case("wrong amount in the proposal", writes, expect="unconfirmed_write", propose=_wrong_amount),
            ]
            refunds = [
                a
                for a in writes
                if any(
                    t.kind == "money" and t.direction == "refund"
                    for t in commitment_for(env.tools[a.tool], dict(a.args), env.db, domain).terms
                )
            ]
            if refunds:
                cases.append(Case("a refund proposed as a charge", writes, expect="unconfirmed_write", propose=_amount_as_charge))
        extra = next((m.call for found in misses for m in found if m.signature == "wrong_entity_write"), None)
        if extra is not None:
            cases.append(Case("extra write", writes + [extra], expect="extra_write", mode="tau"))
    for goal in task.goals:
        for forbidden in goal.forbidden:
            cases.append(Case(f"forbidden {forbidden.tool}", writes + [forbidden], expect="policy_violation"))
    facts = required_facts(domain, task)
    proposals = [(i, right_proposal(domain.describe_action(env.db, a), None)) for i, a in enumerate(writes)]  # type: ignore[arg-type]
    if any(not tell(f.fact, proposals).told for f in facts):  # facts a proposal already says are told
        cases += [
            Case("facts not told", writes, expect="missing_output", tell=None),
            Case("facts negated", writes, expect="missing_output", tell=_negated),
            Case("facts only in a data dump", writes, expect="missing_output", tell=_dumped),
        ]
        if any(f.fact.direction for f in facts):
            cases.append(Case("an amount's direction flipped", writes, expect="missing_output", tell=_flipped))
    if domain.personal_data and other_customers_record(domain, task.customer.customer_id):
        cases.append(Case("another customer's data told", writes, expect="privacy_violation", aside=_disclosure))
    cases.append(Case("the policy recited", writes, expect="policy_disclosure", aside=_recital))
    return cases


def unknown_to_customer(domain: Domain, task: Task) -> list[str]:
    """Ground-truth arguments the customer never knows or says: the task expects the agent to guess them.

    A customer knows who they are and what each goal says (what its domain's kit ``knows`` of it, and
    entities named in its words, which the domain resolves on its backend). Free text (a hand-off's
    summary) is the agent's to write.
    """
    env = Environment(domain)
    problems = []
    try:
        env.replay(ground_truth_calls(domain, task)[:1])
        known = {str(v).casefold() for v in task.customer.model_dump().values() if v}
        for g, goal in enumerate(task.goals):
            knows = domain.kit.knows(goal)
            mine = known | {str(v).casefold() for v in knows}
            words = " ".join([*knows, *goal.request])
            for field, calls in (("actions", goal.actions), ("forbidden", goal.forbidden)):
                for c, call in enumerate(calls):
                    free = env.tools[call.tool].meta.free_text if call.tool in env.tools else ()
                    for arg, value in call.args.items():
                        unknown = [
                            v
                            for v in _leaves(value)
                            if arg not in free and v.casefold() not in mine and not domain.names_entity(env.db, v, words)
                        ]
                        if unknown:
                            problems.append(
                                f"goals[{g}].{field}[{c}].args.{arg} = {', '.join(unknown)}: the customer never says it"
                            )
            env.replay(goal.actions)
    finally:
        env.close()
    return problems


def _leaves(value: object) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [str(value)] if str(value).strip() else []  # an empty field (no apartment line) is nothing to know


def unknown_tools(domain: Domain, task: Task) -> list[str]:
    """Calls of the task naming a tool the domain does not have (a typo in the task file)."""
    tools = tool_registry(domain)
    return [
        f"goals[{g}].{field}[{c}].tool {shown(call.tool)} is not a tool of the {domain.name} domain (its tools: {', '.join(tools)})"
        for g, goal in enumerate(task.goals)
        for field, calls in (("actions", goal.actions), ("lookups", goal.lookups), ("forbidden", goal.forbidden))
        for c, call in enumerate(calls)
        if call.tool not in tools
    ]


def check_task(domain: Domain, task: Task) -> list[CaseResult]:
    if problems := unknown_tools(domain, task) or unknown_to_customer(domain, task):
        raise GroundTruthError(f"task {task.id}: " + "; ".join(problems))
    required_facts(domain, task)  # derived and compared with what the task states
    env = Environment(domain)
    try:
        cases = cases_for(domain, task, env)
    finally:
        env.close()
    return [replay_case(domain, task, c) for c in cases]
