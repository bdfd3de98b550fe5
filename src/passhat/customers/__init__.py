"""Simulated customers, chosen by name with ``--customer``."""

from __future__ import annotations

from passhat.customers.base import UserFactory
from passhat.customers.llm import LLMUser, LLMUserFactory
from passhat.customers.scripted import ScriptedUser
from passhat.errors import UserError
from passhat.llm import ModelHub, ModelRef

USERS: dict[str, UserFactory] = {"scripted": ScriptedUser}


def resolve_user(spec: str, hub: ModelHub | None = None) -> UserFactory:
    """The customer factory named by ``--customer``: ``scripted`` or ``llm:<provider>/<model>``.

    ``hub`` holds the run's model clients; without it an LLM spec is only checked.
    """
    if spec.strip().startswith("llm:"):
        return LLMUserFactory(ModelRef.parse(spec, "--customer"), hub)
    try:
        return USERS[spec.strip()]
    except KeyError:
        raise UserError(
            f"unknown simulated customer {spec!r} in --customer; choose from {', '.join(USERS)}, or llm:<provider>/<model>."
        ) from None


__all__ = ["USERS", "LLMUser", "ScriptedUser", "resolve_user"]
