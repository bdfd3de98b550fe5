"""One trial's world: a forked backend, the domain's tools, and policy rules observed on every write."""

from __future__ import annotations

import dataclasses
import sqlite3
from functools import cache
from typing import Any

from passhat.domains.model import Action, Call, Domain, Rule
from passhat.domains.toolkit import ToolFailure
from passhat.env.backend import Template, fork_backend, release_backend, template_for
from passhat.env.tools import ToolSpec, Within, error, invoke, spec_for, validate_args


@dataclasses.dataclass(frozen=True)
class Violation:
    rule: str
    reason: str


@dataclasses.dataclass(frozen=True)
class Execution:
    """What happened to one call: its result, and the policy rules it broke (checked before it ran)."""

    name: str
    args: Any
    result: dict[str, Any]
    violations: tuple[Violation, ...] = ()


@cache
def tool_registry(domain: Domain) -> dict[str, ToolSpec]:
    """Tool specs of a domain, derived once per process."""
    return {spec.name: spec for spec in map(spec_for, domain.tools)}


class ToolRunner:
    """Tools over one backend, with policy rules observed on every write: all a guard needs to wrap.

    The harness's Environment is one; ``ToolRunner(specs, db, rules)`` serves tools outside the harness.
    """

    def __init__(self, tools: dict[str, ToolSpec], db: sqlite3.Connection, rules: tuple[Rule, ...] = ()):
        self.tools, self.db, self.rules = tools, db, rules
        self.history: list[Call] = []

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [spec.schema for spec in self.tools.values()]

    def execute(self, name: str, args: Any, within: Within | None = None) -> Execution:
        """Validate, check the policy rules, run. Never raises for anything a model could send."""
        spec = self.tools.get(name)
        if spec is None:
            result = error("unknown_tool", f"there is no tool named {name!r}; the tools are {', '.join(self.tools)}")
            return Execution(name, args, result)
        try:
            clean = validate_args(spec, args)
        except ToolFailure as exc:
            return Execution(name, args, error(exc.type, exc.message, exc.retryable))
        violations = self.check_rules(name, clean) if spec.meta.write else ()
        result = invoke(spec, self.db, clean, within)
        self.history.append(Call(name, clean, result))
        return Execution(name, clean, result, violations)

    def check_rules(self, name: str, args: dict[str, Any]) -> tuple[Violation, ...]:
        call = Call(name, args)
        found = []
        for rule in self.rules:
            if rule.tools and name not in rule.tools:
                continue
            reason = rule.check(self.db, call, self.history)
            if reason:
                found.append(Violation(rule.id, reason))
        return tuple(found)


class Environment(ToolRunner):
    """One trial's world: a fresh fork of the domain's template backend."""

    def __init__(self, domain: Domain):
        self.domain = domain
        self.template: Template = template_for(domain)
        super().__init__(tool_registry(domain), fork_backend(self.template), domain.rules)

    def replay(self, actions: list[Action]) -> list[Execution]:
        """Carry out calls directly (ground truth, perturbations), recording them like any other."""
        return [self.execute(a.tool, dict(a.args)) for a in actions]

    def close(self) -> None:
        self.db.close()

    def release(self) -> None:
        """Close, when nothing keeps the backend's connection past this (a trial's end): it is put back to the
        template's state and kept for the next fork (``release_backend``)."""
        release_backend(self.template, self.db)
