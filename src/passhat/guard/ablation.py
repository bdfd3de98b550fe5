"""The configurations of a guard ablation: no guards, each guard alone, all but each, and all of them.

A set of guards reached under two names (with two guards, all but one is the other alone; with one, all is
that one alone) is one configuration under both names, so it runs once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from passhat.errors import UserError
from passhat.guard.gateway import GUARDS
from passhat.guard.options import parse_guards

BASELINE = "off"


@dataclasses.dataclass(frozen=True)
class Configuration:
    """One set of guards under every name it is reached by; the first name is its own (its run's)."""

    names: tuple[str, ...]
    guards: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.names[0]

    def run_id(self, ablation_id: str) -> str:
        """The name of this configuration's run in an ablation."""
        return f"{ablation_id}-{self.name}"


def configurations(guards: Sequence[str]) -> list[Configuration]:
    """off, only-<guard> for each, without-<guard> for each, all: in that order, each set of guards once."""
    named = [
        (BASELINE, ()),
        *((f"only-{g}", (g,)) for g in guards),
        *((f"without-{g}", tuple(other for other in guards if other != g)) for g in guards),
        ("all", tuple(guards)),
    ]
    merged: dict[tuple[str, ...], list[str]] = {}
    for name, subset in named:
        merged.setdefault(subset, []).append(name)
    return [Configuration(tuple(names), subset) for subset, names in merged.items()]


def ablated_guards(spec: str) -> list[str]:
    """``--guards``: all, or a comma list of guards, in the gateway's order; at least one."""
    try:
        guards = parse_guards(spec)
    except UserError:
        guards = None
    if not guards:
        raise UserError(
            f"--guards {spec!r} names no guard to ablate: give all, or a comma list of one or more of {', '.join(GUARDS)}."
        )
    return guards
