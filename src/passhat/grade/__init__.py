"""Graders and failure signatures."""

from passhat.grade.expected import GroundTruthError, expected_environment, required_facts
from passhat.grade.graders import MODES, Grade, Mode, grade_trial

__all__ = ["MODES", "Grade", "GroundTruthError", "Mode", "expected_environment", "grade_trial", "required_facts"]
