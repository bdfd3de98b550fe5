"""Graders and failure signatures."""

from passhat.grade.expected import GroundTruthError, expected_environment
from passhat.grade.graders import MODES, Grade, Mode, grade_trial

SIGNATURES: tuple[str, ...] = (
    "policy_violation", "unconfirmed_write", "wrong_entity_write", "wrong_arguments", "partial_resolution",
    "extra_write", "no_write", "missing_output", "tool_error_unrecovered", "user_abandoned",
    "closed_unresolved", "max_turns", "context_overflow",
)
NOT_AGENT_FAILURES: tuple[str, ...] = ("user_simulator_error", "infra_error")

__all__ = ["MODES", "NOT_AGENT_FAILURES", "SIGNATURES", "Grade", "GroundTruthError", "Mode",
           "expected_environment", "grade_trial"]
