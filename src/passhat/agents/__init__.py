"""Agents under test, chosen by name with ``--agent``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat.agents.base import AgentSetup
from passhat.agents.llm import LLMAgent, LLMAgentFactory
from passhat.agents.reference import PROFILES, ErrorProfile, ReferenceAgent
from passhat.errors import UserError
from passhat.llm import ModelHub, ModelRef

if TYPE_CHECKING:  # run.trial imports this package: a type-only import avoids the cycle
    from passhat.run.trial import AgentFactory


def _reference(profile: ErrorProfile) -> AgentFactory:
    def make(setup: AgentSetup) -> ReferenceAgent:
        return ReferenceAgent(setup, profile)

    return make


AGENTS: dict[str, AgentFactory] = {f"reference:{name}": _reference(profile) for name, profile in PROFILES.items()}
DEFAULT_AGENT = "reference:flaky"


def resolve_agent(spec: str, hub: ModelHub | None = None, with_policy: bool = True) -> AgentFactory:
    """The agent factory named by ``--agent``: a reference agent, or ``llm:<provider>/<model>``.

    ``hub`` holds the run's model clients; without it an LLM spec is only checked.
    """
    if spec.strip().startswith("llm:"):
        return LLMAgentFactory(ModelRef.parse(spec, "--agent"), hub, with_policy)
    if not with_policy:
        raise UserError("--no-policy applies to llm: agents only; the reference agents do not read the policy.")
    try:
        return AGENTS[spec.strip()]
    except KeyError:
        raise UserError(
            f"unknown agent {spec!r} in --agent; choose from {', '.join(AGENTS)}, or llm:<provider>/<model>."
        ) from None


__all__ = ["AGENTS", "DEFAULT_AGENT", "ErrorProfile", "LLMAgent", "ReferenceAgent", "resolve_agent"]
