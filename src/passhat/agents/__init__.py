"""Agents under test, chosen by name with ``--agent``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat.agents.base import AgentSetup
from passhat.agents.reference import PROFILES, ErrorProfile, ReferenceAgent
from passhat.errors import UserError

if TYPE_CHECKING:  # run.trial imports this package: a type-only import avoids the cycle
    from passhat.run.trial import AgentFactory


def _reference(profile: ErrorProfile) -> AgentFactory:
    def make(setup: AgentSetup) -> ReferenceAgent:
        return ReferenceAgent(setup, profile)

    return make


AGENTS: dict[str, AgentFactory] = {f"reference:{name}": _reference(profile) for name, profile in PROFILES.items()}
DEFAULT_AGENT = "reference:flaky"


def resolve_agent(spec: str) -> AgentFactory:
    """The agent factory named by ``--agent``."""
    try:
        return AGENTS[spec.strip()]
    except KeyError:
        raise UserError(f"unknown agent {spec!r} in --agent; choose from {', '.join(AGENTS)}.") from None


__all__ = ["AGENTS", "DEFAULT_AGENT", "ErrorProfile", "ReferenceAgent", "resolve_agent"]
