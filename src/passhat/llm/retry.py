"""Bounded retries with exponential backoff and full jitter, for failures that a later try can cure; a server's
Retry-After is honoured (up to the longest wait)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from passhat.llm.errors import ModelUnavailable, TransientError

T = TypeVar("T")
_jitter = random.Random()  # jitter only spreads load; it never touches a trial's result


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """``retries`` tries after the first; the n-th waits a random time up to base_delay · 2^(n-1), capped."""

    retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0

    def delay(self, attempt: int, asked: float | None = None) -> float:
        """The wait before try ``attempt + 1``: the backoff, or longer when the server ``asked`` for longer
        (its Retry-After), capped at ``max_delay`` either way."""
        backoff = _jitter.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))
        return max(backoff, min(self.max_delay, asked or 0.0))


async def retrying(call: Callable[[], Awaitable[T]], policy: RetryPolicy, what: str) -> T:
    """``call()`` until it succeeds; TransientError on the last try becomes ModelUnavailable."""
    attempt = 0
    while True:
        try:
            return await call()
        except TransientError as exc:
            if attempt == policy.retries:
                raise ModelUnavailable(f"{what} failed after {attempt + 1} tries: {exc}") from None
            await asyncio.sleep(policy.delay(attempt, exc.retry_after))
            attempt += 1
