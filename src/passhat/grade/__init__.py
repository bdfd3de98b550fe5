"""Graders and failure signatures.

The names below load their module on first use (PEP 562): the CLI reads the modes (``passhat.grade.modes``)
without loading the graders, and what they import, into every `passhat` command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat.lazy import lazy_names

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

__getattr__ = lazy_names(__name__, _HOMES)


__all__ = ["MODES", "Grade", "GroundTruthError", "Mode", "expected_environment", "grade_trial", "required_facts"]
