"""Sandboxed payments: refunds and charges through a provider interface; ``sandbox`` is the one shipped."""

from __future__ import annotations

from passhat.errors import UserError
from passhat.guard.payments.ledger import EnvironmentMixed, totals
from passhat.guard.payments.provider import KeyedChannel, PaymentProvider, count_calls, next_call
from passhat.guard.payments.sandbox import SandboxProvider

PROVIDERS: dict[str, type[PaymentProvider]] = {"sandbox": SandboxProvider}


def provider_for(environment: str) -> PaymentProvider:
    """The provider of a payment environment; only the sandbox ships, so real money is never reachable."""
    if environment not in PROVIDERS:
        raise UserError(
            f"no payment provider for the {environment!r} environment; passhat ships only {', '.join(map(repr, PROVIDERS))}."
        )
    return PROVIDERS[environment]()


__all__ = [
    "PROVIDERS",
    "EnvironmentMixed",
    "KeyedChannel",
    "PaymentProvider",
    "SandboxProvider",
    "count_calls",
    "next_call",
    "provider_for",
    "totals",
]
