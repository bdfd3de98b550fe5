"""Agents under test, chosen by name with ``--agent``."""

from __future__ import annotations

from passhat.agents.base import AgentFactory, AgentSetup
from passhat.agents.http_agent import http_agent_factory, is_http_spec
from passhat.agents.llm import LLMAgent, LLMAgentFactory
from passhat.agents.python_agent import PREFIX as PYTHON_PREFIX
from passhat.agents.python_agent import python_agent_factory
from passhat.agents.reference import PROFILES, ErrorProfile, ReferenceAgent
from passhat.errors import UserError
from passhat.llm import ModelHub, ModelRef


def _reference(profile: ErrorProfile) -> AgentFactory:
    def make(setup: AgentSetup) -> ReferenceAgent:
        return ReferenceAgent(setup, profile)

    return make


AGENTS: dict[str, AgentFactory] = {f"reference:{name}": _reference(profile) for name, profile in PROFILES.items()}
DEFAULT_AGENT = "reference:flaky"


def resolve_agent(spec: str, hub: ModelHub | None = None, with_policy: bool = True) -> AgentFactory:
    """The agent factory named by ``--agent``: a reference agent, ``llm:<provider>/<model>``, a team's agent
    as Python code (``python:package.module:factory``), as an HTTP service (``http(s)://host:port/path``) or as
    one that calls its tools itself over MCP (``mcp+http(s)://host:port/path``).

    ``hub`` holds the run's model clients and rules for remote calls; without it a spec is only checked
    (a Python agent's module is imported, but its factory not called).
    """
    if spec.strip().startswith("llm:"):
        return LLMAgentFactory(ModelRef.parse(spec, "--agent"), hub, with_policy)
    if not with_policy:
        raise UserError("--no-policy applies to llm: agents only; other agents are not given passhat's prompt or policy.")
    if spec.strip().startswith(PYTHON_PREFIX):
        return python_agent_factory(spec, hub)
    if is_http_spec(spec):
        return http_agent_factory(spec, hub)
    if spec.strip().lower().startswith("mcp+"):
        # imported here: the MCP agent loads the MCP SDK and uvicorn, which no other agent needs
        from passhat.agents.mcp_agent import mcp_agent_factory

        return mcp_agent_factory(spec, hub)
    try:
        return AGENTS[spec.strip()]
    except KeyError:
        raise UserError(
            f"unknown agent {spec!r} in --agent; choose from {', '.join(AGENTS)}, llm:<provider>/<model>, "
            "python:package.module:factory, http://host:port/path or mcp+http://host:port/path."
        ) from None


__all__ = ["AGENTS", "DEFAULT_AGENT", "ErrorProfile", "LLMAgent", "ReferenceAgent", "resolve_agent"]
