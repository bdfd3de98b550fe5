"""Estimators and run summaries: pure functions over counts and trial outcomes, no I/O.

The names below load their module on first use (PEP 562): importing one light submodule of this package
(the gate's parser, the outcome type) must not pull numpy and scipy into every `passhat` command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat.lazy import lazy_names

if TYPE_CHECKING:
    from passhat.metrics.estimators import pass_at_curve, pass_at_k, pass_hat_curve, pass_hat_k
    from passhat.metrics.summary import USER_SIMULATOR_ERROR, GroupStats, Summary, TrialResult, headline_ks, summarize

_HOMES = {
    "pass_at_curve": "estimators",
    "pass_at_k": "estimators",
    "pass_hat_curve": "estimators",
    "pass_hat_k": "estimators",
    "USER_SIMULATOR_ERROR": "summary",
    "GroupStats": "summary",
    "Summary": "summary",
    "TrialResult": "summary",
    "headline_ks": "summary",
    "summarize": "summary",
}

__getattr__ = lazy_names(__name__, _HOMES)


__all__ = [
    "USER_SIMULATOR_ERROR",
    "GroupStats",
    "Summary",
    "TrialResult",
    "headline_ks",
    "pass_at_curve",
    "pass_at_k",
    "pass_hat_curve",
    "pass_hat_k",
    "summarize",
]
