"""Providers whose SDK is an optional extra (``pip install 'passhat[<provider>]'``): importing it, or saying
how to install it."""

from __future__ import annotations

import importlib
from types import ModuleType

from passhat.errors import UserError


def import_extra(provider: str) -> ModuleType:
    """The SDK of ``provider``, whose module and extra are both named after it; a UserError (exit 2) naming
    the extra when it is not installed, so a run stops before its first trial rather than in every one."""
    try:
        return importlib.import_module(provider)
    except ImportError:
        raise UserError(
            f"llm:{provider}/... models need the {provider} package, which is an optional extra: "
            f"pip install 'passhat[{provider}]'."
        ) from None
