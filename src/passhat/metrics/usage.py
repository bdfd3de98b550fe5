"""What a run's model calls took: tokens, cost and latency, from the per-trial usage the store keeps.

A per-trial usage is {role: {"model", "calls", "cached_calls", "input_tokens", "output_tokens",
"cost_usd", "unpriced_calls", "latency_s": [...]}} (see llm/accounting.py); runs without models
have empty usages and get zeros. Pure functions, like the rest of ``metrics``.
"""

from __future__ import annotations

import dataclasses
import statistics
from array import array
from collections.abc import Iterable
from typing import Any

COUNTS = ("calls", "cached_calls", "input_tokens", "output_tokens", "unpriced_calls")


@dataclasses.dataclass
class UsageTally:
    """Per role, the usages' totals and every call's latency (packed as doubles), counted as the trials come:
    what a report of a large run keeps instead of each trial's usage."""

    roles: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    latencies: dict[str, array[float]] = dataclasses.field(default_factory=dict)

    def add(self, usage: dict[str, Any]) -> None:
        for role, u in usage.items():
            total = self.roles.setdefault(role, {"model": u["model"], "cost_usd": 0.0, **dict.fromkeys(COUNTS, 0)})
            for name in (*COUNTS, "cost_usd"):
                total[name] += u[name]
            self.latencies.setdefault(role, array("d")).extend(u["latency_s"])


def usage_metrics(usages: Iterable[dict[str, Any]] | UsageTally) -> dict[str, Any]:
    """{"cost_usd", "tokens": {"input", "output"}, "model_calls": {role: totals}, "unpriced_models": [...]}."""
    tally = usages if isinstance(usages, UsageTally) else _tallied(usages)
    roles = {role: {**total, "latency_s": _latency(list(tally.latencies[role]))} for role, total in tally.roles.items()}
    return {
        "cost_usd": round(sum(r["cost_usd"] for r in roles.values()), 6),
        "tokens": {
            "input": sum(r["input_tokens"] for r in roles.values()),
            "output": sum(r["output_tokens"] for r in roles.values()),
        },
        "model_calls": roles,
        "unpriced_models": sorted({r["model"] for r in roles.values() if r["unpriced_calls"]}),
    }


def _tallied(usages: Iterable[dict[str, Any]]) -> UsageTally:
    tally = UsageTally()
    for usage in usages:
        tally.add(usage)
    return tally


def _latency(values: list[float]) -> dict[str, float | None]:
    """Mean, median and 95th percentile of the calls that reached the endpoint (not cache hits)."""
    if not values:
        return {"mean": None, "p50": None, "p95": None}
    p95 = statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]
    return {"mean": statistics.fmean(values), "p50": statistics.median(values), "p95": p95}
