"""Packages whose exported names load their module on first use (PEP 562), so that importing one light module of a
package (a vocabulary, a schema) does not load the heavy ones beside it into every `passhat` command."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A package's module-level ``__getattr__``: ``homes`` maps each exported name to the module of ``package``
    that defines it, imported when the name is first read."""

    def load(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{homes[name]}"), name)

    return load
