"""The trajectory grader's test of required orderings: a call that needs another one first came after it.

A task's ``order`` says, for instance, that a change may only be applied once its approval was requested.
Only calls that really took effect count, on either side: a refused or failed approval request is no
approval, and a refused change did nothing. Calls an operator completed through the human gate count too,
at the point they were completed.
"""

from __future__ import annotations

from typing import Any

from passhat.domains.model import Ordering
from passhat.trajectory import Event


def out_of_order(events: list[Event], order: list[Ordering]) -> list[dict[str, Any]]:
    """Each call that took effect matching an ordering's ``after`` with no earlier one matching its ``before``."""
    done = [e for e in events if e.kind in ("tool", "guard") and e.took_effect]
    found = []
    for ordering in order:
        for i, e in enumerate(done):
            if ordering.after.matches(e.name, e.args) and not any(ordering.before.matches(x.name, x.args) for x in done[:i]):
                found.append({"tool": e.name, "args": e.args, "needs_first": ordering.before.model_dump()})
    return found
