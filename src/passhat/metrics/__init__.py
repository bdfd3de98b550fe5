"""Estimators and run summaries: pure functions over counts and trial outcomes, no I/O."""

from passhat.metrics.estimators import pass_at_curve, pass_at_k, pass_hat_curve, pass_hat_k
from passhat.metrics.summary import (
    USER_SIMULATOR_ERROR,
    GroupStats,
    Summary,
    TrialOutcome,
    headline_ks,
    summarize,
)

__all__ = [
    "USER_SIMULATOR_ERROR",
    "GroupStats",
    "Summary",
    "TrialOutcome",
    "headline_ks",
    "pass_at_curve",
    "pass_at_k",
    "pass_hat_curve",
    "pass_hat_k",
    "summarize",
]
