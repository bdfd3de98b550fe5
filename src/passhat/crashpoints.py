"""Test-only crash points: the moments where a killed passhat must leave nothing lost and nothing torn.

``PASSHAT_TEST_CRASH_AT=<window>:<n>`` makes the process kill itself with SIGKILL the n-th time it
reaches ``<window>`` (n defaults to 1), so a test can stop a run exactly there instead of guessing
with sleeps. Unset — always, outside the crash-window tests — a crash point is one dictionary lookup.

Windows:
    store_create   the results store's file is claimed, its schema and configuration not yet written
    trial_stored   a trial and its audit entries are committed, not yet mirrored to audit.jsonl (audit guard on)
    audit_append   half of an append to audit.jsonl is written (``before`` writes that half)
    report_write   half of a report's temporary file is written (``before`` writes that half)
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

CrashWindow = Literal["store_create", "trial_stored", "audit_append", "report_write"]
CRASH_VARIABLE = "PASSHAT_TEST_CRASH_AT"
_reached: Counter[str] = Counter()


def crash_point(window: CrashWindow, before: Callable[[], Any] | None = None) -> None:
    """Kill this process here when the test variable names this window and its count is reached;
    ``before`` runs first (e.g. to leave a half-written file behind, as a kill mid-write would)."""
    spec = os.environ.get(CRASH_VARIABLE)
    if not spec:
        return
    name, _, count = spec.partition(":")
    if name != window:
        return
    _reached[window] += 1
    if _reached[window] == int(count or 1):
        if before is not None:
            before()
        os.kill(os.getpid(), signal.SIGKILL)
