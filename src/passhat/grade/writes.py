"""Pairing the writes a trial made with the task's ground-truth writes, to say *how* they differ."""

from __future__ import annotations

import dataclasses
from typing import Any

from passhat.dialogue.values import canonical
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
    """A call as the backend would store it: free text left out, each argument of a declared kind canonical
    ("413-555-0108" and "4135550108" are one phone number), so the same write said two ways is one write."""
    spec = tools.get(call.tool)
    if spec is None:
        return call.tool, dict(call.args)
    return call.tool, {k: _stored(spec, k, v) for k, v in call.args.items() if k not in spec.meta.free_text}


def _stored(spec: ToolSpec, name: str, value: Any) -> Any:
    kind = spec.meta.kinds.get(name)
    return value if kind is None else canonical(kind, value)


def target_of(call: WriteCall, tools: dict[str, ToolSpec]) -> Any:
    """The entity the call acts on, as stored; None when its tool names no target."""
    spec = tools.get(call.tool)
    if spec is None or not spec.meta.target or spec.meta.target not in call.args:
        return None
    return _stored(spec, spec.meta.target, call.args[spec.meta.target])


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
        target = target_of(call, tools)
        near = [e for e in todo if target is not None and target_of(e, tools) == target]
        near.sort(key=lambda e: e.tool != call.tool)
        if near:
            todo.remove(near[0])
            pairing.wrong_arguments.append((call, near[0]))
        else:
            pairing.extra.append(call)
    pairing.missing = todo
    return pairing
