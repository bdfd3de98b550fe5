"""Graders and failure signatures.

The names below load their module on first use (PEP 562): the CLI reads the modes (``passhat.grade.modes``)
without loading the graders, and what they import, into every `passhat` command."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.grade.expected import GroundTruthError, expected_environment, required_facts
    from passhat.grade.graders import Grade, grade_trial
    from passhat.grade.modes import MODES, Mode

_HOMES = {
    "GroundTruthError": "expected",
    "expected_environment": "expected",
    "required_facts": "expected",
    "Grade": "graders",
    "grade_trial": "graders",
    "MODES": "modes",
    "Mode": "modes",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


__all__ = ["MODES", "Grade", "GroundTruthError", "Mode", "expected_environment", "grade_trial", "required_facts"]
