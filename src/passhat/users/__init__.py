"""Simulated customers, chosen by name with ``--user``."""

from __future__ import annotations

from passhat.errors import UserError
from passhat.llm import ModelHub, ModelRef
from passhat.users.base import UserFactory
from passhat.users.llm import LLMUser, LLMUserFactory
from passhat.users.scripted import ScriptedUser

USERS: dict[str, UserFactory] = {"scripted": ScriptedUser}


def resolve_user(spec: str, hub: ModelHub | None = None) -> UserFactory:
    """The customer factory named by ``--user``: ``scripted`` or ``llm:<provider>/<model>``.

    ``hub`` holds the run's model clients; without it an LLM spec is only checked.
    """
    if spec.strip().startswith("llm:"):
        return LLMUserFactory(ModelRef.parse(spec, "--user"), hub)
    try:
        return USERS[spec.strip()]
    except KeyError:
        raise UserError(
            f"unknown simulated customer {spec!r} in --user; choose from {', '.join(USERS)}, or llm:<provider>/<model>."
        ) from None


__all__ = ["USERS", "LLMUser", "ScriptedUser", "resolve_user"]
