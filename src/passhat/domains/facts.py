"""Deriving a task's facts from the backend: what a ``tell`` entry names, computed, never recited.

``tell`` names one of the domain's facts (``Domain.facts``) with its arguments, or ``policy_reason``: a
phrase that the reason of a rule refusing the goal's forbidden request contains, so the explanation a
task asks for is the policy's own. The graders, ``passhat check`` and the scripted customer all derive
facts here, on the backend as the goal finds it.
"""

from __future__ import annotations

import dataclasses
import inspect
import sqlite3
from collections.abc import Sequence
from typing import Any

from passhat.dialogue.facts import Fact
from passhat.dialogue.values import money_in, names_phrase
from passhat.domains.model import Call, Domain, FactSpec, Goal

POLICY_REASON = "policy_reason"


class FactError(Exception):
    """A fact cannot be derived as the task states it: the task file is wrong."""


def derive_fact(
    domain: Domain, db: sqlite3.Connection, goal: Goal, spec: FactSpec, history: Sequence[Call] = ()
) -> tuple[Fact, str]:
    """The fact and the sentence a careful agent says it in; ``history``: the trial's calls so far, for rules."""
    if spec.fact == POLICY_REASON:
        return _policy_reason(domain, db, goal, spec, list(history)), spec.value
    source = domain.facts.get(spec.fact)
    if source is None:
        raise FactError(f"the {domain.name} domain has no such fact; its facts are {', '.join([*domain.facts, POLICY_REASON])}")
    try:
        fact = source.derive(db, **spec.of)
    except (TypeError, LookupError) as exc:
        raise FactError(f"cannot derive it from {spec.of}: {exc}") from None
    if spec.synonyms:
        fact = dataclasses.replace(fact, synonyms=(*fact.synonyms, *spec.synonyms))
    return fact, source.label.format(value=worded(fact), **{k: _words(v) for k, v in spec.of.items()})


def facts_of(domain: Domain, db: sqlite3.Connection, args: dict[str, Any]) -> list[tuple[Fact, str]]:
    """Every fact the domain derives from the backend about the records a call names: each source whose
    arguments are all among ``args`` ("the status of invoice INV-71011 is vendor query" for a notice about
    INV-71011), with the sentence a careful agent says it in. A source that cannot say (no such record) is left out."""
    found = []
    for source in domain.facts.values():
        wanted = [name for name in inspect.signature(source.derive).parameters if name != "db"]
        if not wanted or any(name not in args for name in wanted):
            continue
        of = {name: args[name] for name in wanted}
        try:
            fact = source.derive(db, **of)
        except (TypeError, LookupError, ValueError):
            continue
        found.append((fact, source.label.format(value=worded(fact), **{k: _words(v) for k, v in of.items()})))
    return found


def _policy_reason(domain: Domain, db: sqlite3.Connection, goal: Goal, spec: FactSpec, history: list[Call]) -> Fact:
    if goal.outcome != "refused":
        raise FactError("only a refused goal's facts can come from the policy's reason")
    reasons = [
        reason
        for call in goal.forbidden
        for rule in domain.rules
        if not rule.tools or call.tool in rule.tools
        if (reason := rule.check(db, Call(call.tool, dict(call.args)), history))
    ]
    if not any(names_phrase(r, spec.value) for r in reasons):
        raise FactError(f"{spec.value!r} is not in the policy's reason for refusing it ({reasons or 'no rule refuses it'})")
    return _reason_fact(spec)


def _reason_fact(spec: FactSpec) -> Fact:
    """A reason's phrase as a fact. With ``of`` (the record it is said of), the phrase is a value of that record — the
    priority the rules allow, "high" — told when said of it in any wording ("INC-1131 now high", "so high is allowed"),
    negated or hedged or not; without, its words in order."""
    about = tuple(str(v) for v in spec.of.values())
    return Fact("status" if about else "phrase", spec.value, synonyms=tuple(spec.synonyms), about=about)


def same_value(fact: Fact, stated: str) -> bool:
    """Whether a task's stated value is the derived one (amounts to the cent)."""
    if fact.kind == "money":
        found = money_in(stated) or money_in(f"${stated}")
        return bool(found) and found[0].value == fact.value
    return stated.strip().casefold() == fact.value.casefold()


def worded(fact: Fact) -> str:
    """A fact's value as a careful agent says it."""
    if fact.kind != "money":
        return fact.value
    amount = f"${fact.value}"
    return {"refund": f"a refund of {amount}", "charge": f"a charge of {amount}"}.get(fact.direction or "", amount)


def _words(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        parts = [str(v) for v in value]
        return " and ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else "".join(parts)
    return str(value)
