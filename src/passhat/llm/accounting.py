"""Tokens, cost and latency of model calls, per trial and per role (agent, customer).

The runner opens a Meter around each trial; model calls made inside that trial's task find it
through a context variable, so agents and customers need no extra plumbing, and concurrent
trials (each its own asyncio task, with its own copy of the context) never mix their counts.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator
from typing import Any

from passhat.llm.model import Completion


@dataclasses.dataclass
class RoleUsage:
    """One role's calls in one trial. Cached answers cost nothing and add no tokens."""

    model: str
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0  # calls to a model without a price: their cost is unknown, not zero
    latency_s: list[float] = dataclasses.field(default_factory=list)

    def add(self, completion: Completion, cost: float | None, latency: float | None) -> None:
        self.calls += 1
        if latency is None:
            self.cached_calls += 1
            return
        self.input_tokens += completion.input_tokens
        self.output_tokens += completion.output_tokens
        self.latency_s.append(round(latency, 4))
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += cost


class Meter:
    def __init__(self) -> None:
        self.roles: dict[str, RoleUsage] = {}

    def record(self, role: str, model: str, completion: Completion, cost: float | None, latency: float | None) -> None:
        """One answer; ``latency`` is None for an answer that came from the cache."""
        self.roles.setdefault(role, RoleUsage(model)).add(completion, cost, latency)

    def to_json(self) -> dict[str, Any]:
        return {role: {**vars(usage), "latency_s": list(usage.latency_s)} for role, usage in sorted(self.roles.items())}


_current: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("passhat_meter", default=None)


@contextlib.contextmanager
def metering() -> Iterator[Meter]:
    """Count the model calls made in the current task until the block ends."""
    meter = Meter()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)


def current_meter() -> Meter | None:
    return _current.get()
