"""Simulated customers, chosen by name with ``--user``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat.errors import UserError
from passhat.users.scripted import ScriptedUser

if TYPE_CHECKING:  # run.trial imports this package: a type-only import avoids the cycle
    from passhat.run.trial import UserFactory

USERS: dict[str, UserFactory] = {"scripted": ScriptedUser}


def resolve_user(spec: str) -> UserFactory:
    """The customer factory named by ``--user``."""
    try:
        return USERS[spec.strip()]
    except KeyError:
        raise UserError(f"unknown simulated customer {spec!r} in --user; choose from {', '.join(USERS)}.") from None


__all__ = ["USERS", "ScriptedUser", "resolve_user"]
