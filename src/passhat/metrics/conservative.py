"""The conservative figures: every infra error counted as a failed trial.

The headline leaves infra errors out (they say nothing about the agent). When an endpoint was
flaky, this is the lower bound a reader may want next to it: what the run shows if each trial that
could not be judged had failed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from passhat.metrics.summary import TrialOutcome, summarize
from passhat.trajectory import INFRA_ERROR


def conservative(outcomes: Iterable[TrialOutcome]) -> dict[str, Any]:
    """avg_reward and pass^k with infra errors as failures; None / {} when nothing was run."""
    as_failures = [
        dataclasses.replace(o, reward=0, signature=INFRA_ERROR, infra_error=False) if o.infra_error else o for o in outcomes
    ]
    summary = summarize(as_failures).to_json()
    return {"avg_reward": summary["avg_reward"], "pass_hat_k": summary["pass_hat_k"]}
