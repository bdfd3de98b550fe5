"""The conservative figures: every infra error counted as a failed trial.

The headline leaves infra errors out (they say nothing about the agent). When an endpoint was
flaky, this is the lower bound a reader may want next to it: what the run shows if each trial that
could not be judged had failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from passhat.metrics.summary import ResultTally, TrialResult, group_stats, tally_results


def conservative(outcomes: Iterable[TrialResult] | ResultTally) -> dict[str, Any]:
    """avg_reward and pass^k with infra errors as failures; None / {} when nothing was run."""
    counts = tally_results(outcomes).counts(infra_as_failures=True)
    if not counts:
        return {"avg_reward": None, "pass_hat_k": {}}
    group = group_stats(list(counts.values())).to_json()
    return {"avg_reward": group["avg_reward"], "pass_hat_k": group["pass_hat_k"]}
