"""What a task's customer asks for, proved against its ground truth before any case is played.

Replaying a task proves its outcome is reachable, not that the customer asks for it. Three ways a task
file drifts from its own customer go unseen by a replay, and each blames a correct agent:

- a request that names another record than its ground truth touches (the customer names one record,
  the writes change another): the agent that does what it is asked fails;
- a write no request asks for (a goal asks for one change; its ground truth also makes another): the
  agent that asks before acting never gets a yes for it;
- a fact worded as the policy's rule ("X at most") rather than as what a customer is told ("X"): the
  agent that says "the most I can do is X" fails on wording.

Everything is read through the domain contract: the tools' declared writes and targets, the goal's typed
details (``kit.knows``, ``kit.answer``), the domain's id pattern, action words and ``names_entity``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator

from passhat.dialogue.proposals import proposes
from passhat.dialogue.values import names_identifier
from passhat.domains.model import Action, Domain, Goal, Task
from passhat.domains.where import defined_at
from passhat.env import Environment, tool_registry
from passhat.env.tools import ToolSpec
from passhat.grade.expected import ground_truth_calls

# How rules are worded and customers are not told: a limit, an obligation or permission, a standing rule.
# A fact states what is so of the customer's case: a value of a kind (an amount, a date, an id) or a state.
RULE_WORDING = re.compile(
    r"\b(?:"
    + "|".join(
        (
            r"at (?:the )?(?:most|least)",
            r"no (?:more|less|fewer|later|earlier) than",
            r"must",
            r"may",
            r"shall",
            r"should",
            r"can(?:not|'t)?",
            r"only (?:the|a|an|one)",  # a restriction to a class ("only the owner"); "X only" is a scope, a value
            r"never",
            r"always",
            r"allow(?:s|ed)?",
            r"permit(?:s|ted)?",
            r"forbid(?:s|den)?",
            r"prohibit(?:s|ed)?",
            r"require[sd]?",
            r"polic(?:y|ies)",
            r"rules?",
        )
    )
    + r")\b",
    re.I,
)


class _Said:
    """A voice that says a detail as its bare values: what the customer gives when asked, without a template."""

    rng = random.Random(0)

    def say(self, kind: str, **fields: str) -> str:
        return " ".join(str(v) for v in fields.values() if v)


def request_problems(domain: Domain, task: Task) -> list[str]:
    """Every way the task's requests and its ground truth disagree on records or writes, and every fact worded
    as a rule; each names the task's field."""
    env = Environment(domain)
    try:
        env.replay(ground_truth_calls(domain, task)[:1])  # the identity lookup, so the reads below find the records
        return [*_other_records(domain, task, env), *_unnamed_targets(domain, task, env), *_unasked_writes(domain, task)]
    finally:
        env.close()


def _goal_writes(task: Task, g: int) -> Iterator[tuple[str, Action]]:
    """The writes of goal ``g`` in every acceptable outcome, each with where the task file states it."""
    for k in range(len(task.acceptable)):
        yield from ((place, call) for place, call in places(task, k, g) if ".forbidden[" not in place)


def places(task: Task, k: int, g: int) -> list[tuple[str, Action]]:
    """Goal ``g``'s calls in the ``k``th acceptable outcome, each with where the task file states it."""
    goal = task.goals[g]
    if k == 0:
        fields = (("actions", goal.actions), ("forbidden", goal.forbidden))
        return [(f"goals[{g}].{field}[{c}]", call) for field, calls in fields for c, call in enumerate(calls)]
    outcome = task.acceptable[k]
    owners = task.goal_of(outcome)
    return [(f"outcomes[{k - 1}].actions[{i}]", call) for i, call in enumerate(outcome.actions) if owners[i] == g]


def leaves(value: object) -> list[str]:
    """The values inside an argument (a list of items, a dict of address lines), as text."""
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    return [str(value)] if str(value).strip() else []  # an empty field (no apartment line) is nothing to know


def _words(domain: Domain, goal: Goal) -> Iterator[tuple[str, str]]:
    """What the customer says of the goal: each phrasing of its request, and its details as given when asked."""
    for i, phrasing in enumerate(goal.request):
        yield f"request[{i}]", phrasing
    for slot in domain.kit.slots[1:]:
        if said := domain.kit.answer(slot, goal, _Said()):
            yield f"details ({slot})", said


def _other_records(domain: Domain, task: Task, env: Environment) -> list[str]:
    """Ids the customer names for a goal that its ground truth neither writes nor reads (nor the customer's own)."""
    problems = []
    for g, goal in enumerate(task.goals):
        touched = _touched(domain, task, env, g)
        for where, said in _words(domain, goal):
            for found in dict.fromkeys(m.group() for m in re.finditer(domain.id_pattern, said)):
                if not any(names_identifier(t, found) for t in touched):
                    problems.append(
                        f"goals[{g}].{where} names {found}, a record the goal's ground truth never touches: "
                        "name the record its actions change, or change the actions"
                    )
    return problems


def _touched(domain: Domain, task: Task, env: Environment, g: int) -> list[str]:
    """What goal ``g``'s ground truth touches, as text: its calls' arguments, the facts it tells and what the reads
    a careful agent makes first return (what a record holds), and the customer's own details."""
    goal = task.goals[g]
    acted = [call for _, call in _goal_writes(task, g)] + list(goal.forbidden)
    reads = [r for call in acted if call.tool in env.tools for r in domain.lookups(env.db, call)] + list(goal.lookups)
    results = [json.dumps(e.result) for e in env.replay(reads)]
    own = [str(v) for v in task.customer.model_dump().values() if v]
    return [json.dumps(c.args) for c in acted + reads] + [json.dumps(f.of) for f in goal.tell] + results + own


def _unnamed_targets(domain: Domain, task: Task, env: Environment) -> list[str]:
    """Records a goal's writes act on (their tool's ``target``) that one phrasing of its request, with the goal's
    details, does not name by id or by what identifies it: a customer who says that phrasing never asks for it."""
    own = {str(v).casefold() for v in task.customer.model_dump().values() if v}
    problems = []
    for g, goal in enumerate(task.goals):
        details = " ".join(domain.kit.knows(goal))
        for place, call in _goal_writes(task, g):
            spec = env.tools.get(call.tool)
            value = str(call.args.get(spec.meta.target, "")) if spec and spec.meta.target else ""
            if not value or value.casefold() in own:
                continue
            for i, phrasing in enumerate(goal.request):
                said = f"{phrasing} {details}"
                if not (names_identifier(said, value) or domain.names_entity(env.db, value, said)):
                    problems.append(
                        f"{place} acts on {value}, which goals[{g}].request[{i}] and the goal's details never name: name it "
                        f"in each phrasing of the request, or return it from {defined_at(domain.kit.knows)} as a goal detail"
                    )
    return problems


def _unasked_writes(domain: Domain, task: Task) -> list[str]:
    """Writes of a goal that its request does not ask for, each with why (see ``_unasked``)."""
    tools = tool_registry(domain)
    return [
        f"{place} ({call.tool}) is a write goals[{g}] never asks for: {why}"
        for g, goal in enumerate(task.goals)
        for place, call in _goal_writes(task, g)
        if call.tool in tools and (why := _unasked(domain, goal, tools[call.tool], call))
    ]


def _unasked(domain: Domain, goal: Goal, spec: ToolSpec, call: Action) -> str | None:
    """Why the goal does not ask for ``call``, or None when it does: a hand-off is asked for by a goal that wants
    one; any other write by a goal of its kind (the kind's words are the tool's), by a goal whose details it sets
    (a value the customer asks for), or in the tool's words by every phrasing of the request (each customer says
    only one)."""
    meta = spec.meta
    if meta.ends_conversation:
        return None if goal.outcome == "transferred" else f"it hands the customer off, and the goal's outcome is {goal.outcome!r}"
    words = meta.confirm_words
    if words and set(words) <= set(domain.proposal_keywords.get(goal.kind, ())):
        return None
    details = {str(v).casefold() for v in domain.kit.knows(goal)}
    skipped = {meta.target, *meta.free_text}
    if any(leaf.casefold() in details for arg, value in call.args.items() if arg not in skipped for leaf in leaves(value)):
        return None
    if words and all(proposes(phrasing, words) for phrasing in goal.request):
        return None
    return (
        f"its kind {goal.kind!r} is another action, it sets none of the goal's details, and not every phrasing of "
        f"its request asks for it ({' / '.join(words) or 'the tool declares no action words'}): give the goal a kind "
        f"whose words in the domain's proposal_keywords are the tool's confirm_words, or use one of them in every phrasing"
    )


def rule_worded_facts(task: Task) -> list[str]:
    """Facts (and their other wordings) phrased as the policy's rule rather than as what the customer is told."""
    return [
        f"goals[{g}].tell[{i}] ({spec.fact}) {wording!r} is worded as a rule ({found.group()!r}), not as what a customer "
        "is told: state the value or state of their case the rule turns on"
        for g, goal in enumerate(task.goals)
        for i, spec in enumerate(goal.tell)
        for wording in (spec.value, *spec.synonyms)
        if (found := RULE_WORDING.search(wording))
    ]
