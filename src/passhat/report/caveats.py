"""What a report must say before its figures: whether the run is complete, whether it stopped early
against its gate (then its figures are no estimate of the agent), and when pass^k beyond n is not
predicted. The JSON report carries the facts; the terminal and HTML reports print the same sentences."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def run_completeness(config: Mapping[str, Any], judged: int) -> dict[str, Any]:
    """The stored judged trials against the planned ones (tasks × personas × trials of the stored config).

    ``complete`` is False when trials are missing or could not be judged (a resume runs them);
    ``early_stopped`` when the run skipped, by design, the trials that could not change its gate's decision.
    """
    try:
        planned: int | None = len(config["tasks"]) * len(config["personas"]) * int(config["trials"])
    except (KeyError, TypeError, ValueError):
        planned = None  # a store without a plan (not written by `passhat run`): nothing to compare with
    return {
        "complete": planned is None or judged >= planned,
        "planned_trials": planned,
        "stored_trials": judged,
        "early_stopped": bool(config.get("early_stop")),
    }


MIN_TRIALS_TO_EXTRAPOLATE = 3


def extrapolation_skipped(min_trials: int, early_stopped: bool) -> str | None:
    """Why pass^k beyond n is not predicted for this run, or None when it is."""
    if early_stopped:
        return ("the run stopped early against its gate: the trials it skipped are mostly those after failures, so its "
                "counts are no sample of the agent to fit a model to")
    if min_trials < MIN_TRIALS_TO_EXTRAPOLATE:
        return (f"the smallest scenario has {min_trials} judged trial{'s' if min_trials != 1 else ''}; a model of "
                f"per-scenario success needs at least {MIN_TRIALS_TO_EXTRAPOLATE} per scenario to say anything beyond n")
    return None


def caveats(report: Mapping[str, Any]) -> list[str]:
    """The warnings to print first, in words a user can act on (empty for a complete, full run)."""
    planned, stored = report.get("planned_trials"), report.get("stored_trials")
    out = []
    if report.get("early_stopped"):
        gate = (report.get("config") or {}).get("early_stop")
        against = f" against the gate {gate}" if isinstance(gate, str) else ""
        of = f", {stored:,} of {planned:,} planned trials judged" if planned is not None else ""
        out.append(f"early-stopped run ({against.strip() or 'against its gate'}{of}): the figures are not estimates of "
                   "the agent, use this run for the gate decision only")
    elif not report.get("complete", True):
        out.append(f"incomplete: {stored:,} of {planned:,} planned trials judged — resume with "
                   f"`passhat run --resume {report['run_id']}` (same --out) to run the missing and unjudged ones; "
                   "until then every figure covers only the judged trials")
    return out
