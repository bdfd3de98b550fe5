"""Pairing the writes a trial made with the task's ground-truth writes, to say *how* they differ."""

from __future__ import annotations

import dataclasses
from typing import Any

from passhat.domains.model import Action
from passhat.env import ToolSpec


@dataclasses.dataclass(frozen=True)
class WriteCall:
    tool: str
    args: dict[str, Any]


@dataclasses.dataclass
class WritePairing:
    matched: list[WriteCall] = dataclasses.field(default_factory=list)
    wrong_arguments: list[tuple[WriteCall, WriteCall]] = dataclasses.field(default_factory=list)  # (actual, expected)
    missing: list[WriteCall] = dataclasses.field(default_factory=list)
    extra: list[WriteCall] = dataclasses.field(default_factory=list)


def comparable(call: WriteCall, tools: dict[str, ToolSpec]) -> tuple[str, dict[str, Any]]:
    spec = tools.get(call.tool)
    skip = spec.meta.free_text if spec else ()
    return call.tool, {k: v for k, v in call.args.items() if k not in skip}


def _target(call: WriteCall, tools: dict[str, ToolSpec]) -> Any:
    spec = tools.get(call.tool)
    return call.args.get(spec.meta.target) if spec and spec.meta.target else None


def pair_writes(actual: list[WriteCall], expected: list[Action], tools: dict[str, ToolSpec]) -> WritePairing:
    """Exact matches first; then writes on the right entity with other arguments; the rest is left over."""
    pairing = WritePairing()
    todo = [WriteCall(a.tool, dict(a.args)) for a in expected]
    leftover = []
    for call in actual:
        same = next((e for e in todo if comparable(e, tools) == comparable(call, tools)), None)
        if same is None:
            leftover.append(call)
        else:
            todo.remove(same)
            pairing.matched.append(call)
    for call in leftover:
        target = _target(call, tools)
        near = [e for e in todo if target is not None and _target(e, tools) == target]
        near.sort(key=lambda e: e.tool != call.tool)
        if near:
            todo.remove(near[0])
            pairing.wrong_arguments.append((call, near[0]))
        else:
            pairing.extra.append(call)
    pairing.missing = todo
    return pairing
